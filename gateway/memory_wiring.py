"""Connects the gateway to Redis and the memory store (``memory:`` section).

When ``memory.redis_url`` is not set, an embedded ``redis-server`` (>= 8.0) is started
under ``memory.data_dir`` for the gateway's lifetime (issue 3, "Embedded default").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from litestar.openapi import OpenAPIConfig

from gateway.config import UpstreamConfig
from gateway.memory.config import MemoryConfig
from gateway.redis_server import EmbeddedRedis

if TYPE_CHECKING:
    from gateway.app import Gateway


def redis_client(url: str, config: MemoryConfig) -> aioredis.Redis:
    """An async Redis client with short socket timeouts (fail fast, fail open)."""
    timeout = config.socket_timeout_seconds
    return aioredis.from_url(
        url, socket_connect_timeout=timeout, socket_timeout=timeout, health_check_interval=30
    )


class MemoryWiring:
    """Redis and memory-store lifetimes for one gateway."""

    def __init__(self, config: MemoryConfig) -> None:
        self.config = config
        self.embedded: EmbeddedRedis | None = None

    @contextlib.asynccontextmanager
    async def redis(self) -> AsyncIterator[aioredis.Redis]:
        url = self.config.redis_url or None  # "" from an unset ${VAR:-} means embedded
        if url is None:
            self.embedded = EmbeddedRedis(self.config.data_dir / "redis")
            url = await asyncio.to_thread(self.embedded.start)
        client = redis_client(url, self.config)
        try:
            yield client
        finally:
            await client.aclose()
            if self.embedded is not None:
                await asyncio.to_thread(self.embedded.stop)
                self.embedded = None

    @contextlib.asynccontextmanager
    async def store(
        self, redis: aioredis.Redis, upstream: UpstreamConfig, embedder: Any = None
    ) -> AsyncIterator[Any]:
        """The memory store on ``redis``; loads the embedding model unless ``embedder`` is
        given (tests share one). Raises StoreMismatch naming ``memgate memories reembed``
        when the store was built with another embedding model."""
        from gateway.memory.factory import open_store

        async with open_store(
            redis, self.config, upstream_base_url=upstream.base_url,
            upstream_api_key=upstream.api_key, embedder=embedder,
        ) as store:
            yield store

    def route_handlers(self, gateway: "Gateway") -> list[Any]:
        from gateway.memory_api import memory_routes

        return memory_routes(gateway)

    def openapi_config(self) -> OpenAPIConfig:
        return OpenAPIConfig(title="memgate", version="0.1.0", path="/openapi")
