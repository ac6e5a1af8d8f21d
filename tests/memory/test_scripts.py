"""The store's Lua scripts when a node does not have them cached (a restart, a replica
promoted on a cluster): ``run`` and ``execute`` load them and try again, and when the
node still answers ``NOSCRIPT`` (the load reached other nodes) they send ``EVAL`` with
the source."""

from __future__ import annotations

import uuid

import pytest
import redis.asyncio as redis_asyncio

from gateway.memory import scripts
from gateway.memory.scripts import ATOMIC


def atomic_args(key: str, value: str) -> list[object]:
    return [3, "SET", key, value]  # one command: argument count, then the command


@pytest.fixture
async def client(redis_url: str):
    c = redis_asyncio.from_url(redis_url)
    try:
        yield c
    finally:
        await c.aclose()


@pytest.mark.parametrize("loads", [True, False], ids=["load-works", "load-misses-the-node"])
async def test_run_and_execute_survive_an_empty_script_cache(client, monkeypatch, loads: bool) -> None:
    calls: list[int] = []

    async def load_nothing(c) -> None:
        calls.append(1)

    if not loads:
        monkeypatch.setattr(scripts, "_load_all", load_nothing)
    key = f"memgate-test:scripts:{uuid.uuid4().hex}"
    await client.script_flush()
    assert await scripts.run(client, ATOMIC, [key], atomic_args(key, "a")) == 1
    assert await client.get(key) == b"a"
    await client.script_flush()
    replies = await scripts.execute(client, lambda pipe: ATOMIC.queue(pipe, [key], atomic_args(key, "b")))
    assert replies == [1]
    assert await client.get(key) == b"b"
    assert bool(calls) is not loads  # the fallback was the path taken when the load missed
    await client.delete(key)
