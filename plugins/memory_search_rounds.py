"""The ``memory_search`` tool loop's I/O half (seed 000 P2): runs the model's
memory_search calls against the caller's own memories and continues the reply with
further upstream calls, invisibly to the client, stream or not. The sans-IO half (what
to hide, what to send back) is :mod:`plugins.memory_search_loop`; the request half (which
memories go into the prompt, offering the tool) is :mod:`plugins.hybrid_injection`.

Rounds: at most ``max_rounds`` searches; after the last one the model is asked to answer
(``tool_choice: "none"`` when the client has no tools of its own). When the model called
memory_search together with client tools, the memory_search calls are dropped and the
client's calls returned.

Fallbacks (run by the chain when a round fails or overruns; never leaking the gateway's
own tool calls): non-stream, the latest model message without its memory_search calls and
``finish_reason: "stop"``; streams, the held chunks of the current round ending with
``finish_reason: "stop"`` (a bare stop chunk when nothing was held).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from gateway.chain.sdk import (
    CallContext,
    Chunk,
    GuardedRecall,
    RecallSkipped,
    SSEDecoder,
    UpstreamError,
    caller_tenant,
)
from plugins.memory_search_loop import (
    StreamRound,
    ToolCall,
    parse_search_arguments,
    round_messages,
    search_result,
    split_calls,
)

__all__ = ["LoopSettings", "LoopState", "MemorySearchRounds"]


@dataclass(frozen=True)
class LoopSettings:
    """Limits of the loop (from ``hybrid_injection``'s config)."""

    max_rounds: int
    search_top_k: int
    max_top_k: int
    search_threshold: float
    gateway_tools: tuple[str, ...]


@dataclass
class LoopState:
    """Per-call state: was the tool offered, rounds run, the current stream round, the
    latest non-stream body, searches run (for ``recall_report``)."""

    offered: bool
    rounds: int = 0
    round: StreamRound | None = None
    first_id: str | None = None
    latest: dict[str, Any] | None = None
    searches: list[dict[str, Any]] = field(default_factory=list)
    #: This call's round limit and search threshold (the caller's memory settings);
    #: None: the loop's :class:`LoopSettings`.
    max_rounds: int | None = None
    threshold: float | None = None

    def round_limit(self, settings: LoopSettings) -> int:
        return settings.max_rounds if self.max_rounds is None else self.max_rounds


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


def without_our_calls(body: dict[str, Any], first_id: str | None) -> dict[str, Any]:
    """``body`` with the gateway's memory_search calls removed from choice 0; when only
    ours were there, ``finish_reason`` becomes ``stop``; the id is the first round's."""
    choices = body.get("choices") or [{}]
    choice = choices[0]
    message = choice.get("message") or {}
    ours, theirs = split_calls(message.get("tool_calls") or [])
    out = body if first_id is None or body.get("id") == first_id else {**body, "id": first_id}
    if not ours:
        return out
    kept = {**message, "tool_calls": theirs} if theirs else {k: v for k, v in message.items() if k != "tool_calls"}
    finish = choice.get("finish_reason") if theirs else "stop"
    return {**out, "choices": [{**choice, "message": kept, "finish_reason": finish}, *choices[1:]]}


class MemorySearchRounds:
    """The loop for one plugin instance (shared by calls; state in :class:`LoopState`)."""

    def __init__(self, memory: GuardedRecall, settings: LoopSettings, annotation_key: str) -> None:
        self.memory = memory
        self.settings = settings
        self.annotation_key = annotation_key

    async def run_calls(self, call: CallContext, state: LoopState, calls: list[ToolCall]) -> list[str]:
        """Run each memory_search call for the caller's tenant; the tool message contents.
        A call that cannot run gets ``{"error": ...}`` as its result (the model sees it)."""
        s = self.settings
        results = []
        for tool_call in calls:
            try:
                query, top_k = parse_search_arguments(tool_call.arguments, s.search_top_k, s.max_top_k)
                threshold = s.search_threshold if state.threshold is None else state.threshold
                hits = await self.memory.search(caller_tenant(call), query, top_k, threshold)
            except (ValueError, RecallSkipped) as exc:
                results.append(json.dumps({"error": str(exc)}))
                state.searches.append({"error": str(exc)})
                continue
            results.append(search_result(hits))
            state.searches.append({"query": query, "top_k": top_k, "ids": [h.record.id for h in hits]})
        call.annotations.setdefault(self.annotation_key, {})["searches"] = state.searches
        return results

    def next_body(self, call: CallContext, messages: list[dict[str, Any]], state: LoopState, usage: bool) -> dict[str, Any]:
        """The next round's request: what went upstream, with the rounds so far."""
        request = call.sent or call.original
        assert request is not None
        body = {**request.to_body(), "messages": messages}
        client_tools = [t for t in request.tools or [] if (t.get("function") or {}).get("name") not in self.settings.gateway_tools]
        if state.rounds >= state.round_limit(self.settings) and not client_tools:
            body["tool_choice"] = "none"
        if usage:
            body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
        return body

    def _messages(self, call: CallContext) -> list[dict[str, Any]]:
        request = call.sent or call.original
        assert request is not None
        return list(request.messages)

    # -- non-stream -------------------------------------------------------------------

    async def complete(self, call: CallContext, state: LoopState, body: dict[str, Any]) -> dict[str, Any]:
        """Run rounds until the model answers without memory_search (or the limit).

        Raises:
            UpstreamError / UpstreamTimeout: a round's upstream call failed (the chain then
                runs :meth:`response_fallback`).
        """
        state.first_id = body.get("id")
        messages = self._messages(call)
        while True:
            state.latest = body
            message = ((body.get("choices") or [{}])[0]).get("message") or {}
            ours, theirs = split_calls(message.get("tool_calls") or [])
            if not ours or theirs or state.rounds >= state.round_limit(self.settings):
                return without_our_calls(body, state.first_id)
            messages += round_messages(message.get("content"), ours, await self.run_calls(call, state, ours))
            state.rounds += 1
            body = await call.upstream.complete(self.next_body(call, messages, state, usage=False))

    @staticmethod
    def response_fallback(state: LoopState | None, body: dict[str, Any]) -> dict[str, Any]:
        """The latest model message without our calls, ``finish_reason: "stop"``."""
        latest = state.latest if state is not None and state.latest is not None else body
        return without_our_calls(latest, state.first_id if state is not None else None)

    # -- streams ----------------------------------------------------------------------

    def on_chunk(self, state: LoopState, chunk: Chunk) -> list[Chunk]:
        if state.round is None:
            state.round = StreamRound()
        return state.round.feed(chunk)

    async def on_stream_end(self, call: CallContext, state: LoopState) -> AsyncIterator[Chunk]:
        """Continue the client's stream with further rounds while the model only called
        memory_search.

        Raises:
            UpstreamError / UpstreamTimeout: a round failed (the chain then runs
                :meth:`stream_fallback`, which ends the stream cleanly).
        """
        current = state.round
        if current is None:
            return
        messages = self._messages(call)
        while current.needs_tool_round:
            if state.rounds >= state.round_limit(self.settings):
                for chunk in current.finish_as_stop():
                    yield chunk
                state.round = None
                return
            text = "".join(current.text)
            messages += round_messages(text, current.calls(), await self.run_calls(call, state, current.calls()))
            state.rounds += 1
            following = state.round = StreamRound(stream_id=current.stream_id, continuation=True, first=current.first)
            async with call.upstream.stream(self.next_body(call, messages, state, current.saw_usage)) as response:
                if response.status_code != 200:
                    raise UpstreamError(f"memory_search round answered {response.status_code}")
                async for chunk in sse_chunks(response):
                    for out in following.feed(chunk):
                        yield out
            current = following

    @staticmethod
    def stream_fallback(state: LoopState | None) -> list[Chunk] | None:
        """The held chunks ending in ``finish_reason: "stop"``; None when no tool round
        was under way (then nothing of ours can leak: pass the rest through)."""
        if state is None or state.round is None:
            return None
        if not (state.round.needs_tool_round or state.round.continuation):
            return None
        return state.round.finish_as_stop()
