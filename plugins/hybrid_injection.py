"""``hybrid_injection`` (seed 000 P2, "上下文注入"): high-relevance memories into the
prompt, low-relevance ones behind a ``memory_search`` tool the gateway runs itself.

Request phase: reads ``auto_recall``'s :class:`~plugins.auto_recall.RecallResult`; the
high set is rendered with ``template`` (default seed 000 ``memoryContextPrompt``, Chinese
when the last user message is mostly CJK, else English; :mod:`plugins.prompts`) into the
shared injected context (:mod:`plugins.context`, placement ``separate`` by default).
When there are low-relevance hits the ``memory_search`` tool is added, unless the client
sent ``tool_choice: "none"``, asked for ``n`` > 1, already defines a tool of that name,
or the model is not in the upstream's ``supports_tools`` globs.

Response phase (:mod:`plugins.memory_search_loop`): when the model calls
``memory_search``, the gateway searches the caller's own memories, sends the result back
and relays the next answer, for at most ``max_rounds`` searches; after the last one the
model is asked to answer (``tool_choice: "none"`` when the client has no tools of its
own). Non-stream: :meth:`filter_response`; streams: :meth:`on_chunk` /
:meth:`on_stream_end` continue the same client stream with ``call.upstream.stream``.
If the model called memory_search and client tools in one turn, the memory_search calls
are dropped and the client's calls returned. A failing continuation ends the client's
stream with ``finish_reason: "stop"`` and names the failure in ``call.degraded``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

from pydantic import Field

from gateway.chat import ChatRequest, Chunk, message_text
from gateway.errors import UpstreamError
from gateway.plugin import CallContext, PluginConfig
from gateway.sse import SSEDecoder
from plugins.auto_recall import RecallResult
from plugins.breaker import BreakerConfig, shared_breaker
from plugins.context import MemorySection, apply, context_of
from plugins.guarded_memory import GuardedMemory, RecallSkipped, caller_tenant
from plugins.memory_search_loop import (
    MEMORY_SEARCH_TOOL, TOOL_NAME, StreamRound, ToolCall, parse_search_arguments,
    round_messages, search_result, split_calls,
)
from gateway.text import prompt_language
from plugins.prompts import MEMORY_CONTEXT
from plugins.splice import TOOL_NAME as SPLICE_TOOL

GATEWAY_TOOLS = (TOOL_NAME, SPLICE_TOOL)


class HybridInjectionConfig(PluginConfig):
    placement: Literal["separate", "append"] = Field(
        "separate", description="separate: a new system message after the client's first one "
        "(its own prefix stays byte-identical for prompt caching); append: added to it.",
    )
    template: str | None = Field(
        None, description="Memory context template with {{ memoryItems }}; None: seed 000's "
        "memoryContextPrompt (zh) or its English translation, by the user's language.",
    )
    language: Literal["auto", "zh", "en"] = Field("auto", description="Template language; auto: mostly-CJK user text -> zh.")
    offer_tool: bool = Field(True, description="Offer memory_search when low-relevance memories exist (seed 000 P2).")
    max_rounds: int = Field(3, ge=1, le=5, description="Most memory_search rounds the gateway runs per request.")
    search_top_k: int = Field(5, ge=1, le=10, description="Memories per memory_search call when the model gives no top_k.")
    max_top_k: int = Field(10, ge=1, le=50, description="Largest top_k a memory_search call may ask for.")
    search_threshold: float = Field(0.3, ge=0.0, le=1.0, description="Lowest cosine score a memory_search hit needs.")
    timeout_ms: float = Field(800.0, gt=0, description="Time limit of one memory_search store query.")
    breaker: BreakerConfig = Field(default_factory=BreakerConfig, description="Memory-store circuit breaker.")


@dataclass
class HybridState:
    """Per-call state: was the tool offered, the current stream round, searches run."""

    offered: bool
    rounds: int = 0
    round: StreamRound | None = None
    searches: list[dict[str, Any]] = field(default_factory=list)


async def sse_chunks(response: Any) -> AsyncIterator[Chunk]:
    """The data chunks of an upstream SSE body, up to ``[DONE]``."""
    decoder = SSEDecoder()
    async for part in response.aiter_raw():
        for event in decoder.feed(part):
            chunk = Chunk(event.raw, event.data)
            if chunk.is_done:
                return
            if event.data is not None:
                yield chunk


class HybridInjection:
    """See module docstring."""

    name: ClassVar[str] = "hybrid_injection"
    Config = HybridInjectionConfig
    runs_after: ClassVar[tuple[str, ...]] = ("auto_recall",)
    runs_before: ClassVar[tuple[str, ...]] = ("token_budget",)

    def __init__(self, config: HybridInjectionConfig, services: Any) -> None:
        self.config = config
        self.memory = GuardedMemory(services.memory, shared_breaker(services, config.breaker), config.timeout_ms / 1000)

    # -- request phase ----------------------------------------------------------------

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        recall = call.state.get("auto_recall")
        if not isinstance(recall, RecallResult) or not (recall.high or recall.low):
            return request
        offer = bool(recall.low) and self.config.offer_tool and self.tool_allowed(call, request)
        ctx = context_of(call)
        tools = tuple(t for t in ctx.tools if t["function"]["name"] != TOOL_NAME)
        memory = MemorySection(self.template(request), recall.high) if recall.high else None
        ctx = replace(ctx, placement=self.config.placement, memory=memory,
                      tools=tools + ((MEMORY_SEARCH_TOOL,) if offer else ()))
        call.state[self.name] = HybridState(offered=offer)
        call.annotations[self.name] = {
            "placement": self.config.placement, "tool_offered": offer,
            "injected": [{"id": h.record.id, "score": round(h.score, 4)} for h in recall.high],
        }
        return apply(call, request, ctx)

    def template(self, request: ChatRequest) -> str:
        if self.config.template is not None:
            return self.config.template
        language = self.config.language
        if language == "auto":
            last = request.last_user_index()
            language = prompt_language(message_text(request.messages[last]) if last is not None else "")
        return MEMORY_CONTEXT[language]

    @staticmethod
    def tool_allowed(call: CallContext, request: ChatRequest) -> bool:
        """Whether memory_search may be offered for this request (module docstring)."""
        if request.tool_choice == "none" or (request.model_extra or {}).get("n", 1) not in (None, 1):
            return False
        if any((t.get("function") or {}).get("name") == TOOL_NAME for t in request.tools or []):
            return False
        return call.upstream is None or call.upstream.upstream.supports_tools(request.model)

    # -- the tool loop ----------------------------------------------------------------

    async def run_calls(self, call: CallContext, state: HybridState, calls: list[ToolCall]) -> list[str]:
        """Run each memory_search call for the caller's tenant; the tool message contents."""
        results = []
        for tool_call in calls:
            try:
                query, top_k = parse_search_arguments(tool_call.arguments, self.config.search_top_k, self.config.max_top_k)
                hits = await self.memory.search(caller_tenant(call), query, top_k, self.config.search_threshold)
            except (ValueError, RecallSkipped) as exc:
                results.append(json.dumps({"error": str(exc)}))
                state.searches.append({"error": str(exc)})
                continue
            results.append(search_result(hits))
            state.searches.append({"query": query, "top_k": top_k, "ids": [h.record.id for h in hits]})
        call.annotations.setdefault(self.name, {})["searches"] = state.searches
        return results

    def next_body(self, call: CallContext, messages: list[dict[str, Any]], state: HybridState, usage: bool) -> dict[str, Any]:
        request = context_of(call).request
        assert request is not None
        body = {**request.to_body(), "messages": messages}
        client_tools = [t for t in request.tools or [] if (t.get("function") or {}).get("name") not in GATEWAY_TOOLS]
        if state.rounds >= self.config.max_rounds and not client_tools:
            body["tool_choice"] = "none"
        if usage:
            body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
        return body

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        state = call.state.get(self.name)
        if not isinstance(state, HybridState) or not state.offered:
            return body
        first_id, messages = body.get("id"), list(context_of(call).request.messages)  # type: ignore[union-attr]
        while True:
            choice = (body.get("choices") or [{}])[0]
            message = choice.get("message") or {}
            ours, theirs = split_calls(message.get("tool_calls") or [])
            if not ours:
                return body if body.get("id") == first_id else {**body, "id": first_id}
            if theirs or state.rounds >= self.config.max_rounds:
                kept = {**message, "tool_calls": theirs} if theirs else {k: v for k, v in message.items() if k != "tool_calls"}
                finish = choice.get("finish_reason") if theirs else "stop"
                new_choice = {**choice, "message": kept, "finish_reason": finish}
                return {**body, "id": first_id, "choices": [new_choice, *body["choices"][1:]]}
            messages += round_messages(message.get("content"), ours, await self.run_calls(call, state, ours))
            state.rounds += 1
            body = await call.upstream.complete(self.next_body(call, messages, state, usage=False))  # type: ignore[union-attr]

    async def on_chunk(self, call: CallContext, chunk: Chunk) -> list[Chunk]:
        state = call.state.get(self.name)
        if not isinstance(state, HybridState) or not state.offered:
            return [chunk]
        if state.round is None:
            state.round = StreamRound()
        return state.round.feed(chunk)

    async def on_stream_end(self, call: CallContext) -> AsyncIterator[Chunk]:
        state = call.state.get(self.name)
        if not isinstance(state, HybridState) or state.round is None:
            return
        current, messages = state.round, list(context_of(call).request.messages)  # type: ignore[union-attr]
        while current.needs_tool_round:
            if state.rounds >= self.config.max_rounds:
                for chunk in current.finish_as_stop():
                    yield chunk
                return
            text = "".join(current.text)
            messages += round_messages(text, current.calls(), await self.run_calls(call, state, current.calls()))
            state.rounds += 1
            following = StreamRound(stream_id=current.stream_id, continuation=True)
            try:
                async with call.upstream.stream(self.next_body(call, messages, state, current.saw_usage)) as response:  # type: ignore[union-attr]
                    if response.status_code != 200:
                        raise UpstreamError(f"memory_search round answered {response.status_code}")
                    async for chunk in sse_chunks(response):
                        for out in following.feed(chunk):
                            yield out
            except Exception as exc:  # fail open: end the client's message cleanly
                call.degraded.append(f"{self.name}:tool_round:{type(exc).__name__}")
                for chunk in current.finish_as_stop():
                    yield chunk
                return
            current = following
