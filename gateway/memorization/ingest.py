"""Conversation ingest: ``POST /v1/memories`` with ``messages``.

mem0 and Zep take a conversation chunk and form the memories themselves; so does memgate:
the chunk becomes a memorization :class:`~gateway.memorization.jobs.Job` exactly like a
chat exchange's and goes through the same processor (redaction, verbatim or extract plan,
forget-epoch checks, :mod:`gateway.memorization.processor`), only synchronously: the
caller gets the ids of the memories formed.

What a memory keeps of its source (both modes): ``metadata.conversation_id`` (the
``session_id``, or a hash of the chunk's first message when none is given, as the chat
path derives one), ``position`` (the message's index in the chunk) and
``source_messages`` (the ``metadata`` of the message(s) it came from: the one turn in
verbatim mode; in extract mode every message of the chunk that has ``metadata``, since a
model's fact is not tied to one turn). A message's ``name`` is its speaker: verbatim
memories read ``name: text``. Each turn is indexed with the end of the message before it
(``context``) and embedded with the start of the one after it (``context_after``),
:data:`gateway.memorization.capture.CONTEXT_CHARS` and ``CONTEXT_AFTER_CHARS``, as on the chat path.

Replays are harmless when the chunk's last message has ``occurred_at``: the job id is a
hash of the tenant, session and chunk, its time that ``occurred_at``, and memory ids derive
from both (:func:`gateway.memorization.plan.memory_id_for`), so posting the same chunk
twice rewrites the same records. Without it the job's time is now and a replay adds copies.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gateway.memorization.capture import CONTEXT_AFTER_CHARS, CONTEXT_CHARS
from gateway.memorization.dedupe import hashed_turns
from gateway.memorization.jobs import Job, Turn
from gateway.memory.records import JsonDateTime, Metadata
from gateway.runtime.errors import InvalidRequest

__all__ = ["MAX_CHUNK_MESSAGES", "MAX_SOURCE_METADATA_BYTES", "ConversationMessage", "IngestResult",
           "NewConversation", "conversation_job"]

#: Most messages in one chunk (a long session; larger histories are sent in chunks).
MAX_CHUNK_MESSAGES = 1000
#: Most bytes of the chunk's message ``metadata`` together (compact JSON): extract mode
#: copies all of it into each memory, whose metadata may hold 64 KiB
#: (:data:`gateway.memory.records.MAX_METADATA_BYTES`); half leaves room for the rest.
MAX_SOURCE_METADATA_BYTES = 32768


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ConversationMessage(_Model):
    """One message of an ingested conversation (mem0/Zep style, OpenAI role names)."""

    role: Literal["user", "assistant"] = Field(description="Who said it.")
    content: str = Field(description="What was said (plain text). Longer than the memorize "
                         "configuration's redaction.max_chars: 400.")
    name: str | None = Field(None, min_length=1, max_length=256, description="The speaker's name, if any.")
    occurred_at: JsonDateTime | None = Field(None, description="When it was said; None: now.")
    metadata: Metadata | None = Field(None, description="Caller's JSON data, kept in the formed "
                                      "memories' metadata.source_messages.")


class NewConversation(_Model):
    """Body of ``POST /v1/memories`` when it carries a conversation chunk."""

    messages: list[ConversationMessage] = Field(
        min_length=1, max_length=MAX_CHUNK_MESSAGES, description="The chunk, oldest first.")
    session_id: str | None = Field(None, min_length=1, max_length=200,
                                   description="Conversation (session) the chunk belongs to.")
    mode: Literal["verbatim", "extract"] | None = Field(
        None, description="verbatim (each turn as said, no model) or extract (the memory model "
        "forms facts); None: the memorize configuration's mode.")


class IngestResult(_Model):
    """Reply of a conversation ingest (201)."""

    object: Literal["memory.ingest"] = "memory.ingest"
    ids: list[str] = Field(description="Ids of the memories formed (or updated), in plan order, then "
                           "of existing memories turns were merged into as near-duplicates.")
    skipped: int = Field(0, description="Turns deliberately not stored (verbatim small talk).")
    decision: str = Field("", description="Why the chunk formed (or did not form) memories.")


def conversation_job(
    chunk: NewConversation, *, user_id: str, friend_id: str, epoch: int, now: datetime, max_chars: int,
) -> Job:
    """The memorization job of ``chunk`` for tenant ``(user_id, friend_id)``; linear in
    the chunk's size.

    Raises:
        InvalidRequest: a message longer than ``max_chars`` (param
            ``messages[i].content``) or message metadata over
            :data:`MAX_SOURCE_METADATA_BYTES` together (param ``messages``).
    """
    size = 0
    for i, message in enumerate(chunk.messages):
        if len(message.content) > max_chars:
            raise InvalidRequest(f"messages[{i}].content is {len(message.content)} characters; "
                                 f"the limit is {max_chars} (redaction.max_chars)", param=f"messages[{i}].content")
        if message.metadata:
            size += len(json.dumps(message.metadata, ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_SOURCE_METADATA_BYTES:
        raise InvalidRequest(f"the messages' metadata is {size} bytes as JSON together; the limit is "
                             f"{MAX_SOURCE_METADATA_BYTES}", param="messages")
    conversation = chunk.session_id or _derived_id(chunk)
    hashes = hashed_turns(conversation, [(m.role, m.content) for m in chunk.messages])
    job_id = _job_id(user_id, friend_id, conversation, hashes)
    said = [f"{m.name}: {m.content}" if m.name else m.content for m in chunk.messages]
    turns = []
    for i, (message, turn_hash) in enumerate(zip(chunk.messages, hashes, strict=True)):
        if message.content.strip():
            turns.append(Turn(
                role=message.role, text=message.content, hash=turn_hash, at=message.occurred_at or now, index=i,
                context=said[i - 1][-CONTEXT_CHARS:].strip() if i else "",
                context_after=said[i + 1][:CONTEXT_AFTER_CHARS].strip() if i + 1 < len(said) else "",
                name=message.name or "", metadata=message.metadata or {},
            ))
    return Job(
        job_id=job_id, user_id=user_id, friend_id=friend_id, conversation_id=conversation,
        request_id=f"ingest-{job_id[:12]}", enqueued_at=chunk.messages[-1].occurred_at or now, epoch=epoch,
        turns=tuple(turns),
    )


def _derived_id(chunk: NewConversation) -> str:
    """``h`` + SHA-256 of the first message (as the chat path derives a conversation id)."""
    first = chunk.messages[0]
    return "h" + hashlib.sha256(f"{first.role}\x1f{first.content}".encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _job_id(user_id: str, friend_id: str, conversation: str, hashes: list[str]) -> str:
    digest = hashlib.sha256("\x1f".join((user_id, friend_id, conversation)).encode("utf-8", "surrogatepass"))
    for h in hashes:
        digest.update(h.encode())
    return digest.hexdigest()[:32]

