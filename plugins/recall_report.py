"""``recall_report`` (seed 002 §5.2 "显示工具调用", off by default): show the client what
was recalled and where it went.

With ``show_recall: true`` (per key: ``clients[].plugins.recall_report.config``), the
reply gets a ``memgate`` field: the request id, every recall plugin's
``call.annotations`` entry (memory ids, scores, placement, spliced call id, tool rounds,
budget trimming) and ``degraded``. Standard fields are never altered.

- non-stream: the body's top-level ``memgate`` field (:meth:`filter_response`);
- streams: the ``memgate`` field of the last chunk that carries ``choices`` (the one
  with ``finish_reason``). Not the usage chunk: the gateway removes that one for clients
  that did not ask for usage. To know which chunk is the last, the filter holds back the
  latest choices chunk (and any chunks after it) until the next one arrives, so the
  client sees each chunk one chunk later; with ``show_recall: false`` nothing is held.

Per user (:mod:`gateway.settings.memory_settings`, ``call.settings``), whatever ``show_recall`` says:

- ``show_tool_calls`` (seed 002 §5.2 "显示工具调用"): the same ``memgate`` field, plus
  ``memgate.tool_calls``: every tool call the gateway spliced into the conversation (the
  synthetic ``recall_memory`` call of ``tool_splice``), in the OpenAI tool-call shape
  ``{"id", "type": "function", "function": {"name", "arguments"}}`` with ``"result"``,
  the content of its ``tool`` message, exactly as the model saw them (after
  ``token_budget``). The reply's own ``choices`` are never changed: an OpenAI SDK parses
  the reply as usual and exposes the field as ``completion.memgate`` (``chunk.memgate``
  on the last chunk of a stream), a pydantic extra field it ignores otherwise.
- ``show_thinking`` (§5.2 "显示思维链"): ``memgate.thinking``, a list of ``{"plugin",
  "steps"}``: the recall agent's rounds and planner answers (``tool_splice``). The main
  model's own reasoning (``reasoning_content``, ``<think>``) is the upstream's and is
  relayed unchanged either way.

Must be listed before ``hybrid_injection`` (stream and response filters run in reverse
order, so it then sees the memory_search loop's final chunks).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

from pydantic import Field

from gateway.chain.sdk import CallContext, Chunk, PluginConfig

__all__ = ['RecallReport', 'RecallReportConfig', 'report']


class RecallReportConfig(PluginConfig):
    show_recall: bool = Field(False, description="Add the memgate field to replies (seed 002 'show tool calls', default off).")


def report(call: CallContext, show_recall: bool = True) -> dict[str, Any]:
    """The ``memgate`` field: request id, annotations (when ``show_recall`` or the
    caller's ``show_tool_calls``), spliced tool calls (``show_tool_calls``), the recall
    agent's reasoning (``show_thinking``), degraded entries."""
    settings = call.settings
    out: dict[str, Any] = {"request_id": call.request_id}
    if show_recall or settings.show_tool_calls:
        out.update(call.annotations)
    if settings.show_tool_calls:
        out["tool_calls"] = spliced_tool_calls(call)
    if settings.show_thinking:
        out["thinking"] = [
            {"plugin": name, "steps": a["thinking"]}
            for name, a in call.annotations.items() if isinstance(a, dict) and "thinking" in a
        ]
    out["degraded"] = list(call.degraded)
    return out


def spliced_tool_calls(call: CallContext) -> list[dict[str, Any]]:
    """The tool calls in what went upstream (``call.sent``) that the client did not send,
    each with ``result``: its tool message's content. One pass over the messages."""
    if call.sent is None or call.original is None:
        return []
    theirs = {
        tc.get("id") for m in call.original.messages if m.get("role") == "assistant"
        for tc in (m.get("tool_calls") or []) if isinstance(tc, dict)
    }
    results = {m.get("tool_call_id"): m.get("content") for m in call.sent.messages if m.get("role") == "tool"}
    out = []
    for message in call.sent.messages:
        if message.get("role") != "assistant":
            continue
        for tc in message.get("tool_calls") or []:
            if isinstance(tc, dict) and tc.get("id") not in theirs:
                out.append({**tc, "result": results.get(tc.get("id"))})
    return out


class RecallReport:
    """See module docstring."""

    name: ClassVar[str] = "recall_report"
    Config = RecallReportConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ("hybrid_injection",)

    def __init__(self, config: RecallReportConfig, services: Any) -> None:
        self.config = config

    def shows(self, call: CallContext) -> bool:
        """Whether this call's reply gets the ``memgate`` field (config or user settings)."""
        s = call.settings
        return self.config.show_recall or bool(s.show_tool_calls) or bool(s.show_thinking)

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        if not self.shows(call):
            return body
        return {**body, "memgate": report(call, self.config.show_recall)}

    def response_fallback(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        """The reply without the report (standard fields are never altered)."""
        return body

    def stream_fallback(self, call: CallContext) -> list[Chunk] | None:
        """Release the held chunks unchanged and end the stream (they are its tail)."""
        held: list[Chunk] = call.state.pop(self.name, None) or []
        return held or None

    async def on_chunk(self, call: CallContext, chunk: Chunk) -> list[Chunk]:
        if not self.shows(call):
            return [chunk]
        held: list[Chunk] = call.state.setdefault(self.name, [])
        data = chunk.data
        if data is not None and data.get("choices"):
            released = list(held)
            held[:] = [chunk]
            return released
        if held:
            held.append(chunk)
            return []
        return [chunk]

    async def on_stream_end(self, call: CallContext) -> AsyncIterator[Chunk]:
        held: list[Chunk] = call.state.get(self.name) or []
        if not held:
            return
        first = held[0].data or {}
        yield Chunk.from_data({**first, "memgate": report(call, self.config.show_recall)})
        for chunk in held[1:]:
            yield chunk
