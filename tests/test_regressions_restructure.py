"""Regressions of issue 8, through the real gateway on loopback with the official SDK:

(a) a failed ``memory_search`` round (the second upstream call answers 500) never leaks
    the gateway's own tool call: the client gets the model's first message without it and
    ``finish_reason: "stop"`` (non-stream: ``x-memgate-degraded`` names hybrid_injection);
(b) ``/v1/embeddings`` and ``/v1/models`` map the upstream's total timeout to 504
    ``upstream_timeout`` in the OpenAI error envelope;
(c) forgetting a user with a custom memorize ``queue.key_prefix`` bumps the forget epoch
    under that prefix, and writes nothing under the default ``mgq``.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import openai
import pytest
import redis

from gateway.chain.sdk import CallContext, PluginConfig
from gateway.memorization.keys import QueueKeys
from gateway.memory.records import Tenant
from gateway.proxy.wire import Chunk
from tests.recall.conftest import REGISTRY, TOOL_CHAIN, memory, seed  # noqa: F401  (seed: fixture)
from tests.recall.streams import SEARCH_CALL_ID, tool_round
from tests.recall.test_e2e_tool_loop import (
    LOW_Q,
    SCIFI,
    search_call,
    tool_call_completion,
)
from tests.support.gateway import ADMIN_KEY, ALICE_KEY
from tests.support.loopback import LoopbackServer
from tests.support.upstream_double import JSONReply, SSEReply, UpstreamDouble

SERVER_ERROR = JSONReply(
    {"error": {"message": "upstream broke", "type": "server_error", "param": None, "code": None}}, status=500
)


def plugin_failures(gw: Any, plugin: str, hook: str) -> list[str]:
    """The ``memgate_plugin_failures_total`` lines of /metrics for ``plugin`` and ``hook``."""
    text = httpx.get(gw.url + "/metrics", timeout=10).text
    return [line for line in text.splitlines()
            if line.startswith("memgate_plugin_failures_total{") and f'plugin="{plugin}"' in line and f'hook="{hook}"' in line]


# -- (a) a failed memory_search round ---------------------------------------------------------


@pytest.fixture
def tool_gateway(start_gateway, seed):  # noqa: F811
    """The recall chain with a low-relevance memory for alice, so memory_search is offered."""
    gw = start_gateway(registry=REGISTRY, plugins=TOOL_CHAIN)
    seed(gw, Tenant("alice", "tutor"), memory(SCIFI))
    return gw


def test_non_stream_failed_search_round_ends_with_stop_and_no_gateway_tool_call(tool_gateway, upstream):
    upstream.enqueue(JSONReply(tool_call_completion(search_call())), SERVER_ERROR)
    client = openai.OpenAI(base_url=tool_gateway.base_url, api_key=ALICE_KEY, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[{"role": "user", "content": LOW_Q}])
    reply = raw.parse()
    first, second = upstream.chat_requests()  # the round really ran, and failed upstream
    assert [t["function"]["name"] for t in first.json["tools"]] == ["memory_search"]
    assert second.json["messages"][-1]["tool_call_id"] == SEARCH_CALL_ID
    assert raw.status_code == 200
    assert reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.tool_calls is None
    assert SEARCH_CALL_ID not in raw.http_response.text  # not even in another field
    degraded = raw.headers["x-memgate-degraded"].split(",")
    assert "hybrid_injection:error:UpstreamError" in degraded
    assert plugin_failures(tool_gateway, "hybrid_injection", "filter_response")


def test_stream_failed_search_round_ends_with_stop_and_no_gateway_tool_call(tool_gateway, upstream):
    upstream.enqueue(SSEReply(tool_round()), SERVER_ERROR)

    async def run() -> list[Any]:
        client = openai.AsyncOpenAI(base_url=tool_gateway.base_url, api_key=ALICE_KEY, max_retries=0)
        stream = await client.chat.completions.create(
            model="gpt-4o", stream=True, messages=[{"role": "user", "content": LOW_Q}])
        return [chunk async for chunk in stream]

    chunks = asyncio.run(run())
    _, second = upstream.chat_requests()
    assert second.json["stream"] is True and second.json["messages"][-1]["tool_call_id"] == SEARCH_CALL_ID
    with_choices = [c for c in chunks if c.choices]
    assert with_choices, "the client got no choice chunk at all"
    assert all(c.choices[0].delta.tool_calls is None for c in with_choices)  # no memory_search fragment
    assert with_choices[-1].choices[0].finish_reason == "stop"
    assert [c.choices[0].finish_reason for c in with_choices if c.choices[0].finish_reason] == ["stop"]
    assert plugin_failures(tool_gateway, "hybrid_injection", "on_stream_end")


# -- (b) pass-through routes and the total timeout ---------------------------------------------


class Gate:
    """Holds upstream handlers (on the double's event loop) until :meth:`release`, called
    from the test thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._released = False
        self.entered = threading.Event()

    async def wait(self) -> None:
        event = asyncio.Event()
        with self._lock:
            if self._released:
                return
            self._waiting.append((asyncio.get_running_loop(), event))
        self.entered.set()
        await event.wait()

    def release(self) -> None:
        with self._lock:
            self._released = True
            waiting, self._waiting = self._waiting, []
        for loop, event in waiting:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)


