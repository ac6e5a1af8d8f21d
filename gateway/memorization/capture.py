"""What a finished exchange turns into on the request path, sans-IO.

:func:`capture_exchange` takes the request the client sent (whole history), the assembled
reply and the arrival time, and returns the job header plus every candidate turn with
its dedupe hash; the enqueue script keeps the ones not seen before.

Conversation id, first match wins: header ``x-memgate-conversation-id``; the request's
``metadata.conversation_id`` (OpenAI's ``metadata`` strings); else ``h`` + SHA-256 of
the system messages and the first user message (a client that resends the history keeps
the same prefix, hence the same id).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gateway.memorization.dedupe import hashed_turns
from gateway.memorization.jobs import JobHeader, Turn
from gateway.proxy.assembly import AssembledReply
from gateway.proxy.wire import ChatRequest, message_text
from gateway.runtime.text import truncate_text

CONVERSATION_HEADER = "x-memgate-conversation-id"
MEMORIZE_HEADER = "x-memgate-memorize"
MAX_METADATA_VALUE = 512
#: Default of ``RedactionConfig.max_chars``: longest text kept per turn.
DEFAULT_MAX_TURN_CHARS = 32_000
#: Characters of the previous message kept as a turn's context (its end: a question asked
#: last; ~75 tokens, so the turn itself stays inside the embedder's 256-token window).
CONTEXT_CHARS = 300
#: Characters of the next message kept as a turn's ``context_after`` (its start: the
#: reaction to the turn). It is embedded as a second view of the memory
#: (:func:`gateway.memory.records.embedded_views`), so it costs embedding time on every
#: write: LoCoMo dev R@10 by ingest was the same with 100 as with 300 (82.0 / 81.9), and
#: verbatim memorization ran 101 jobs/s per worker with 300 (``python -m bench memorize``).
CONTEXT_AFTER_CHARS = 100


@dataclass(frozen=True)
class Capture:
    """A job header and its candidate turns (hash included), in message order."""

    header: JobHeader
    turns: tuple[Turn, ...]


def client_metadata(request: ChatRequest) -> dict[str, str]:
    """The request's ``metadata`` object, string values only, each capped at 512 chars."""
    raw = (request.model_extra or {}).get("metadata")
    if not isinstance(raw, dict):
        return {}
    return {str(k)[:64]: v[:MAX_METADATA_VALUE] for k, v in raw.items() if isinstance(v, str)}


def conversation_id(request: ChatRequest, headers: dict[str, str]) -> str:
    """See module docstring."""
    given = headers.get(CONVERSATION_HEADER) or client_metadata(request).get("conversation_id")
    if given:
        return given[:200]
    digest = hashlib.sha256()
    for message in request.messages:
        role = message.get("role")
        if role in ("system", "developer"):
            digest.update(b"s\x1f" + message_text(message).encode("utf-8", "surrogatepass") + b"\x1e")
        elif role == "user":
            digest.update(b"u\x1f" + message_text(message).encode("utf-8", "surrogatepass"))
            break
    return "h" + digest.hexdigest()[:24]


def source_of(message: dict[str, Any]) -> dict[str, str]:
    """``{"id": ...}`` when the message carries a client id in the group-chat extension
    (``"memgate": {"id": str}``, README "Group chats"; cut to 200 characters), else ``{}``:
    memories formed from the message keep it in ``metadata.source_messages``, as
    conversation ingest keeps each message's ``metadata``."""
    ext = message.get("memgate")
    given = ext.get("id") if isinstance(ext, dict) else None
    return {"id": given[:200]} if isinstance(given, str) and given else {}


def group_conversation_id(request: ChatRequest, headers: dict[str, str]) -> str:
    """The conversation id of a group key's request (:mod:`gateway.speakers.group`): the header
    or ``metadata.conversation_id`` as for every key, else the body ``user`` (the group:
    a group key's ``user`` is not an identity), else the prefix hash of
    :func:`conversation_id`. A group bot sends a window of recent messages that slides,
    so the prefix hash would change with every request and the same turn would be
    memorized again; a stable group id keeps the dedupe working."""
    given = headers.get(CONVERSATION_HEADER) or client_metadata(request).get("conversation_id")
    if not given and request.user:
        return "g:" + request.user[:198]
    return conversation_id(request, headers)


