"""Open the memory store from ``memory:`` config: Redis (embedded or remote), backend
choice, embedder, recorded-settings check. The one memory composition: the gateway
(:func:`gateway.app.compose`), workers, the CLI and the tests all go through
:func:`open_redis` + :func:`open_store` (or :func:`open_memory`, which is both).

Backend ``auto``: the backend the store recorded when the server still
offers it (a server that gains the Query Engine keeps serving a vectorset store instead
of refusing to start until a re-embed), else ``search`` when the server
has the Query Engine (``FT._LIST`` answers), else ``vectorset`` when ``COMMAND INFO VADD``
knows the command, else :class:`BackendUnavailable`. On Redis Cluster (``memory.cluster``)
``auto`` is ``vectorset`` and ``search`` is refused: the search index is per node and
queries are not routed to the tenant's shard (not built).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, cast

import numpy as np
import redis.asyncio as aredis
import redis.exceptions

from gateway.memory.backend import IndexBackend
from gateway.memory.cluster import is_cluster
from gateway.memory.config import MemoryConfig
from gateway.memory.embeddings import CachedEmbedder, Embedder, load_embedder, model_identity, resolve_provider
from gateway.memory.keys import KeySpace
from gateway.memory.meta import REEMBED_COMMAND, StoreMismatch, StoreSettings, check_settings
from gateway.memory.redis_errors import redis_boundary
from gateway.memory.repository import RecordRepository
from gateway.memory.tenant_store import TenantMemoryStore
from gateway.memory.vectorset import VectorSetBackend
from gateway.runtime.redis_server import EmbeddedRedis

__all__ = ['BackendUnavailable', 'LazyEmbedder', 'choose_backend', 'cluster_client', 'embedded_redis', 'has_query_engine', 'has_vector_sets', 'is_cluster', 'make_backend', 'open_memory', 'open_redis', 'open_store', 'redis_client']


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


async def choose_backend(client: aredis.Redis, wanted: str, recorded: str | None = None) -> str:
    """``wanted`` resolved against what the server offers; for ``auto``, ``recorded`` (the
    backend the store was built with, if any) first (module docstring).

    Raises:
        BackendUnavailable: the wanted (or, for auto, any) backend is missing, saying why.
    """
    if is_cluster(client):
        # The search backend keeps one index per key prefix on the node it is created on;
        # on a cluster each primary would need its own index and every query routing to
        # the node of the tenant's slot, which is not built: refuse it
        # rather than search one node's records only.
        if wanted == "search":
            raise BackendUnavailable(
                "memory.backend=search is not supported with memory.cluster: true (its index is per "
                "node and queries are not routed to the tenant's shard yet); use memory.backend: vectorset or auto"
            )
        wanted = "vectorset" if wanted == "auto" else wanted
    if wanted == "auto" and recorded in ("search", "vectorset"):
        probe = has_query_engine if recorded == "search" else has_vector_sets
        if await probe(client):
            return recorded
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
    """The one Redis client factory (gateway, workers, CLI, tests): bytes replies (records
    decode themselves), short socket timeouts (fail fast, fail open), a health check on
    connections idle for 30 s, and a blocking pool of ``memory.max_connections`` (a caller
    waits for a free connection up to the socket timeout instead of failing at once).

    With ``memory.cluster``: a :class:`redis.asyncio.cluster.RedisCluster` of
    the seed nodes in ``url`` (comma-separated ``redis://host:port``; credentials and TLS
    from the first), same timeouts and health check, up to ``memory.max_connections``
    connections per node (redis-py's cluster pool does not block: past it a command
    raises ``MaxConnectionsError``, which the store's callers treat as Redis unavailable).
    It is typed as :class:`redis.asyncio.Redis`: the store uses only commands both offer."""
    timeout = config.socket_timeout_s
    if config.cluster:
        return cluster_client(url, config)
    pool = aredis.BlockingConnectionPool.from_url(
        url, max_connections=config.max_connections, timeout=timeout,
        socket_timeout=timeout, socket_connect_timeout=timeout, health_check_interval=30,
    )
    return aredis.Redis.from_pool(pool)  # the client owns (and closes) its pool


def cluster_client(urls: str, config: MemoryConfig) -> aredis.Redis:
    """See :func:`redis_client` (cluster mode)."""
    from redis.asyncio.cluster import ClusterNode, RedisCluster
    from redis.connection import parse_url

    seeds = [parse_url(u.strip()) for u in urls.split(",") if u.strip()]
    options = {k: v for k, v in seeds[0].items() if k not in ("host", "port", "db")}
    timeout = config.socket_timeout_s
    client = _failover_safe(RedisCluster)(
        startup_nodes=[ClusterNode(s["host"], s.get("port", 6379)) for s in seeds],
        max_connections=config.max_connections, socket_timeout=timeout,
        socket_connect_timeout=timeout, health_check_interval=30, **options,
    )
    return cast(aredis.Redis, client)  # same command surface for what the store uses


def _failover_safe(base: Any) -> Any:
    """redis-py's async ``RedisCluster`` made safe across topology changes (found by
    ``python -m bench failover``; redis-py 7.4).

    1. Its topology refresh does not fetch ``COMMAND`` again once it has it. After a
       command fails on a dead primary, the next command of *any* caller refreshes the
       topology and then loads the command table from the default node; while the dead
       primary still holds its slots (until its replica is promoted) that node may be the
       dead one, and the failure closes every node's connections: commands of users on
       healthy nodes failed with ConnectionError (or ``AttributeError`` on a connection
       closed under them) and opened their breakers. The command table is static for a
       server version, so it is loaded once; the slot table is refreshed as before.
    2. One node object per node. A refresh builds new node objects; redis-py keeps the
       old ones in its node cache but puts the new ones in its slot table, so commands
       opened connections on objects that the next refresh dropped with the connections
       still open ("Unclosed ClusterNode object" at garbage collection, and sockets held
       until then). After each refresh the slot table points at the cached objects.
    3. Nothing is left open. Nodes that leave the topology (a killed primary) are
       disconnected once none of their connections is in use (at the next refresh), and
       :meth:`aclose` disconnects every node it still knows of, also when redis-py's own
       ``aclose`` skips (it closes nothing while a refresh is pending)."""

    class FailoverSafeCluster(base):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            #: Nodes that left the topology while some of their connections were in use.
            self.retired_nodes: list[Any] = []

        async def initialize(self, **refresh: Any) -> Any:
            """redis-py 7's ``RedisCluster.initialize`` without the ``COMMAND`` fetch once
            the command table is loaded (``refresh``: whatever a later redis-py passes on
            to its nodes manager); then one object per node (class docstring)."""
            state: Any = self  # redis-py's private fields, as its own initialize uses them
            manager = state.nodes_manager
            before = dict(manager.nodes_cache)
            if not (state._initialize and state.commands_parser.commands):
                result = await super().initialize(**refresh)
                await self._settle_nodes(before)
                return result
            if not state._lock:
                state._lock = asyncio.Lock()
            async with state._lock:
                if state._initialize:
                    await manager.initialize(**refresh)
                    state._initialize = False
                    await self._settle_nodes(before)
            return self

        async def _settle_nodes(self, before: dict[str, Any]) -> None:
            """Point the slot table at the cached node objects; disconnect the nodes that
            left the topology once their connections are all idle."""
            manager: Any = self.nodes_manager
            cache = manager.nodes_cache
            manager.slots_cache = {
                slot: [cache.get(node.name, node) for node in nodes] for slot, nodes in manager.slots_cache.items()
            }
            self.retired_nodes += [node for name, node in before.items() if name not in cache]
            idle: list[Any] = []
            busy: list[Any] = []
            for node in self.retired_nodes:
                (idle if len(node._free) == len(node._connections) else busy).append(node)
            self.retired_nodes = busy
            await asyncio.gather(*(node.disconnect() for node in idle), return_exceptions=True)

        async def aclose(self) -> None:
            """redis-py's ``aclose``, then every node still known (cached, startup, slot
            table, retired) disconnected."""
            await super().aclose()
            manager: Any = self.nodes_manager
            slot_nodes = [node for nodes in manager.slots_cache.values() for node in nodes]
            nodes = {id(node): node for node in [*manager.nodes_cache.values(), *manager.startup_nodes.values(),
                                                  *slot_nodes, *self.retired_nodes]}
            self.retired_nodes = []
            await asyncio.gather(*(node.disconnect() for node in nodes.values()), return_exceptions=True)

    return FailoverSafeCluster


@asynccontextmanager
async def embedded_redis(config: MemoryConfig) -> AsyncIterator[str]:
    """The redis-server of ``data_dir/redis`` (off the event loop): started and stopped
    on exit, or the running one of the data dir's owner reused (:meth:`EmbeddedRedis.open`),
    with the watchdog that restarts it (or takes it over from a departed owner) meanwhile;
    after 5 failed restarts in 60 s the process exits with status 1."""
    server = EmbeddedRedis(config.data_dir / "redis", supervise=True)
    url = await asyncio.to_thread(server.open)
    try:
        yield url
    finally:
        await asyncio.to_thread(server.stop)


class LazyEmbedder:
    """An :class:`Embedder` that loads the real one on its first ``embed_many`` call, so
    commands that never embed (``memgate memories list|delete|export|forget``) never load
    the model (seconds of start-up and hundreds of MB for the local one).

    ``model`` and ``dimensions`` are known without loading: the configured model name and
    the size the store recorded for it (or ``memory.embedding.dimensions``). The loaded
    embedder must agree with them.

    Raises (from ``embed_many``):
        gateway.memory.meta.StoreMismatch: the loaded model makes vectors of another size
            than the store recorded.
    """

    def __init__(self, load: Callable[[], Awaitable[Embedder]], model: str, dimensions: int) -> None:
        self.model = model
        self.dimensions = dimensions
        self._load = load
        self._inner: Embedder | None = None
        self._lock = asyncio.Lock()
        self.loads = 0  # how many times the real embedder was loaded (0 or 1)

    async def _embedder(self) -> Embedder:
        async with self._lock:
            if self._inner is None:
                inner = await self._load()
                self.loads += 1
                if (inner.model, inner.dimensions) != (self.model, self.dimensions):
                    await inner.aclose()
                    raise StoreMismatch(
                        f"embedding model {inner.model!r} makes {inner.dimensions}-dim vectors; the "
                        f"store holds {self.dimensions}-dim vectors of {self.model!r}. Run "
                        f"`{REEMBED_COMMAND}`."
                    )
                self._inner = inner
            return self._inner

    @property
    def batch_max(self) -> int | None:
        """The loaded embedder's ``batch_max`` (None before the first call or without one)."""
        return getattr(self._inner, "batch_max", None)

    def submit_if_idle(self, texts: Sequence[str]) -> asyncio.Future[np.ndarray] | None:
        """The loaded embedder's ``submit_if_idle`` (None before the first call or without
        one: nothing queued)."""
        submit = getattr(self._inner, "submit_if_idle", None)
        return submit(texts) if submit is not None else None

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """See :class:`~gateway.memory.embeddings.base.Embedder` (loads on first call)."""
        return await (await self._embedder()).embed_many(texts)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


