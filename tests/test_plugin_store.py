"""A plugin's key/value and stream space (:meth:`gateway.chain.sdk.Services.store`) on the
real Redis: every key under ``<key prefix>:plugin:<plugin>:``, nothing else touched."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as aioredis

from gateway.chain.sdk import plugin_key
from gateway.chain.services import PluginServices


@pytest.fixture
async def client(redis_url: str):
    client = aioredis.Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_keys_and_streams_live_under_the_prefix_and_the_plugins_name(client) -> None:
    prefix = "t" + uuid.uuid4().hex[:10]
    mine = PluginServices(redis=client, key_prefix=prefix).store("alpha")
    other = PluginServices(redis=client, key_prefix=prefix).store("beta")

    await mine.set("count", "1", ttl_s=60)
    assert await mine.get("count") == b"1"
    assert await other.get("count") is None
    assert await client.get(f"{prefix}:plugin:alpha:count") == b"1"
    assert 0 < await client.ttl(f"{prefix}:plugin:alpha:count") <= 60

    ids = [await mine.stream_add("log", {"record": f"r{i}"}, max_len=1000) for i in range(5)]
    assert await mine.stream_length("log") == 5
    assert await other.stream_length("log") == 0
    first = await mine.stream_range("log", count=2)
    assert first == [(ids[0], {"record": "r0"}), (ids[1], {"record": "r1"})]
    rest = await mine.stream_range("log", after=first[-1][0], count=10)
    assert [fields["record"] for _, fields in rest] == ["r2", "r3", "r4"]
    assert await mine.stream_range("log", after=rest[-1][0]) == []
    assert await mine.stream_delete("log", [ids[0], ids[4]]) == 2
    assert [f["record"] for _, f in await mine.stream_range("log")] == ["r1", "r2", "r3"]

    keys = sorted([k.decode() async for k in client.scan_iter(match=f"{prefix}*")])
    assert keys == [f"{prefix}:plugin:alpha:count", f"{prefix}:plugin:alpha:log"]
    assert await mine.delete("count", "log", "absent") == 2
    assert [k async for k in client.scan_iter(match=f"{prefix}*")] == []


async def test_a_key_cannot_leave_the_plugins_space() -> None:
    assert plugin_key("mg", "alpha", "a:b") == "mg:plugin:alpha:a%3Ab"
    assert plugin_key("mg", "alpha", "{u}*") == "mg:plugin:alpha:%7Bu%7D%2A"
    with pytest.raises(ValueError):
        plugin_key("mg", "alpha", "")


def test_without_redis_a_plugin_store_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="needs Redis"):
        PluginServices().store("alpha")


def test_plugins_get_no_raw_redis_client() -> None:
    services = PluginServices(redis=object(), key_prefix="mg")  # type: ignore[arg-type]
    assert not hasattr(services, "redis")
