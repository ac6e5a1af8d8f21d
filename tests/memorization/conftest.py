"""Memorization fixtures: a fresh queue prefix per test, a store on the session's real
Redis (the gateway's key prefix when a gateway is started), the upstream double playing
the memory model, and workers run on the test's event loop.

A module with ``REDIS_MODES = ["single", "cluster"]`` (tests/conftest.py) runs its tests
on the single node and on the local Redis Cluster: ``env.redis`` is then the cluster
client of :func:`gateway.memory.factory.redis_client` and the queue has 3 shards."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis.asyncio as aredis

from gateway.memorization.config import MemorizeConfig
from gateway.memorization.disclosure import analyse
from gateway.memorization.runtime import queue_for, run_workers, wait_drained
from gateway.memory.config import MemoryConfig
from gateway.memory.factory import open_store, redis_client
from gateway.proxy.model_client import ModelClient, ModelConfig
from plugins.memorize import MemorizePlugin
from tests.memorization.memory_model import MemoryModel

REGISTRY = {"memorize": MemorizePlugin}


def memorize_config(mode: str = "extract", **fields: Any) -> MemorizeConfig:
    """A fresh queue prefix, 3 queue shards (the sharded path on one node too) and quick
    worker timings; ``fields`` override sections."""
    base: dict[str, Any] = {
        "mode": mode,
        "queue": {"key_prefix": "q" + uuid.uuid4().hex[:10], "shards": 3},
        "worker": {"block_ms": 50, "claim_every_s": 0.05, "backoff_base_s": 0.01, "backoff_max_s": 0.05},
    }
    for key, value in fields.items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    return MemorizeConfig.model_validate(base)


def user_stream(queue: Any, user_id: str = "alice") -> str:
    """The job stream of ``user_id``'s queue shard."""
    return queue.keys.stream(queue.keys.shard_of(user_id))


@dataclass
class Env:
    redis: aredis.Redis
    redis_url: str
    cluster: bool
    shared_model: Any
    upstream: Any
    model_double: MemoryModel
    stores: list

    async def store(self, key_prefix: str) -> Any:
        cm = open_store(self.redis, MemoryConfig(redis_url=self.redis_url, cluster=self.cluster, key_prefix=key_prefix),
                        embedder=self.shared_model.for_gateway())
        store = await cm.__aenter__()
        self.stores.append(cm)
        return store

    def model_client(self, config: MemorizeConfig | None = None) -> ModelClient:
        """A client of the double; with ``config``, that config's model settings."""
        fields = config.model.model_dump() if config is not None else {}
        fields.update(base_url=self.upstream.url + "/v1", api_key="sk-mm", timeout_s=30)
        return ModelClient(ModelConfig.model_validate(fields), None)

    async def drain_with(self, config: MemorizeConfig, store: Any, n: int = 1, timeout_s: float = 60) -> None:
        """:meth:`drain` with a model client built from ``config.model`` (max_tokens, ...)."""
        client = self.model_client(config)
        try:
            async with run_workers(config, self.redis, store, n=n, model=client, stop_grace_s=5):
                await wait_drained(queue_for(config, self.redis), timeout_s)
        finally:
            await client.aclose()

    async def drain(self, config: MemorizeConfig, store: Any, n: int = 1, timeout_s: float = 60) -> None:
        client = self.model_client()
        try:
            async with run_workers(config, self.redis, store, n=n, model=client, stop_grace_s=5):
                await wait_drained(queue_for(config, self.redis), timeout_s)
        finally:
            await client.aclose()


@pytest.fixture
async def env(mode_redis: tuple[str, bool], shared_model: Any, upstream: Any) -> AsyncIterator[Env]:
    await asyncio.to_thread(shared_model.get)  # loads once, off this loop (it uses asyncio.run)
    redis_url, cluster = mode_redis
    client = redis_client(redis_url, MemoryConfig(redis_url=redis_url, cluster=True)) if cluster else aredis.Redis.from_url(redis_url)
    model = MemoryModel()
    upstream.default = model
    e = Env(client, redis_url, cluster, shared_model, upstream, model, [])
    try:
        yield e
    finally:
        for cm in reversed(e.stores):
            await cm.__aexit__(None, None, None)
        await client.aclose()


def count_embed_many(store: Any) -> list[int]:
    """Wrap ``store.embedder.embed_many`` to count its calls; returns the counter, a
    one-item list (``calls[0]``) read after the work."""
    calls = [0]
    embed_many = store.embedder.embed_many

    async def counting(batch: Any) -> Any:
        calls[0] += 1
        return await embed_many(batch)

    store.embedder.embed_many = counting
    return calls


def kept_texts(text: str) -> list[str]:
    """The texts of the memories the disclosure rules form from one user turn ``text``."""
    return [m.text for m in analyse(text).memories]
