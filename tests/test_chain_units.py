"""The plugin chain on its own (no server, no Redis): fake plugins, a real
:class:`~gateway.chain.chain.ChainFactory` / :class:`~gateway.chain.chain.PluginChain`, real telemetry
with an in-memory span exporter.

Overruns are made with hooks that await an :class:`asyncio.Event` nobody sets, under
budgets of a few tens of milliseconds; the past deadline is made by back-dating
``CallContext.started``. Nothing here sleeps or asserts on timings.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any, ClassVar, Literal

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import Field

import gateway.chain.chain as chain_module
from gateway.chain.chain import ChainFactory, CompletionRunner, PluginChain
from gateway.chain.injection import SystemPart
from gateway.chain.sdk import CallContext, PluginConfig, Services, Skipped
from gateway.chain.services import PluginServices
from gateway.proxy.assembly import AssembledReply
from gateway.proxy.upstream import UpstreamCaller, UpstreamPool
from gateway.proxy.wire import ChatRequest, Chunk
from gateway.runtime.config import (
    ChainConfig,
    ConfigError,
    PluginEntry,
    TelemetryConfig,
    UpstreamConfig,
)
from gateway.runtime.principal import Principal
from gateway.runtime.telemetry import Telemetry

#: Small budgets so overruns end quickly (the hooks that overrun wait forever).
FAST = ChainConfig(hook_budget_ms=40, reply_budget_ms=40, chunk_budget_ms=40, completion_budget_ms=40)

Mode = Literal["ok", "hang", "raise", "skip"]


class FakeConfig(PluginConfig):
    """What each hook of a :class:`Fake` plugin does."""

    rewrite: Mode = Field("ok", description="rewrite_request behaviour.")
    inject_order: int = Field(50, description="Order of the system part the rewrite injects.")
    filter: Mode = Field("ok", description="filter_response behaviour.")
    chunk: Mode = Field("ok", description="on_chunk behaviour (from the chunk n == fail_at on).")
    fail_at: int = Field(1, description="First chunk number on_chunk misbehaves on.")
    end: Mode = Field("ok", description="on_stream_end behaviour.")
    ending: bool = Field(False, description="stream_fallback returns an ending chunk (else None).")
    complete: Mode = Field("ok", description="on_complete behaviour.")


async def forever() -> None:
    """Wait on an event that is never set (an overrunning hook)."""
    await asyncio.Event().wait()


def log(call: CallContext) -> list[str]:
    return call.state.setdefault("log", [])


class Fake:
    """Every capability; each hook logs ``name.hook`` into ``call.state["log"]`` and then
    behaves as its config says. Its changes are marked with its name so a test can see
    which changes survived."""

    name: ClassVar[str] = "fake"
    Config = FakeConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: FakeConfig, services: Services) -> None:
        self.config = config

    async def _act(self, mode: Mode) -> None:
        if mode == "hang":
            await forever()
        elif mode == "raise":
            raise RuntimeError(f"{self.name} broke")
        elif mode == "skip":
            raise Skipped("breaker_open")

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        log(call).append(f"{self.name}.rewrite_request")
        call.state.setdefault("seen", {})[self.name] = [m["content"] for m in request.messages]
        text = f"[{self.name}]"
        call.injection = call.injection.with_system(
            SystemPart(self.name, self.config.inject_order, render=lambda _items, text=text: text)
        )
        changed = request.model_copy(
            update={"messages": [*request.messages, {"role": "user", "content": f"from {self.name}"}]}
        )
        await self._act(self.config.rewrite)
        return changed

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        log(call).append(f"{self.name}.filter_response")
        await self._act(self.config.filter)
        return {**body, "marks": [*body.get("marks", []), self.name]}

    def response_fallback(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "fallback": self.name}

    async def on_chunk(self, call: CallContext, chunk: Chunk) -> list[Chunk]:
        data = chunk.data or {}
        if not call.state.get(("chunked", self.name)):
            call.state[("chunked", self.name)] = True
            log(call).append(f"{self.name}.on_chunk")
        if data.get("n", -1) >= self.config.fail_at:
            await self._act(self.config.chunk)
        return [Chunk.from_data({**data, "marks": [*data.get("marks", []), self.name]})]

    async def on_stream_end(self, call: CallContext) -> AsyncIterator[Chunk]:
        log(call).append(f"{self.name}.on_stream_end")
        await self._act(self.config.end)
        yield Chunk.from_data({"end": self.name})

    def stream_fallback(self, call: CallContext) -> list[Chunk] | None:
        return [Chunk.from_data({"fallback": self.name})] if self.config.ending else None

    async def on_complete(self, call: CallContext, reply: AssembledReply) -> None:
        log(call).append(f"{self.name}.on_complete")
        await self._act(self.config.complete)


def _named(name: str, **attrs: Any) -> type:
    return type(f"Fake_{name}", (Fake,), {"name": name, **attrs})


A, B, C = _named("a"), _named("b"), _named("c")
AfterA = _named("after_a", runs_after=("a",))
BeforeA = _named("before_a", runs_before=("a",))
REGISTRY = {cls.name: cls for cls in (A, B, C, AfterA, BeforeA)}


class Harness:
    """A chain factory over fake plugins, its telemetry and a call factory."""

    def __init__(self, entries: list[dict[str, Any]], config: ChainConfig = FAST) -> None:
        self.exporter = InMemorySpanExporter()
        self.telemetry = Telemetry(TelemetryConfig(), self.exporter)
        assert self.telemetry.recording
        self.pool = UpstreamPool(UpstreamConfig(base_url="http://127.0.0.1:9/v1"))
        services = PluginServices(redis=None, memory=None, upstreams=self.pool, telemetry=self.telemetry)
        self.runner = CompletionRunner(10, self.telemetry)
        self.factory = ChainFactory(
            [PluginEntry(**e) for e in entries], REGISTRY, services, config, self.telemetry, self.runner
        )
        self.chain: PluginChain = self.factory.default

    def call(self, request: ChatRequest | None = None, *, deadline_s: float = 10.0, started: float | None = None) -> CallContext:
        return CallContext(
            request_id="req_test",
            principal=Principal(key_id="k", user_id="alice", friend_id="tutor"),
            original=request,
            headers={},
            upstream=UpstreamCaller(self.pool.default, {}),
            started=time.perf_counter() if started is None else started,
            deadline_s=deadline_s,
        )

    def failures(self, plugin: str, hook: str, reason: str) -> float:
        return self.telemetry.metrics.get("memgate_plugin_failures_total", plugin=plugin, hook=hook, reason=reason)

    def skips(self, plugin: str, hook: str, reason: str) -> float:
        return self.telemetry.metrics.get("memgate_plugin_skips_total", plugin=plugin, hook=hook, reason=reason)

    def spans(self, name: str) -> list[Any]:
        return [s for s in self.exporter.get_finished_spans() if s.name == name]


CLIENT_SYSTEM = {"role": "system", "content": "You are the client's own prompt.", "x_extra": [1, 2]}


def request(*messages: dict[str, Any]) -> ChatRequest:
    msgs = list(messages) or [CLIENT_SYSTEM, {"role": "user", "content": "hi"}]
    return ChatRequest.model_validate({"model": "gpt-4o", "messages": msgs})


def contents(req: ChatRequest) -> list[Any]:
    return [m["content"] for m in req.messages]


async def source(n: int, pulled: list[int] | None = None) -> AsyncIterator[Chunk]:
    for i in range(n):
        if pulled is not None:
            pulled.append(i)
        yield Chunk.from_data({"n": i})


async def drain(chain: PluginChain, call: CallContext, chunks: AsyncIterator[Chunk]) -> list[dict[str, Any]]:
    return [c.data async for c in chain.filter_stream(call, chunks)]


def reply() -> AssembledReply:
    return AssembledReply(id="chatcmpl-1", model="gpt-4o", created=1, choices=())


# -- order ------------------------------------------------------------------------------


async def test_request_hooks_run_in_yaml_order_and_reply_hooks_in_reverse() -> None:
    h = Harness([{"name": "a"}, {"name": "b"}, {"name": "c"}])
    call = h.call(request())
    await h.chain.rewrite(call, call.original)
    await h.chain.filter_response(call, {"id": "x"})
    await drain(h.chain, call, source(2))
    async with h.runner:
        h.chain.complete(call, reply())
        await h.runner.wait_idle(timeout=10)
    assert log(call) == [
        "a.rewrite_request", "b.rewrite_request", "c.rewrite_request",
        "c.filter_response", "b.filter_response", "a.filter_response",
        "c.on_chunk", "b.on_chunk", "a.on_chunk",
        "c.on_stream_end", "b.on_stream_end", "a.on_stream_end",
        "c.on_complete", "b.on_complete", "a.on_complete",
    ]


def test_runs_after_violation_is_refused_naming_both_entries() -> None:
    with pytest.raises(ConfigError) as err:
        Harness([{"name": "after_a"}, {"name": "a"}])
    assert "'after_a'" in str(err.value) and "'a'" in str(err.value) and "after" in str(err.value)
    Harness([{"name": "a"}, {"name": "after_a"}])  # the right order is accepted


def test_runs_before_violation_is_refused_naming_both_entries() -> None:
    with pytest.raises(ConfigError) as err:
        Harness([{"name": "a"}, {"name": "before_a"}])
    assert "'before_a'" in str(err.value) and "'a'" in str(err.value) and "before" in str(err.value)
    Harness([{"name": "before_a"}, {"name": "a"}])


# -- request phase: failures, skips, deadline --------------------------------------------


async def test_an_overrunning_request_hook_with_on_failure_original_sends_the_original() -> None:
    h = Harness([{"name": "a"}, {"name": "b", "config": {"rewrite": "hang"}}, {"name": "c"}])
    original = request()
    call = h.call(original)
    out = await h.chain.rewrite(call, original)
    assert out is original  # the client's exact request (and so its exact bytes)
    assert call.sent is original
    assert call.injection.empty  # a's injection is not rendered into anything either
    assert call.degraded == ("b:timeout",)
    assert h.failures("b", "rewrite_request", "timeout") == 1
    assert "c.rewrite_request" not in log(call)
    (span,) = h.spans("plugin b.rewrite_request")
    assert span.attributes["memgate.degraded"] == "timeout"


@pytest.mark.parametrize("mode, reason", [("hang", "timeout"), ("raise", "error:RuntimeError")])
async def test_a_failing_request_hook_with_on_failure_skip_loses_only_its_own_change(mode: str, reason: str) -> None:
    h = Harness([
        {"name": "a", "config": {"inject_order": 20}},
        {"name": "b", "config": {"rewrite": mode, "inject_order": 10}, "on_failure": "skip"},
        {"name": "c", "config": {"inject_order": 30}},
    ])
    original = request()
    call = h.call(original)
    out = await h.chain.rewrite(call, original)
    assert call.degraded == (f"b:{reason}",)
    assert h.failures("b", "rewrite_request", reason.split(":")[0]) == 1
    # c ran after the failure, on a's request (b's change gone)
    assert log(call) == ["a.rewrite_request", "b.rewrite_request", "c.rewrite_request"]
    assert call.state["seen"]["c"] == [CLIENT_SYSTEM["content"], "hi", "from a"]
    assert [p.key for p in call.injection.system] == ["a", "c"]  # b's injection dropped too
    assert contents(out) == [CLIENT_SYSTEM["content"], "[a]\n\n[c]", "hi", "from a", "from c"]
    assert "[b]" not in json.dumps(out.to_body())


async def test_the_request_deadline_sends_the_original_whatever_on_failure_says() -> None:
    h = Harness([
        {"name": "a"},
        {"name": "b", "config": {"rewrite": "hang"}, "on_failure": "skip", "budget_ms": 60_000},
        {"name": "c"},
    ])
    original = request()
    call = h.call(original, deadline_s=0.05)  # b's own budget (60 s) is far beyond it
    out = await h.chain.rewrite(call, original)
    assert out is original and call.sent is original and call.injection.empty
    assert call.degraded == ("b:deadline",)
    assert h.failures("b", "rewrite_request", "deadline") == 1
    assert "c.rewrite_request" not in log(call)


async def test_a_hook_reached_after_the_deadline_does_not_run() -> None:
    h = Harness([{"name": "a"}, {"name": "b"}])
    original = request()
    call = h.call(original, deadline_s=1.0, started=time.perf_counter() - 5.0)
    out = await h.chain.rewrite(call, original)
    assert out is original
    assert call.degraded == ("a:deadline",)
    assert log(call) == []
    assert h.failures("a", "rewrite_request", "deadline") == 1


async def test_skipped_is_named_and_counted_as_a_skip_and_later_hooks_still_run() -> None:
    h = Harness([
        {"name": "a"},
        {"name": "b", "config": {"rewrite": "skip"}},  # on_failure: original does not apply to a skip
        {"name": "c"},
    ])
    original = request()
    call = h.call(original)
    out = await h.chain.rewrite(call, original)
    assert call.degraded == ("b:breaker_open",)
    assert h.skips("b", "rewrite_request", "breaker_open") == 1
    assert h.failures("b", "rewrite_request", "breaker_open") == 0
    assert log(call)[-1] == "c.rewrite_request"
    assert [p.key for p in call.injection.system] == ["a", "c"]
    assert contents(out)[-2:] == ["from a", "from c"]
    (span,) = h.spans("plugin b.rewrite_request")
    assert span.attributes["memgate.skipped"] == "breaker_open"


# -- request phase: the injection ---------------------------------------------------------


async def test_the_injection_is_rendered_once_after_the_last_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    renders: list[Any] = []
    real = chain_module.render

    def counting(req: ChatRequest, injection: Any) -> ChatRequest:
        renders.append(injection)
        return real(req, injection)

    monkeypatch.setattr(chain_module, "render", counting)
    h = Harness([
        {"name": "a", "config": {"inject_order": 20}},
        {"name": "b", "config": {"inject_order": 10}},
        {"name": "c", "config": {"inject_order": 30}},
    ])
    original = request()
    client_first = json.dumps(original.messages[0], sort_keys=False)
    call = h.call(original)
    out = await h.chain.rewrite(call, original)
    assert len(renders) == 1
    # no hook saw another hook's injection rendered into the request
    assert call.state["seen"]["b"] == [CLIENT_SYSTEM["content"], "hi", "from a"]
    assert call.state["seen"]["c"] == [CLIENT_SYSTEM["content"], "hi", "from a", "from b"]
    # placement "separate": the client's first system message is byte-identical and first,
    # the injected parts follow it in one system message, by order
    assert json.dumps(out.messages[0], sort_keys=False) == client_first
    assert out.messages[1] == {"role": "system", "content": "[b]\n\n[a]\n\n[c]"}
    assert contents(out)[2:] == ["hi", "from a", "from b", "from c"]
    assert call.sent is out
    assert contents(original) == [CLIENT_SYSTEM["content"], "hi"]  # the original is not mutated


async def test_without_a_client_system_message_the_injection_goes_first() -> None:
    h = Harness([{"name": "a"}])
    original = request({"role": "user", "content": "hi"})
    call = h.call(original)
    out = await h.chain.rewrite(call, original)
    assert out.messages[0] == {"role": "system", "content": "[a]"}
    assert contents(out)[1:] == ["hi", "from a"]


# -- response filters ---------------------------------------------------------------------


@pytest.mark.parametrize("mode, reason, label", [("raise", "error:RuntimeError", "error"), ("hang", "timeout", "timeout")])
async def test_a_failing_response_filter_is_replaced_by_its_fallback(mode: str, reason: str, label: str) -> None:
    h = Harness([{"name": "a"}, {"name": "b", "config": {"filter": mode}}, {"name": "c"}])
    call = h.call(request())
    body = {"id": "chatcmpl-1", "marks": []}
    out = await h.chain.filter_response(call, body)
    # reverse order: c, then b (failed: its fallback of its input, c's output), then a
    assert out == {"id": "chatcmpl-1", "marks": ["c", "a"], "fallback": "b"}
    assert body == {"id": "chatcmpl-1", "marks": []}
    assert call.degraded == (f"b:{reason}",)
    assert h.failures("b", "filter_response", label) == 1
    (span,) = h.spans("plugin b.filter_response")
    assert span.attributes["memgate.degraded"] == reason


# -- stream filters -----------------------------------------------------------------------


async def test_on_chunk_failure_with_no_fallback_passes_the_rest_unchanged() -> None:
    h = Harness([{"name": "a"}, {"name": "b", "config": {"chunk": "raise", "fail_at": 1}}])
    call = h.call(request())
    out = await drain(h.chain, call, source(4))
    # b runs first (reverse order): chunk 0 through b and a; from chunk 1 on b is bypassed
    assert out == [
        {"n": 0, "marks": ["b", "a"]},
        {"n": 1, "marks": ["a"]},
        {"n": 2, "marks": ["a"]},
        {"n": 3, "marks": ["a"]},
        {"end": "a"},
    ]
    assert call.degraded == ("b:error:RuntimeError",)
    assert h.failures("b", "on_chunk", "error") == 1
    assert "b.on_stream_end" not in log(call)  # a failed filter is bypassed to the end


async def test_on_chunk_failure_with_fallback_chunks_ends_the_stream() -> None:
    h = Harness([{"name": "a"}, {"name": "b", "config": {"chunk": "hang", "fail_at": 1, "ending": True}}])
    call = h.call(request())
    pulled: list[int] = []
    out = await drain(h.chain, call, source(5, pulled))
    assert out[0] == {"n": 0, "marks": ["b", "a"]}
    assert out[-1] == {"fallback": "b"}
    assert not any("n" in c and c["n"] >= 1 for c in out)  # later source chunks not relayed
    assert not any("end" in c for c in out)
    assert pulled == [0, 1]  # the source was not read on
    assert call.degraded == ("b:timeout",)
    assert h.failures("b", "on_chunk", "timeout") == 1


async def test_on_stream_end_overrun_runs_the_fallback() -> None:
    h = Harness([{"name": "a"}, {"name": "b", "config": {"end": "hang", "ending": True}}])
    call = h.call(request())
    out = await drain(h.chain, call, source(2))
    assert out == [{"n": 0, "marks": ["b", "a"]}, {"n": 1, "marks": ["b", "a"]}, {"fallback": "b"}]
    assert call.degraded == ("b:timeout",)
    assert h.failures("b", "on_stream_end", "timeout") == 1
    assert "a.on_stream_end" not in log(call)  # the fallback ended the stream


async def test_on_stream_end_overrun_without_fallback_lets_the_others_finish() -> None:
    h = Harness([{"name": "a"}, {"name": "b", "config": {"end": "hang"}}])
    call = h.call(request())
    out = await drain(h.chain, call, source(1))
    assert out == [{"n": 0, "marks": ["b", "a"]}, {"end": "a"}]
    assert call.degraded == ("b:timeout",)
    assert h.failures("b", "on_stream_end", "timeout") == 1


async def test_one_span_per_stream_filter_per_stream_not_per_chunk() -> None:
    h = Harness([{"name": "a"}, {"name": "b"}])
    for _ in range(2):
        call = h.call(request())
        out = await drain(h.chain, call, source(6))
        assert len(out) == 6 + 2  # six chunks, two stream-end chunks
    assert len(h.spans("plugin a.stream")) == 2
    assert len(h.spans("plugin b.stream")) == 2
    assert not [s for s in h.exporter.get_finished_spans() if "on_chunk" in s.name]


async def test_the_failed_stream_filter_span_is_marked_degraded() -> None:
    h = Harness([{"name": "a", "config": {"chunk": "raise", "fail_at": 0}}])
    call = h.call(request())
    await drain(h.chain, call, source(3))
    (span,) = h.spans("plugin a.stream")
    assert span.attributes["memgate.degraded"] == "error:RuntimeError"


# -- completion observers -------------------------------------------------------------------


async def test_an_overrunning_completion_hook_is_counted_and_the_others_still_run() -> None:
    h = Harness([{"name": "a"}, {"name": "b", "config": {"complete": "hang"}}])
    call = h.call(request())
    async with h.runner:
        h.chain.complete(call, reply())
        await h.runner.wait_idle(timeout=10)
    assert log(call) == ["b.on_complete", "a.on_complete"]
    assert h.failures("b", "on_complete", "timeout") == 1
    assert call.degraded == ("b:timeout",)
    (span,) = h.spans("plugin b.on_complete")
    assert span.attributes["memgate.degraded"] == "timeout"


# -- bugs found while writing these tests (fixed) ---------------------------------------


async def test_a_slow_consumer_is_not_cancelled_by_a_stream_end_budget() -> None:
    h = Harness([{"name": "a", "config": {"ending": True}}], ChainConfig(reply_budget_ms=20))
    call = h.call(request())
    stream = h.chain.filter_stream(call, source(1))
    got: list[dict[str, Any]] = []
    consumer_saw: list[str] = []
    try:
        async for chunk in stream:
            got.append(chunk.data)
            if "end" in chunk.data:
                try:  # the client reads slowly: its own wait, well past the hook's budget
                    await asyncio.wait_for(asyncio.Event().wait(), 0.5)
                except TimeoutError:
                    consumer_saw.append("own timeout")
    except asyncio.CancelledError:
        asyncio.current_task().uncancel()
        consumer_saw.append("cancelled")
    finally:
        await stream.aclose()
    assert consumer_saw == ["own timeout"]
    assert got[:2] == [{"n": 0, "marks": ["a"]}, {"end": "a"}]


def test_two_plugin_classes_with_the_same_class_name_get_their_own_instances() -> None:
    first = type("Plugin", (Fake,), {"name": "first"})
    second = type("Plugin", (Fake,), {"name": "second"})
    REGISTRY.update(first=first, second=second)
    try:
        h = Harness([{"name": "first"}, {"name": "second"}])
    finally:
        del REGISTRY["first"], REGISTRY["second"]
    assert [type(p.instance) for p in h.chain.plugins] == [first, second]


# -- request phase: a rewriter's own fallback (request_fallback) -------------------------


class WithFallback(Fake):
    """A fake whose ``request_fallback`` keeps the last message of its input, marked;
    ``fallback_raises`` makes the fallback itself break."""

    name: ClassVar[str] = "fb"
    fallback_raises: ClassVar[bool] = False

    def request_fallback(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        log(call).append(f"{self.name}.request_fallback")
        if self.fallback_raises:
            raise ValueError("fallback broke")
        return request.model_copy(update={"messages": [*request.messages[-1:], {"role": "user", "content": "fallback"}]})


BrokenFallback = type("BrokenFallback", (WithFallback,), {"name": "fb_broken", "fallback_raises": True})
REGISTRY.update({cls.name: cls for cls in (WithFallback, BrokenFallback)})


@pytest.mark.parametrize("mode, reason", [("hang", "timeout"), ("raise", "error:RuntimeError"), ("skip", "breaker_open")])
async def test_a_rewriter_with_request_fallback_goes_on_with_its_fallback_not_the_original(mode: str, reason: str) -> None:
    h = Harness([{"name": "a"}, {"name": "fb", "config": {"rewrite": mode}}, {"name": "c"}])
    original = request()
    call = h.call(original)
    out = await h.chain.rewrite(call, original)
    assert call.degraded == (f"fb:{reason}",)
    # the fallback got fb's input (a's request), its result went on to c
    assert call.state["seen"]["c"] == ["from a", "fallback"]
    assert log(call)[-2:] == ["fb.request_fallback", "c.rewrite_request"]
    assert [p.key for p in call.injection.system] == ["a", "c"]  # fb's injection dropped
    assert contents(out)[-3:] == ["from a", "fallback", "from c"]


async def test_a_request_fallback_that_raises_is_counted_and_the_hooks_input_goes_on() -> None:
    h = Harness([{"name": "a"}, {"name": "fb_broken", "config": {"rewrite": "raise"}}, {"name": "c"}])
    original = request()
    call = h.call(original)
    out = await h.chain.rewrite(call, original)
    assert call.degraded == ("fb_broken:error:RuntimeError", "fb_broken:error:ValueError")
    assert h.failures("fb_broken", "request_fallback", "error") == 1
    assert call.state["seen"]["c"] == [CLIENT_SYSTEM["content"], "hi", "from a"]
    assert contents(out)[-2:] == ["from a", "from c"]


async def test_past_the_deadline_the_original_goes_even_with_a_request_fallback() -> None:
    h = Harness([{"name": "fb", "config": {"rewrite": "hang"}, "budget_ms": 60_000}, {"name": "c"}])
    original = request()
    call = h.call(original, deadline_s=0.05)
    out = await h.chain.rewrite(call, original)
    assert out is original and call.degraded == ("fb:deadline",)
    assert "fb.request_fallback" not in log(call)
