"""Reply capture is bounded and never blocks the relay (openai-compat item 22): with slow
completion observers, runs beyond ``chain.max_pending_completions`` are shed and counted."""

import asyncio
import time
from typing import Any, ClassVar

import httpx

from gateway.chain.sdk import PluginConfig
from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import SSEReply, fixture


class SlowObserver:
    name: ClassVar[str] = "slow"
    Config = PluginConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()
    seen: ClassVar[list[int]] = []

    #: the gateway loop's event the observers block on until the test releases them
    gate: ClassVar[list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = []

    def __init__(self, config: Any, services: Any) -> None:
        pass

    async def on_complete(self, call, reply) -> None:
        SlowObserver.seen.append(len(reply.text))
        if not SlowObserver.gate:
            SlowObserver.gate.append((asyncio.get_running_loop(), asyncio.Event()))
        await SlowObserver.gate[0][1].wait()

    @classmethod
    def release(cls) -> None:
        for loop, event in cls.gate:
            loop.call_soon_threadsafe(event.set)
        cls.gate.clear()


async def test_slow_observers_are_shed_past_the_bound_and_streams_do_not_wait(start_gateway, upstream):
    SlowObserver.seen.clear()
    try:
        await run(start_gateway, upstream)
    finally:
        SlowObserver.release()


def shed_total(gw) -> float:
    metrics = httpx.get(gw.url + "/metrics", timeout=30).text
    return next(float(line.split()[-1]) for line in metrics.splitlines()
                if line.startswith("memgate_completions_shed_total"))


async def run(start_gateway, upstream) -> None:
    gw = start_gateway(registry={"slow": SlowObserver}, plugins=[{"name": "slow"}],
                       chain={"max_pending_completions": 10, "max_capture_bytes": 100})
    upstream.default = lambda rec: SSEReply(fixture("text_with_usage"), pieces=500)
    body = {"model": "gpt-4o", "messages": [], "stream": True}

    async def one(client: httpx.AsyncClient) -> bytes:
        async with client.stream("POST", gw.base_url + "/chat/completions", json=body,
                                 headers={"authorization": f"Bearer {ALICE_KEY}"}) as response:
            return await response.aread()

    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=100)) as client:
        replies = await asyncio.gather(*(one(client) for _ in range(60)))
    # every observer that started is still blocked: no stream waited for one
    assert all(r.endswith(b"data: [DONE]\n\n") for r in replies)
    # each reply's completion work is either started or shed (poll: it is scheduled as
    # the stream ends, maybe after the client saw [DONE]; a generous deadline, no timing)
    deadline = time.monotonic() + 30
    while len(SlowObserver.seen) + (shed := shed_total(gw)) < 60:
        assert time.monotonic() < deadline, (len(SlowObserver.seen), shed)
        await asyncio.sleep(0.02)
    # at most 10 ran, every other reply was shed and counted
    assert len(SlowObserver.seen) <= 10 and shed == 60 - len(SlowObserver.seen)
    assert SlowObserver.seen and max(SlowObserver.seen) <= 100  # capture capped per reply
    upstream.default = None
