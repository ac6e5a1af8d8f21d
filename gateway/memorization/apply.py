"""Applying a :class:`~gateway.memorization.plan.Plan` to the memory store, replay-safe.

- ``add`` / ``upsert``: the record is built with the op's fixed id and written with
  ``store.import_records`` (upsert by id): a second application rewrites the same record.
- ``update``: the target's supersede chain is followed to its live head (another job may
  have superseded it meanwhile); the head is retired with ``superseded_by`` = the new id
  and the new record written with ``supersedes`` = the head, both in one import (as
  ``store.supersede`` does, but with the op's fixed id). If the head already is the new
  record, the op was applied before and is skipped.
- ``delete``: ``store.retire`` (contradicted facts are kept, not erased) unless retired.
- ``split``: the target, retired by an earlier ``update`` of the plan or still live (then
  retired here with the op's reason), is followed by its unchanged clauses as a new record
  (the op's fixed id, the target's ``created_at``, ``updated_at`` and friend), both in the
  plan's one import, so the two are written together or not at all. A target gone or
  retired by someone else (another job's change, an earlier application of this plan)
  turns it into nothing.
- ``merge``: the target's live head gains the op's sources in its metadata
  (:func:`merged_metadata`: ``source_messages`` appended, a ``merged`` entry keyed by turn
  hash, so a second application changes nothing) and ``metadata.mentions`` (how often the
  user said it) and a new ``updated_at``; its text, vector and id stay. Not
  counted as written (undo after a forget must not erase a record this job did not make).
- A target that no longer exists (forgotten, erased) or is retired turns an update or a
  merge into an add and a delete into nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from gateway.memorization.plan import Plan
from gateway.memory.embeddings.base import embed_texts, memory_vector
from gateway.memory.records import (
    MAX_METADATA_BYTES,
    MemoryPatch,
    MemoryRecord,
    NewMemory,
    Tenant,
    build_record,
    embedded_views,
)
from gateway.runtime.errors import NotFound

MAX_CHAIN = 8
#: Most ``metadata.merged`` entries (and merged-in ``source_messages``) one record keeps;
#: later near-duplicates still merge but are no longer listed.
MAX_MERGED = 50


def merged_metadata(old: dict[str, Any], new: NewMemory, old_text: str) -> dict[str, Any] | None:
    """``old`` (a record's metadata) with ``new``'s sources added, or None when they are
    already there (a replay) or the record holds :data:`MAX_MERGED` of them or would
    exceed :data:`~gateway.memory.records.MAX_METADATA_BYTES`."""
    meta = new.metadata
    entries = list(old.get("merged", []))
    turn = meta.get("turn_hash")
    if any(e.get("turn_hash") == turn for e in entries if isinstance(e, dict)) or len(entries) >= MAX_MERGED:
        return None
    entry: dict[str, Any] = {k: meta[k] for k in ("turn_hash", "conversation_id", "position", "speaker") if k in meta}
    if new.occurred_at is not None:
        entry["occurred_at"] = new.occurred_at.isoformat()
    if new.text != old_text:
        entry["text"] = new.text
    out = {**old, "merged": [*entries, entry], "mentions": len(entries) + 2}
    sources = [s for s in meta.get("source_messages", []) if s not in old.get("source_messages", [])]
    if sources:
        out["source_messages"] = [*old.get("source_messages", []), *sources]
    if len(json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode()) > MAX_METADATA_BYTES:
        return None
    return out


async def _head(store: Any, tenant: Tenant, memory_id: str) -> MemoryRecord | None:
    record = None
    for _ in range(MAX_CHAIN):
        try:
            record = await store.get(tenant, memory_id)
        except NotFound:
            return record
        if not record.superseded_by:
            return record
        memory_id = record.superseded_by
    return record


async def apply_plan(store: Any, tenant: Tenant, plan: Plan, now: datetime | None = None) -> list[str]:
    """Write ``plan``; returns the ids of the records written (for undo on forget).

    Raises:
        gateway.runtime.errors.MemoryUnavailable and other store errors: the worker retries the job.
    """
    records, written = await _records_of(store, tenant, plan, now or datetime.now(UTC))
    if records:
        await store.import_records(records)
    return written


async def apply_plans(
    store: Any, plans: Sequence[tuple[Tenant, Plan]], vectors: Mapping[str, np.ndarray] | None = None,
    now: datetime | None = None,
) -> list[list[str]]:
    """:func:`apply_plan` for several plans (the jobs of one read batch), each plan's
    records one group of ``store.import_embedded``: one ``embed_many`` call for every view
    not in ``vectors`` (text -> vector, e.g. embedded with the batch's near-duplicate
    searches), one round trip reading the versions replaced, one writing every plan's
    records (a plan's records are written whole or not at all). Merges onto stored
    records and deletes are applied per op first, as :func:`apply_plan` does. Returns the
    ids written, per plan.

    Raises:
        gateway.runtime.errors.MemoryUnavailable and other store errors: the worker retries the jobs.
    """
    now = now or datetime.now(UTC)
    collected = [await _records_of(store, tenant, plan, now) for tenant, plan in plans]
    records = [r for group, _ in collected for r in group]
    if records:
        known = await embed_texts(store.embedder, (v for r in records for v in embedded_views(r)), vectors)
        await store.import_embedded([[(r, memory_vector(r, known)) for r in group] for group, _ in collected if group])
    return [written for _, written in collected]


async def _records_of(store: Any, tenant: Tenant, plan: Plan, now: datetime) -> tuple[list[MemoryRecord], list[str]]:
    """The records ``plan`` writes (to import) and their ids that count as written; merges
    onto stored records and deletes are applied here (module docstring)."""
    records: list[MemoryRecord] = []
    written: list[str] = []
    for op in plan.ops:
        if op.kind in ("add", "upsert") and op.memory is not None and op.id:
            records.append(build_record(tenant, op.memory, op.id, now))
            written.append(op.id)
        elif op.kind == "update" and op.memory is not None and op.id and op.target:
            head = await _head(store, tenant, op.target)
            new = build_record(tenant, op.memory, op.id, now)
            written.append(op.id)
            if head is None:
                records.append(new)
            elif head.id != op.id:
                records.append(head.model_copy(update={
                    "retired": True, "retired_at": now, "retired_reason": f"superseded by {op.id}",
                    "superseded_by": op.id, "updated_at": now,
                }))
                records.append(new.model_copy(update={"supersedes": head.id}))
        elif op.kind == "merge" and op.memory is not None and op.id and op.target:
            pending = next((i for i, r in enumerate(records) if r.id == op.target), None)
            if pending is not None:  # a near-duplicate of an earlier add of this plan
                meta = merged_metadata(records[pending].metadata, op.memory, records[pending].text)
                if meta is not None:
                    records[pending] = records[pending].model_copy(update={"metadata": meta})
                continue
            head = await _head(store, tenant, op.target)
            if head is None or head.retired:
                records.append(build_record(tenant, op.memory, op.id, now))
                written.append(op.id)
            elif head.id != op.id:
                meta = merged_metadata(head.metadata, op.memory, head.text)
                if meta is not None:
                    await store.update(tenant, head.id, MemoryPatch(metadata=meta))
        elif op.kind == "split" and op.memory is not None and op.id and op.target:
            try:
                source = await store.get(tenant, op.target)  # as stored: its own times
            except NotFound:
                continue
            if not any(r.id == op.target and r.retired for r in records):  # not retired by this plan's update
                if source.retired:
                    continue
                records.append(source.model_copy(update={
                    "retired": True, "retired_at": now, "retired_reason": op.reason or "superseded", "updated_at": now}))
            records.append(build_record(tenant, op.memory, op.id, now).model_copy(update={
                "friend_id": source.friend_id, "created_at": source.created_at, "updated_at": source.updated_at}))
            written.append(op.id)
        elif op.kind == "delete" and op.target:
            try:
                target = await store.get(tenant, op.target)
            except NotFound:
                continue
            if not target.retired:
                await store.retire(tenant, op.target, op.reason or "contradicted")
    return records, written


async def undo(store: Any, tenant: Tenant, ids: list[str]) -> None:
    """Erase records a stale job wrote (forget won the race); missing ones are fine."""
    for memory_id in ids:
        try:
            await store.delete(tenant, memory_id)
        except NotFound:
            pass