async def _lazy_embedder(
    client: aredis.Redis, keys: KeySpace, config: MemoryConfig, load: Callable[[], Awaitable[Embedder]]
) -> LazyEmbedder | None:
    """A :class:`LazyEmbedder` when the vector size is known without loading the model
    (``memory.embedding.dimensions``, or the size the store recorded for the configured
    model), else None (a new store: the model decides the size)."""
    model = model_identity(config.embedding.provider, config.embedding.model_name)
    dimensions = config.embedding.dimensions
    if dimensions is None:
        with redis_boundary():
            recorded = StoreSettings.from_hash(await client.hgetall(keys.meta))
        if recorded is not None and recorded.embedding_model == model:
            dimensions = recorded.embedding_dims
    return None if dimensions is None else LazyEmbedder(load, model, dimensions)


@asynccontextmanager
async def open_store(
    client: aredis.Redis,
    config: MemoryConfig,
    *,
    upstream_base_url: str | None = None,
    upstream_api_key: str | None = None,
    embedder: Embedder | None = None,
    check_model: bool = True,
    lazy_embedder: bool = False,
) -> AsyncIterator[TenantMemoryStore]:
    """Yield a ready store on ``client`` (the caller owns the client); on exit close the
    embedder this function loaded.

    Args:
        upstream_base_url, upstream_api_key: the gateway's upstream, used by the openai
            embedding provider when ``memory.embedding.base_url`` / ``api_key`` are None.
        embedder: a ready embedder to use instead of loading one (tests, benchmarks);
            the caller keeps ownership. It is still wrapped in the Redis vector cache.
            Otherwise ``memory.embedding.provider`` is loaded behind the micro-batcher;
            ``auto`` keeps the provider the store recorded, by ``language`` for a new store (``script`` by default)
            (:func:`gateway.memory.embeddings.resolve_provider`).
        check_model: False only for ``memgate memories reembed``, which fixes a mismatch.
        lazy_embedder: load the model only when something is embedded
            (:class:`LazyEmbedder`; CLI commands that may not embed). Ignored when
            ``embedder`` is given or the store is new.

    Raises:
        BackendUnavailable: see :func:`choose_backend`.
        gateway.memory.meta.StoreMismatch: the store was built with another model, size
            or backend; the message names ``memgate memories reembed``.
        gateway.runtime.errors.MemoryUnavailable: Redis is unreachable.
    """
    async with AsyncExitStack() as stack:
        keys = KeySpace(config.key_prefix)
        with redis_boundary():
            recorded = StoreSettings.from_hash(await client.hgetall(keys.meta))
            chosen = await choose_backend(client, config.backend, recorded.backend if recorded else None)
            backend = make_backend(chosen, client, keys, config)
        if embedder is None:
            embedding = config.embedding
            if embedding.provider == "auto":
                provider = resolve_provider(embedding, recorded.embedding_model if recorded else None)
                embedding = embedding.model_copy(update={"provider": provider})
            resolved = config.model_copy(update={"embedding": embedding})

            async def load() -> Embedder:
                return await load_embedder(embedding, upstream_base_url, upstream_api_key)

            lazy = await _lazy_embedder(client, keys, resolved, load) if lazy_embedder else None
            embedder = lazy if lazy is not None else await load()
            stack.push_async_callback(embedder.aclose)
        with redis_boundary():
            if check_model:
                settings = StoreSettings(embedder.model, embedder.dimensions, backend.name, backend.index_version)
                await check_settings(client, keys, settings)
            await backend.prepare(embedder.dimensions)
        cached = CachedEmbedder(embedder, client, keys, config.embedding.cache_ttl_s)
        stack.push_async_callback(cached.close)  # its cache write-backs land before the client closes
        yield TenantMemoryStore(RecordRepository(client, keys, backend), cached, config)


@asynccontextmanager
async def open_redis(config: MemoryConfig) -> AsyncIterator[aredis.Redis]:
    """A client of ``memory.redis_url``, or of the embedded redis-server started under
    ``memory.data_dir`` when the URL is empty; both closed on exit."""
    async with AsyncExitStack() as stack:
        url = config.redis_url or await stack.enter_async_context(embedded_redis(config))
        assert url is not None
        client = redis_client(url, config)
        stack.push_async_callback(client.aclose)
        yield client


@asynccontextmanager
async def open_memory(config: MemoryConfig, **store_options: Any) -> AsyncIterator[TenantMemoryStore]:
    """:func:`open_store` plus the Redis it needs: the embedded redis-server when
    ``memory.redis_url`` is None, and a client of its own; all closed on exit.
    ``store_options``: the keyword arguments of :func:`open_store`."""
    async with open_redis(config) as client, open_store(client, config, **store_options) as store:
        yield store
