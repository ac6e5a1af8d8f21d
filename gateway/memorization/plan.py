"""A job's planned writes, and the ids that make replaying them harmless.

Idempotency: the worker first computes the job's plan (model calls, searches), stores it
under ``plan:<job>`` with ``SET NX`` (the first plan wins; a replay or a concurrent
duplicate reuses it) and then applies it. Every record a plan writes has an id derived
from ``(job id, op index)`` (:func:`memory_id_for`): applying the same plan twice upserts
the same records, so a job delivered twice stores nothing twice, even if the model would
answer differently the second time.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gateway.memory.ids import new_memory_id
from gateway.memory.records import NewMemory


class Op(BaseModel):
    """One write. ``add``: store ``memory`` as ``id``; ``update``: ``memory`` (as ``id``)
    supersedes ``target``; ``delete``: retire ``target`` (contradicted, kept for audit);
    ``upsert``: store or replace ``id`` (event gists); ``merge``: ``memory`` is a
    near-duplicate of ``target``, which keeps its text and gains ``memory``'s sources
    (:mod:`gateway.memorization.neardup`; stored as ``id`` if ``target`` is gone);
    ``split``: ``target`` is retired (unless an update of the plan retired it) and
    ``memory``, its clauses a change left true, stored as ``id`` with ``target``'s times
    (:mod:`gateway.memorization.split`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["add", "update", "delete", "upsert", "merge", "split"] = Field(description="What to do.")
    id: str | None = Field(None, description="Id of the record written (add, update, upsert).")
    memory: NewMemory | None = Field(None, description="The record to write.")
    target: str | None = Field(None, description="Existing record (update, delete, merge).")
    reason: str = Field("", description="Why (audit; retire reason).")


class Plan(BaseModel):
    """All writes of one job, in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ops: tuple[Op, ...] = Field((), description="Writes, applied in order.")
    decision: str = Field("", description="Why the job wrote (or did not write) anything.")
    skipped: int = Field(0, ge=0, description="Turns deliberately not stored (verbatim small talk).")
    dropped: dict[str, int] = Field(
        default_factory=dict, description="Turns that formed no memory, by why (verbatim disclosure: "
        "request, question, small_talk, meta, other).",
    )


def memory_id_for(job_id: str, slot: str, enqueued_ms: int) -> str:
    """A memory id (ids.new_memory_id layout: time-sortable) fixed by job and slot.

    >>> memory_id_for("j1", "0", 1_700_000_000_000) == memory_id_for("j1", "0", 1_700_000_000_000)
    True
    """
    bits = int.from_bytes(hashlib.sha256(f"{job_id}\x1f{slot}".encode()).digest()[:10], "big") >> 6
    return new_memory_id(now_ms=enqueued_ms, random_bits=bits)


def gist_id_for(user_id: str, friend_id: str, conversation_id: str, started_ms: int) -> str:
    """The one gist id of a conversation (rewritten in place as the conversation grows)."""
    return memory_id_for(f"gist\x1f{user_id}\x1f{friend_id}\x1f{conversation_id}", "gist", started_ms)
