"""A plugin's own keys and streams in the gateway's Redis (:class:`gateway.chain.sdk.PluginStore`).

Every key a plugin names lives at ``<memory.key_prefix>:plugin:<plugin name>:<key>``
(:func:`plugin_key`); the plugin's part is percent-encoded
(:func:`gateway.memory.keys.escape_key_part`), so a plugin cannot reach a key outside its
own space, nor another plugin's, nor the core's (no core key has ``plugin`` as its second
segment). Stream field values are text (UTF-8).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gateway.memory.keys import escape_key_part

if TYPE_CHECKING:
    import redis.asyncio as aioredis

__all__ = ["RedisPluginStore", "open_plugin_store", "plugin_key"]


def plugin_key(key_prefix: str, plugin: str, key: str) -> str:
    """The Redis key of ``plugin``'s ``key``: ``<key_prefix>:plugin:<plugin>:<key>``, both
    parts escaped (``("mg", "context_selection", "context_usage")`` ->
    ``mg:plugin:context_selection:context_usage``).

    Raises:
        ValueError: ``key`` or ``plugin`` is empty.
    """
    if not key or not plugin:
        raise ValueError("a plugin key needs a plugin name and a non-empty key")
    return f"{key_prefix}:plugin:{escape_key_part(plugin)}:{escape_key_part(key)}"


@contextlib.asynccontextmanager
async def open_plugin_store(redis_url: str, key_prefix: str, plugin: str) -> AsyncIterator[RedisPluginStore]:
    """``plugin``'s keys and streams in the Redis at ``redis_url`` (``redis://...``), for an
    operator's tool run outside the gateway (the same ``memory.redis_url`` and
    ``memory.key_prefix``); the connection is closed on exit."""
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url)
    try:
        yield RedisPluginStore(client, key_prefix, plugin)
    finally:
        await client.aclose()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisPluginStore:
    """:class:`gateway.chain.sdk.PluginStore` on the gateway's async Redis client."""

    def __init__(self, redis: aioredis.Redis, key_prefix: str, plugin: str) -> None:
        self._redis = redis
        self._prefix = key_prefix
        self.plugin = plugin

    def key(self, key: str) -> str:
        return plugin_key(self._prefix, self.plugin, key)

    async def get(self, key: str) -> bytes | None:
        value: Any = await self._redis.get(self.key(key))
        return value

    async def set(self, key: str, value: bytes | str, ttl_s: int | None = None) -> None:
        if ttl_s is not None and ttl_s <= 0:
            raise ValueError(f"ttl_s must be positive, got {ttl_s}")
        await self._redis.set(self.key(key), value, ex=ttl_s)

    async def delete(self, *keys: str) -> int:
        if not keys:
            return 0
        return int(await self._redis.delete(*(self.key(k) for k in keys)))

    async def stream_add(self, stream: str, fields: Mapping[str, str], max_len: int | None = None) -> str:
        entry: Any = await self._redis.xadd(
            self.key(stream), dict(fields), maxlen=max_len, approximate=max_len is not None,
        )
        return _text(entry)

    async def stream_range(
        self, stream: str, after: str | None = None, count: int = 1000,
    ) -> list[tuple[str, dict[str, str]]]:
        rows: Any = await self._redis.xrange(self.key(stream), min="-" if after is None else f"({after}", count=count)
        return [(_text(entry), {_text(k): _text(v) for k, v in fields.items()}) for entry, fields in rows]

    async def stream_delete(self, stream: str, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        return int(await self._redis.xdel(self.key(stream), *ids))

    async def stream_length(self, stream: str) -> int:
        return int(await self._redis.xlen(self.key(stream)))
