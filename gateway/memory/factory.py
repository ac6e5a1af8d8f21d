"""Open the memory store from ``memory:`` config: Redis (embedded or remote), backend
choice, embedder, recorded-settings check. :func:`open_memory` owns every lifetime.

Backend ``auto`` (issue 3, item 4): ``search`` when the server has the Query Engine
(``FT._LIST`` answers), else ``vectorset`` when ``COMMAND INFO VADD`` knows the command,
else :class:`BackendUnavailable`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import redis.asyncio as aredis
import redis.exceptions

from gateway.memory.backend import IndexBackend
from gateway.memory.config import MemoryConfig
from gateway.memory.embeddings import CachedEmbedder, Embedder, load_embedder, resolve_provider
from gateway.memory.keys import KeySpace
from gateway.memory.meta import StoreSettings, check_settings
from gateway.memory.redis_errors import redis_boundary
from gateway.memory.repository import RecordRepository
from gateway.memory.tenant_store import TenantMemoryStore
from gateway.memory.vectorset import VectorSetBackend
from gateway.redis_server import EmbeddedRedis


class BackendUnavailable(RuntimeError):
    """The Redis server offers neither the Query Engine nor vector sets."""


async def has_query_engine(client: aredis.Redis) -> bool:
    """True when ``FT._LIST`` answers (RediSearch / Redis Query Engine loaded)."""
    try:
        await client.execute_command("FT._LIST")
        return True
    except redis.exceptions.ResponseError:
        return False


async def has_vector_sets(client: aredis.Redis) -> bool:
    """True when ``COMMAND INFO VADD`` describes the command (Redis >= 8.0)."""
    info = await client.execute_command("COMMAND", "INFO", "VADD")
    return bool(info) and any(v for v in (info.values() if isinstance(info, dict) else info))


async def choose_backend(client: aredis.Redis, wanted: str) -> str:
    """``wanted`` resolved against what the server offers.

    Raises:
        BackendUnavailable: the wanted (or, for auto, any) backend is missing, saying why.
    """
    search_ok = wanted in ("auto", "search") and await has_query_engine(client)
    if search_ok:
        return "search"
    if wanted in ("auto", "vectorset") and await has_vector_sets(client):
        return "vectorset"
    raise BackendUnavailable(
        f"memory.backend={wanted}: the Redis server has "
        + ("no Query Engine (FT.* commands)" if wanted == "search" else "neither the Query Engine nor vector sets (VADD)")
        + ". Use Redis >= 8.0 (vector sets) or Redis Stack / Redis 8 with the Query Engine."
    )


def make_backend(name: str, client: aredis.Redis, keys: KeySpace, config: MemoryConfig) -> IndexBackend:
    if name == "search":
        from gateway.memory.search import SearchBackend  # needs redisvl

        return SearchBackend(client, keys)
    return VectorSetBackend(client, keys, config.quantization, config.search_ef, config.vsim_nothread)


def redis_client(url: str, config: MemoryConfig) -> aredis.Redis:
    """Async client (bytes replies; records decode themselves)."""
    timeout = config.socket_timeout_seconds
    return aredis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)


@asynccontextmanager
async def embedded_redis(config: MemoryConfig) -> AsyncIterator[str]:
    """Start a redis-server under ``data_dir/redis`` (off the event loop); stop on exit."""
    server = EmbeddedRedis(config.data_dir / "redis")
    url = await asyncio.to_thread(server.start)
    try:
        yield url
    finally:
        await asyncio.to_thread(server.stop)


@asynccontextmanager
async def open_store(
    client: aredis.Redis,
    config: MemoryConfig,
    *,
    upstream_base_url: str | None = None,
    upstream_api_key: str | None = None,
    embedder: Embedder | None = None,
    check_model: bool = True,
) -> AsyncIterator[TenantMemoryStore]:
    """Yield a ready store on ``client`` (the caller owns the client); on exit close the
    embedder this function loaded.

    Args:
        upstream_base_url, upstream_api_key: the gateway's upstream, used by the openai
            embedding provider when ``memory.embedding.base_url`` / ``api_key`` are None.
        embedder: a ready embedder to use instead of loading one (tests, benchmarks);
            the caller keeps ownership. It is still wrapped in the Redis vector cache.
            Otherwise ``memory.embedding.provider`` is loaded behind the micro-batcher;
            ``auto`` keeps the provider the store recorded, onnx for a new store
            (:func:`gateway.memory.embeddings.resolve_provider`).
        check_model: False only for ``memgate memories reembed``, which fixes a mismatch.

    Raises:
        BackendUnavailable: see :func:`choose_backend`.
        gateway.memory.meta.StoreMismatch: the store was built with another model, size
            or backend; the message names ``memgate memories reembed``.
        gateway.errors.MemoryUnavailable: Redis is unreachable.
    """
    async with AsyncExitStack() as stack:
        keys = KeySpace(config.key_prefix)
        with redis_boundary():
            backend = make_backend(await choose_backend(client, config.backend), client, keys, config)
        if embedder is None:
            embedding = config.embedding
            if embedding.provider == "auto":
                with redis_boundary():
                    recorded = StoreSettings.from_hash(await client.hgetall(keys.meta))
                provider = resolve_provider(embedding, recorded.embedding_model if recorded else None)
                embedding = embedding.model_copy(update={"provider": provider})
            embedder = await load_embedder(embedding, upstream_base_url, upstream_api_key)
            stack.push_async_callback(embedder.aclose)
        with redis_boundary():
            if check_model:
                settings = StoreSettings(embedder.model, embedder.dimensions, backend.name, backend.index_version)
                await check_settings(client, keys, settings)
            await backend.prepare(embedder.dimensions)
        cached = CachedEmbedder(embedder, client, keys, config.embedding.cache_ttl_seconds)
        yield TenantMemoryStore(RecordRepository(client, keys, backend), cached, config)


@asynccontextmanager
async def open_memory(config: MemoryConfig, **store_options: Any) -> AsyncIterator[TenantMemoryStore]:
    """:func:`open_store` plus the Redis it needs: the embedded redis-server when
    ``memory.redis_url`` is None, and a client of its own; all closed on exit.
    ``store_options``: the keyword arguments of :func:`open_store`."""
    async with AsyncExitStack() as stack:
        url = config.redis_url or await stack.enter_async_context(embedded_redis(config))
        client = redis_client(url, config)
        stack.push_async_callback(client.aclose)
        yield await stack.enter_async_context(open_store(client, config, **store_options))
