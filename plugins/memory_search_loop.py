"""The ``memory_search`` tool loop, sans-IO: what to hide from the client, what to send
back upstream (seed 000 P2: low-relevance memories stay reachable through a tool).

The gateway offers a ``memory_search`` function tool; when the model calls it, the
gateway runs the search, sends the result back (the assistant message with the
``tool_calls`` plus one ``tool`` message per call, OpenAI "function calling" flow) and
relays the next answer. The client sees only the final answer.

Streams (:class:`StreamRound`, one per upstream stream): a tool call is recognised by
its first fragment, which carries ``function.name`` (openai-compat item 14); later
fragments carry only its ``index``. ``memory_search`` fragments are removed from the
deltas; text and the client's own tool calls pass untouched (client calls renumbered
from 0 when a memory_search call took a lower index). When a round called only
``memory_search``, its finish chunk and usage chunk are held back and the caller runs
the next round; in continuation rounds the ``role`` (the client already has it) is
removed, the now-empty role chunk dropped, and every chunk carries the first
response's ``id``. Only choice index 0 is handled (the tool is never offered with n>1).
Usage of the hidden rounds is not added to the final usage (the final chunk stays the
upstream's); the hidden rounds are reported in ``call.annotations``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.chain.sdk import Chunk, ScoredMemory

__all__ = ['MEMORY_SEARCH_TOOL', 'TOOL_NAME', 'StreamRound', 'ToolCall', 'parse_search_arguments', 'round_messages', 'search_result', 'split_calls']

TOOL_NAME = "memory_search"

MEMORY_SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Search the user's long-term memories (facts, preferences and past "
        "events) for anything that helps answer. Call it when the user refers to something "
        "earlier or when personal context would change the answer.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for, in the user's words."},
                "top_k": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many memories (default 5)."},
            },
            "required": ["query"],
        },
    },
}


@dataclass
class ToolCall:
    """A tool call assembled from its fragments."""

    id: str
    name: str
    arguments: str = ""

    def as_message_entry(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


def parse_search_arguments(arguments: str, default_top_k: int, max_top_k: int) -> tuple[str, int]:
    """``(query, top_k)`` from the model's JSON arguments; top_k clamped to [1, max_top_k].

    Raises:
        ValueError: not a JSON object, or no non-empty string ``query``.
    """
    value = json.loads(arguments or "{}")
    if not isinstance(value, dict) or not isinstance(value.get("query"), str) or not value["query"].strip():
        raise ValueError("memory_search needs a non-empty string query")
    top_k = value.get("top_k", default_top_k)
    top_k = top_k if isinstance(top_k, int) and not isinstance(top_k, bool) else default_top_k
    return value["query"].strip(), max(1, min(top_k, max_top_k))


def search_result(hits: Sequence[ScoredMemory]) -> str:
    """The tool message content: ``{"memories": [{"content", "scope", "date", "score"}]}``."""
    return json.dumps({"memories": [
        {"content": h.record.text, "scope": h.record.scope.value,
         "date": h.record.occurred_at.date().isoformat(), "score": round(h.score, 3)}
        for h in hits
    ]}, ensure_ascii=False)


def round_messages(text: str | None, calls: Sequence[ToolCall], results: Sequence[str]) -> list[dict[str, Any]]:
    """The assistant message that made ``calls`` and one tool message per result."""
    assistant = {"role": "assistant", "content": text or None, "tool_calls": [c.as_message_entry() for c in calls]}
    return [assistant, *({"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results, strict=True))]


def split_calls(tool_calls: Sequence[dict[str, Any]]) -> tuple[list[ToolCall], list[dict[str, Any]]]:
    """Non-stream: ``(memory_search calls, the client's calls untouched)``."""
    ours, theirs = [], []
    for call in tool_calls:
        fn = call.get("function") or {}
        if fn.get("name") == TOOL_NAME:
            ours.append(ToolCall(call.get("id", ""), TOOL_NAME, fn.get("arguments") or ""))
        else:
            theirs.append(call)
    return ours, theirs


def _meaningful(delta: dict[str, Any]) -> bool:
    return any(v not in (None, "", []) for k, v in delta.items() if k != "refusal") or bool(delta.get("refusal"))


@dataclass
class StreamRound:
    """One upstream stream of the loop (see module docstring)."""

    stream_id: str | None = None
    continuation: bool = False
    ours: dict[int, ToolCall] = field(default_factory=dict)
    theirs: dict[int, int] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    held: list[Chunk] = field(default_factory=list)
    saw_usage: bool = False
    first: dict[str, Any] | None = None

    @property
    def needs_tool_round(self) -> bool:
        """True when this round called memory_search and nothing the client must see."""
        return bool(self.ours) and not self.theirs

    def feed(self, chunk: Chunk) -> list[Chunk]:
        """The chunks to relay for one upstream chunk (possibly none)."""
        data = chunk.data
        if data is None:
            return [chunk]
        if self.stream_id is None:
            self.stream_id = data.get("id")
        if self.first is None:
            self.first = data
        choices = data.get("choices")
        if not choices:
            self.saw_usage = self.saw_usage or data.get("usage") is not None
            if self.needs_tool_round:
                self.held.append(chunk)
                return []
            return [self._emit(chunk, data, data)]
        choice = choices[0]
        delta = choice.get("delta") or {}
        if isinstance(delta.get("content"), str):
            self.text.append(delta["content"])
        new_delta, changed = self._split(delta)
        if choice.get("finish_reason") is not None and self.needs_tool_round:
            self.held.append(chunk)
            return []
        if not changed and not self.continuation:
            return [chunk]
        if not _meaningful(new_delta) and choice.get("finish_reason") is None and not choice.get("logprobs"):
            return []
        out = {**data, "choices": [{**choice, "delta": new_delta}, *choices[1:]]}
        return [self._emit(chunk, data, out)]

    def _emit(self, chunk: Chunk, data: dict[str, Any], out: dict[str, Any]) -> Chunk:
        if self.continuation and out.get("id") != self.stream_id:
            out = {**out, "id": self.stream_id}
        return chunk if out is data else Chunk.from_data(out)

    def _split(self, delta: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        out, changed = dict(delta), False
        if self.continuation and "role" in out:
            del out["role"]
            changed = True
        kept = []
        for call in delta.get("tool_calls") or []:
            index = call.get("index", 0)
            fn = call.get("function") or {}
            if index in self.ours or (index not in self.theirs and fn.get("name") == TOOL_NAME):
                mine = self.ours.setdefault(index, ToolCall(call.get("id", ""), TOOL_NAME))
                mine.arguments += fn.get("arguments") or ""
                changed = True
                continue
            client_index = self.theirs.setdefault(index, len(self.theirs))
            if client_index != index:
                call, changed = {**call, "index": client_index}, True
            kept.append(call)
        if "tool_calls" in delta:
            if kept:
                out["tool_calls"] = kept
            else:
                del out["tool_calls"]
        return out, changed

    def calls(self) -> list[ToolCall]:
        """The memory_search calls of this round, by index."""
        return [self.ours[i] for i in sorted(self.ours)]

    def finish_as_stop(self) -> list[Chunk]:
        """The held chunks, the finish chunk saying ``stop`` (no more rounds allowed, or
        a failed round); a bare stop chunk first when none was held."""
        out = []
        if not any((c.data or {}).get("choices") for c in self.held):
            first = self.first or {}
            stop = {
                "id": self.stream_id or first.get("id", ""), "object": "chat.completion.chunk",
                "created": first.get("created", 0), "model": first.get("model", ""),
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
            out.append(Chunk.from_data(stop))
        for chunk in self.held:
            data = chunk.data or {}
            if data.get("choices"):
                choice = {**data["choices"][0], "finish_reason": "stop"}
                data = {**data, "choices": [choice, *data["choices"][1:]]}
            out.append(self._emit(chunk, chunk.data or {}, data))
        self.held = []
        return out