class GatedDouble(UpstreamDouble):
    """The upstream double, except that every request waits on :attr:`gate` first."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = Gate()

    async def _send(self, reply: Any, send: Any) -> None:
        await self.gate.wait()
        await super()._send(reply, send)


@pytest.fixture
def slow_upstream() -> Iterator[tuple[GatedDouble, str]]:
    double = GatedDouble()
    server = LoopbackServer(double, lifespan="off").start()
    try:
        yield double, server.url
    finally:
        double.gate.release()
        server.stop()


@pytest.fixture
def slow_gateway(start_gateway, slow_upstream):
    _, url = slow_upstream
    return start_gateway(upstream={"base_url": url + "/v1", "total_timeout_s": 0.3})


def assert_upstream_timeout(exc: openai.APIStatusError) -> None:
    assert exc.status_code == 504
    envelope = exc.response.json()
    assert set(envelope) == {"error"}
    assert envelope["error"]["code"] == "upstream_timeout"
    assert envelope["error"]["type"] and envelope["error"]["message"]


def test_embeddings_past_the_total_timeout_answer_504_upstream_timeout(slow_gateway, slow_upstream):
    double, _ = slow_upstream
    client = openai.OpenAI(base_url=slow_gateway.base_url, api_key=ALICE_KEY, max_retries=0, timeout=30)
    with pytest.raises(openai.APIStatusError) as err:
        client.embeddings.create(model="text-embedding-3-small", input="hello")
    assert double.gate.entered.is_set()  # the upstream got the call and was still holding it
    assert [r.path for r in double.requests] == ["/v1/embeddings"]
    assert_upstream_timeout(err.value)


def test_models_past_the_total_timeout_answer_504_upstream_timeout(slow_gateway, slow_upstream):
    double, _ = slow_upstream
    client = openai.OpenAI(base_url=slow_gateway.base_url, api_key=ALICE_KEY, max_retries=0, timeout=30)
    with pytest.raises(openai.APIStatusError) as err:
        client.models.list()
    assert double.gate.entered.is_set()
    assert [r.path for r in double.requests] == ["/v1/models"]
    assert_upstream_timeout(err.value)


# -- (c) forget honours memorize's queue.key_prefix -------------------------------------------


def test_forget_bumps_the_epoch_under_the_custom_queue_prefix_only(start_gateway, redis_url):
    gw = start_gateway(plugins=[
        {"name": "memorize", "config": {"queue": {"key_prefix": "custq"}, "worker": {"in_serve": 0}}}])
    user = "forget-" + uuid.uuid4().hex[:12]
    custom, default = QueueKeys("custq"), QueueKeys("mgq")
    assert custom.epoch(user) == f"custq:{{{user}}}:epoch"
    r = redis.Redis.from_url(redis_url)
    try:
        r.sadd(custom.seen(user, "tutor"), "turn-hash")  # queue state under the custom prefix
        response = httpx.post(gw.url + f"/v1/admin/users/{user}/forget",
                              headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30)
        assert response.status_code == 200, response.text
        assert response.json()["user_id"] == user
        assert r.get(custom.epoch(user)) == b"1"
        assert not r.exists(custom.seen(user, "tutor"))
        assert not r.exists(default.epoch(user))
        assert list(r.scan_iter(match=default.forgettable_pattern(user))) == []
    finally:
        r.delete(custom.epoch(user), custom.seen(user, "tutor"))
        r.close()


# -- bugs found while writing these tests (fixed) ---------------------------------------


class CutShort:
    """A stream filter whose on_chunk fails on the second chunk; its fallback ends the
    client's stream with a stop chunk (as hybrid_injection's does mid-round)."""

    name: ClassVar[str] = "cut_short"
    Config = PluginConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: PluginConfig, services: Any) -> None:
        pass

    async def on_chunk(self, call: CallContext, chunk: Chunk) -> list[Chunk]:
        seen = call.state[self.name] = call.state.get(self.name, 0) + 1
        if seen == 2:
            raise RuntimeError("cut short")
        return [chunk]

    async def on_stream_end(self, call: CallContext):
        return
        yield

    def stream_fallback(self, call: CallContext) -> list[Chunk]:
        return [Chunk.from_data({"id": "chatcmpl-cut", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o",
                                 "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})]


def test_a_stream_ended_by_a_fallback_still_ends_with_one_done(start_gateway, upstream):
    gw = start_gateway(registry={"cut_short": CutShort}, plugins=[{"name": "cut_short"}])
    with httpx.stream("POST", gw.base_url + "/chat/completions", timeout=30,
                      json={"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
                      headers={"authorization": f"Bearer {ALICE_KEY}"}) as response:
        body = response.read()
    assert b'"finish_reason":"stop"' in body and b"chatcmpl-cut" in body  # the fallback ran
    assert body.endswith(b"data: [DONE]\n\n") and body.count(b"data: [DONE]") == 1
