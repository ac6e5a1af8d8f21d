"""Values that flow through the plugin chain: the request, stream chunks.

:class:`ChatRequest` is the Chat Completions request body (OpenAI API reference,
"Create chat completion") as a frozen pydantic model that keeps every field it does not
name (``extra="allow"``), so unknown and future fields reach the upstream as sent.
Plugins return new values with ``request.model_copy(update=...)``; :meth:`to_body`
dumps only the fields the client sent or a plugin set.

:class:`Chunk` is one SSE event of a streamed reply: its exact bytes, parsed on demand.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ['EXTENSION_FIELD', 'ChatRequest', 'Chunk', 'message_text', 'without_extension']

#: The per-message field a client may add for the gateway's own use (README "Group chats":
#: ids, reply links, times, mentions). It is not part of the OpenAI API, so it never goes
#: upstream: strict upstreams reject unknown message fields.
EXTENSION_FIELD = "memgate"


class ChatRequest(BaseModel):
    """A ``POST /v1/chat/completions`` body.

    Only the fields plugins read are named; everything else is kept verbatim in the
    model's extras. ``messages`` items stay plain dicts (OpenAI message objects), since
    the gateway must forward message fields it does not know.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    model: str
    messages: list[dict[str, Any]] = []
    stream: bool | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    stream_options: dict[str, Any] | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    user: str | None = None

    def to_body(self) -> dict[str, Any]:
        """The JSON body to send upstream (fields the client sent or a plugin set)."""
        return self.model_dump(exclude_unset=True)

    def last_user_index(self) -> int | None:
        """Index in ``messages`` of the last ``role: user`` message, or None."""
        for i in range(len(self.messages) - 1, -1, -1):
            if self.messages[i].get("role") == "user":
                return i
        return None


def message_text(message: dict[str, Any]) -> str:
    """The text of a message: ``content`` as a string, or its ``text`` parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def without_extension(items: Any) -> list[Any] | None:
    """``items`` (messages, or Responses input items) with :data:`EXTENSION_FIELD` removed
    from each object that has it; None when ``items`` is not a list or none has it (send
    as is). Other fields, and objects without the field, are the same objects. Linear in
    the number of items."""
    if not isinstance(items, list) or not any(isinstance(m, dict) and EXTENSION_FIELD in m for m in items):
        return None
    return [{k: v for k, v in m.items() if k != EXTENSION_FIELD} if isinstance(m, dict) and EXTENSION_FIELD in m
            else m for m in items]


_USAGE_OBJECT = re.compile(rb'"usage"\s*:\s*\{')


def _carries_nothing(choice: Any) -> bool:
    """A choice with no content: empty (or no) delta, no finish reason, no logprobs."""
    return (
        isinstance(choice, dict)
        and not choice.get("delta")
        and choice.get("finish_reason") is None
        and choice.get("logprobs") is None
    )

class Chunk:
    """One SSE event of a chat completion stream.

    ``raw`` is the exact event bytes; ``data`` is its JSON payload parsed on first use
    (None for comments and for ``[DONE]``). Chunks a plugin makes with :meth:`from_data`
    are serialized as ``data: <json>\\n\\n``.
    """

    __slots__ = ("_data", "_parsed", "_text", "raw")

    def __init__(self, raw: bytes, text: str | None) -> None:
        self.raw = raw
        self._text = text
        self._data: dict[str, Any] | None = None
        self._parsed = False

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Chunk:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        chunk = cls(b"data: " + text.encode() + b"\n\n", text)
        chunk._data, chunk._parsed = data, True
        return chunk

    @property
    def is_done(self) -> bool:
        return self._text == "[DONE]"

    @property
    def data(self) -> dict[str, Any] | None:
        if not self._parsed:
            self._parsed = True
            if self._text and self._text != "[DONE]":
                try:
                    value = json.loads(self._text)
                except ValueError:
                    value = None
                self._data = value if isinstance(value, dict) else None
        return self._data

    @property
    def is_usage_only(self) -> bool:
        """The ``stream_options.include_usage`` chunk: a ``usage`` object and choices that
        carry nothing, either ``choices: []`` (OpenAI) or choices with an empty delta and
        no finish reason (LiteLLM sends ``"choices":[{"index":0,"delta":{}}]``). A chunk
        with content and usage together is not usage-only. A byte search for a usage
        object rules most chunks out before any JSON is parsed (OpenAI sends
        ``"usage":null`` on every other chunk)."""
        if _USAGE_OBJECT.search(self.raw) is None:
            return False
        data = self.data
        if not data or not isinstance(data.get("usage"), dict):
            return False
        choices = data.get("choices")
        return isinstance(choices, list) and all(_carries_nothing(c) for c in choices)

    def __repr__(self) -> str:
        return f"Chunk({self.raw!r})"
