"""Applying a :class:`~gateway.memorization.plan.Plan` to the memory store, replay-safe.

- ``add`` / ``upsert``: the record is built with the op's fixed id and written with
  ``store.import_records`` (upsert by id): a second application rewrites the same record.
- ``update``: the target's supersede chain is followed to its live head (another job may
  have superseded it meanwhile); the head is retired with ``superseded_by`` = the new id
  and the new record written with ``supersedes`` = the head, both in one import (as
  ``store.supersede`` does, but with the op's fixed id). If the head already is the new
  record, the op was applied before and is skipped.
- ``delete``: ``store.retire`` (contradicted facts are kept, not erased) unless retired.
- A target that no longer exists (forgotten, erased) turns an update into an add and a
  delete into nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gateway.errors import NotFound
from gateway.memorization.plan import Plan
from gateway.memory.records import MemoryRecord, Tenant, build_record

MAX_CHAIN = 8


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
        gateway.errors.MemoryUnavailable and other store errors: the worker retries the job.
    """
    now = now or datetime.now(UTC)
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
        elif op.kind == "delete" and op.target:
            try:
                target = await store.get(tenant, op.target)
            except NotFound:
                continue
            if not target.retired:
                await store.retire(tenant, op.target, op.reason or "contradicted")
    if records:
        await store.import_records(records)
    return written


async def undo(store: Any, tenant: Tenant, ids: list[str]) -> None:
    """Erase records a stale job wrote (forget won the race); missing ones are fine."""
    for memory_id in ids:
        try:
            await store.delete(tenant, memory_id)
        except NotFound:
            pass
