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

Must be listed before ``hybrid_injection`` (stream and response filters run in reverse
order, so it then sees the memory_search loop's final chunks).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

from pydantic import Field

from gateway.sdk import CallContext, Chunk, PluginConfig

__all__ = ['RecallReport', 'RecallReportConfig', 'report']


class RecallReportConfig(PluginConfig):
    show_recall: bool = Field(False, description="Add the memgate field to replies (seed 002 'show tool calls', default off).")


def report(call: CallContext) -> dict[str, Any]:
    """The ``memgate`` field: request id, annotations, degraded entries."""
    return {"request_id": call.request_id, **call.annotations, "degraded": list(call.degraded)}


class RecallReport:
    """See module docstring."""

    name: ClassVar[str] = "recall_report"
    Config = RecallReportConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ("hybrid_injection",)

    def __init__(self, config: RecallReportConfig, services: Any) -> None:
        self.config = config

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        if not self.config.show_recall:
            return body
        return {**body, "memgate": report(call)}

    def response_fallback(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        """The reply without the report (standard fields are never altered)."""
        return body

    def stream_fallback(self, call: CallContext) -> list[Chunk] | None:
        """Release the held chunks unchanged and end the stream (they are its tail)."""
        held: list[Chunk] = call.state.pop(self.name, None) or []
        return held or None

    async def on_chunk(self, call: CallContext, chunk: Chunk) -> list[Chunk]:
        if not self.config.show_recall:
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
        yield Chunk.from_data({**first, "memgate": report(call)})
        for chunk in held[1:]:
            yield chunk