def memorize_disabled(headers: dict[str, str]) -> bool:
    """True when the client sent ``x-memgate-memorize: off`` (or ``false``/``0``/``no``)."""
    return headers.get(MEMORIZE_HEADER, "").strip().lower() in ("off", "false", "0", "no")


def capture_exchange(
    request: ChatRequest,
    reply: AssembledReply,
    *,
    headers: dict[str, str],
    user_id: str,
    friend_id: str,
    request_id: str,
    received_at: datetime,
    traceparent: str | None,
    max_candidates: int,
    job_id: str | None = None,
    max_chars: int = DEFAULT_MAX_TURN_CHARS,
    include: frozenset[int] | None = None,
    conversation: str | None = None,
) -> Capture:
    """The header and candidate turns of one exchange.

    Candidates: the ``user`` and ``assistant`` messages among the last ``max_candidates``
    messages that have text, then the reply's text (role assistant, index
    ``len(messages)``). Every turn's ``at`` is ``received_at`` (message time = now); a
    message's client id (:func:`source_of`) becomes its turn's ``metadata``.
    Each turn carries the end of the user or assistant message before it as ``context``
    and the start of the one after it (for a user message, usually the reply) as
    ``context_after`` (:data:`CONTEXT_CHARS` and :data:`CONTEXT_AFTER_CHARS`). Each text is cut to ``max_chars`` (``redaction.max_chars``)
    before it is hashed or queued: the job never holds more than the worker would use, and hashing stays
    bounded per message.

    ``include`` (group keys, one capture per speaker): only the messages at these indexes
    are turns (the reply when it holds ``len(messages)``); contexts and occurrence counts
    are then taken within them only, so no other speaker's text rides along as context.
    ``conversation``: the conversation id to use instead of :func:`conversation_id`.
    """
    conv = conversation if conversation is not None else conversation_id(request, headers)
    indexed = [
        (i, m.get("role"), truncate_text(message_text(m), max_chars)[0])
        for i, m in enumerate(request.messages)
        if m.get("role") in ("user", "assistant") and (include is None or i in include)
    ]
    messages = request.messages
    pairs = [(str(role), text) for _, role, text in indexed]
    if reply.text and (include is None or len(request.messages) in include):
        reply_text = truncate_text(reply.text, max_chars)[0]
        indexed.append((len(request.messages), "assistant", reply_text))
        pairs.append(("assistant", reply_text))
    first_index = max(0, len(request.messages) - max_candidates)
    first = next((n for n, (i, _, _) in enumerate(indexed) if i >= first_index), len(indexed))
    hashes = hashed_turns(conv, pairs, first)
    turns = tuple(
        Turn(role=role, text=text, hash=h, at=received_at, index=i,
             context=indexed[n - 1][2][-CONTEXT_CHARS:].strip() if n else "",
             context_after=indexed[n + 1][2][:CONTEXT_AFTER_CHARS].strip() if n + 1 < len(indexed) else "",
             metadata=source_of(messages[i]) if i < len(messages) else {})
        for n, ((i, role, text), h) in enumerate(zip(indexed[first:], hashes, strict=True), start=first)
        if text.strip()
    )
    header = JobHeader(
        job_id=job_id or uuid.uuid4().hex,
        user_id=user_id,
        friend_id=friend_id,
        conversation_id=conv,
        request_id=request_id,
        model=reply.model or request.model,
        traceparent=traceparent,
        partial=reply.cancelled or reply.error is not None,
        enqueued_at=received_at,
        client_metadata=client_metadata(request),
    )
    return Capture(header, turns)


def traceparent_of(context: Any) -> str | None:
    """W3C ``traceparent`` of an OpenTelemetry span context, or None if invalid."""
    if context is None or not getattr(context, "is_valid", False):
        return None
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
