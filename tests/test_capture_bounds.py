"""Reply capture is bounded and never blocks the relay (openai-compat item 22): with slow
completion observers, runs beyond ``chain.max_pending_completions`` are shed and counted."""

import asyncio
import time
from typing import Any, ClassVar

import httpx

from gateway.sdk import PluginConfig
from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import SSEReply, fixture


class SlowObserver:
    name: ClassVar[str] = "slow"
    Config = PluginConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()
    seen: ClassVar[list[int]] = []

    def __init__(self, config: Any, services: Any) -> None:
        pass

    async def on_complete(self, call, reply) -> None:
        SlowObserver.seen.append(len(reply.text))
        await asyncio.sleep(6.0)


async def test_slow_observers_are_shed_past_the_bound_and_streams_do_not_wait(start_gateway, upstream):
    SlowObserver.seen.clear()
    gw = start_gateway(registry={"slow": SlowObserver}, plugins=[{"name": "slow"}],
                       chain={"max_pending_completions": 10, "max_capture_bytes": 100})
    upstream.default = lambda rec: SSEReply(fixture("text_with_usage"), pieces=500)
    body = {"model": "gpt-4o", "messages": [], "stream": True}

    async def one(client: httpx.AsyncClient) -> bytes:
        async with client.stream("POST", gw.base_url + "/chat/completions", json=body,
                                 headers={"authorization": f"Bearer {ALICE_KEY}"}) as response:
            return await response.aread()

    started = time.monotonic()
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=100)) as client:
        replies = await asyncio.gather(*(one(client) for _ in range(60)))
    elapsed = time.monotonic() - started
    assert all(r.endswith(b"data: [DONE]\n\n") for r in replies)
    assert elapsed < 5.0  # no stream waited for a 6 s observer
    metrics = httpx.get(gw.url + "/metrics").text
    shed = next(float(line.split()[-1]) for line in metrics.splitlines()
                if line.startswith("memgate_completions_shed_total"))
    # every observer still sleeps: at most 10 ran, every other reply was shed and counted
    assert len(SlowObserver.seen) <= 10 and shed == 60 - len(SlowObserver.seen)
    assert SlowObserver.seen and max(SlowObserver.seen) <= 100  # capture capped per reply
    upstream.default = None
