"""Assemble the whole reply from stream chunks (or a non-stream body), on the side.

Completion observers (memorization, usage accounting) get an :class:`AssembledReply`:
per choice the concatenated ``delta.content`` and ``delta.refusal``, tool calls merged by
``index`` (the first fragment carries ``id``, ``type`` and ``function.name``; later ones
append to ``function.arguments``; OpenAI streaming guide), ``finish_reason``, the usage
chunk, and whether the client went away before the end (``cancelled``) or the upstream
failed mid-stream (``error``). Text kept per choice is capped (``max_chars``) so capture
memory stays bounded; ``truncated`` says it happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ['AssembledChoice', 'AssembledReply', 'ReplyAssembler', 'reply_from_completion']


@dataclass(frozen=True)
class AssembledChoice:
    index: int
    role: str = "assistant"
    content: str = ""
    refusal: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    finish_reason: str | None = None


@dataclass(frozen=True)
class AssembledReply:
    """The reply the client received, whole.

    Attributes:
        choices: by ``index``, ascending.
        usage: the upstream ``usage`` object, or None when it sent none.
        cancelled: the client disconnected before the reply ended (partial reply).
        error: the error event sent to the client if the upstream failed mid-stream.
        stream: whether it was a streamed reply.
        truncated: some text was dropped beyond the capture cap.
    """

    id: str | None
    model: str | None
    created: int | None
    choices: tuple[AssembledChoice, ...]
    usage: dict[str, Any] | None = None
    cancelled: bool = False
    error: dict[str, Any] | None = None
    stream: bool = True
    truncated: bool = False

    @property
    def text(self) -> str:
        """Content of choice 0 (the usual single-choice case), or ``""``."""
        return self.choices[0].content if self.choices else ""


@dataclass
class _ChoiceState:
    role: str = "assistant"
    content: list[str] = field(default_factory=list)
    size: int = 0
    refusal: list[str] = field(default_factory=list)
    tool_calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None


class ReplyAssembler:
    """Accumulates chunk payloads (``dict``) into an :class:`AssembledReply`."""

    def __init__(self, max_chars: int = 1_000_000) -> None:
        self._max = max_chars
        self._choices: dict[int, _ChoiceState] = {}
        self._meta: dict[str, Any] = {}
        self._usage: dict[str, Any] | None = None
        self._truncated = False

    def add(self, data: dict[str, Any]) -> None:
        """Fold one ``chat.completion.chunk`` payload in."""
        for key in ("id", "model", "created"):
            if key not in self._meta and data.get(key) is not None:
                self._meta[key] = data[key]
        if data.get("usage"):
            self._usage = data["usage"]
        for choice in data.get("choices") or ():
            state = self._choices.setdefault(int(choice.get("index", 0)), _ChoiceState())
            self._add_delta(state, choice.get("delta") or {})
            if choice.get("finish_reason"):
                state.finish_reason = choice["finish_reason"]

    def _add_delta(self, state: _ChoiceState, delta: dict[str, Any]) -> None:
        if delta.get("role"):
            state.role = delta["role"]
        text = delta.get("content")
        if text:
            if state.size + len(text) > self._max:
                text = text[: max(0, self._max - state.size)]
                self._truncated = True
            state.content.append(text)
            state.size += len(text)
        if delta.get("refusal"):
            state.refusal.append(delta["refusal"])
        for call in delta.get("tool_calls") or ():
            merged = state.tool_calls.setdefault(
                int(call.get("index", 0)), {"function": {"name": "", "arguments": ""}}
            )
            for key in ("id", "type"):
                if call.get(key):
                    merged[key] = call[key]
            fn = call.get("function") or {}
            if fn.get("name"):
                merged["function"]["name"] += fn["name"]
            if fn.get("arguments"):
                merged["function"]["arguments"] += fn["arguments"]

    def build(
        self, *, cancelled: bool = False, error: dict[str, Any] | None = None
    ) -> AssembledReply:
        """The reply so far."""
        choices = tuple(
            AssembledChoice(
                index=i,
                role=s.role,
                content="".join(s.content),
                refusal="".join(s.refusal) or None,
                tool_calls=tuple(
                    {"id": c.get("id"), "type": c.get("type", "function"), **c}
                    for _, c in sorted(s.tool_calls.items())
                ),
                finish_reason=s.finish_reason,
            )
            for i, s in sorted(self._choices.items())
        )
        return AssembledReply(
            id=self._meta.get("id"),
            model=self._meta.get("model"),
            created=self._meta.get("created"),
            choices=choices,
            usage=self._usage,
            cancelled=cancelled,
            error=error,
            stream=True,
            truncated=self._truncated,
        )


def reply_from_completion(body: dict[str, Any], *, cancelled: bool = False) -> AssembledReply:
    """An :class:`AssembledReply` from a non-stream ``chat.completion`` body."""
    choices = []
    for choice in body.get("choices") or ():
        message = choice.get("message") or {}
        content = message.get("content")
        choices.append(
            AssembledChoice(
                index=int(choice.get("index", 0)),
                role=message.get("role", "assistant"),
                content=content if isinstance(content, str) else "",
                refusal=message.get("refusal"),
                tool_calls=tuple(message.get("tool_calls") or ()),
                finish_reason=choice.get("finish_reason"),
            )
        )
    return AssembledReply(
        id=body.get("id"),
        model=body.get("model"),
        created=body.get("created"),
        choices=tuple(sorted(choices, key=lambda c: c.index)),
        usage=body.get("usage"),
        cancelled=cancelled,
        stream=False,
    )
