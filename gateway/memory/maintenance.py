"""Whole-user and whole-store operations: forget, export, import, re-embed.

Admin operations (they name users, no tenant): the REST API must restrict them to admin
keys. Export/import speak JSONL, one :class:`MemoryRecord` JSON per line
(:func:`record_to_jsonl`, :func:`records_from_jsonl`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Sequence

import numpy as np
from pydantic import ValidationError

from gateway.memory.config import MemoryConfig
from gateway.memory.embeddings.base import Embedder, embed_memories
from gateway.memory.meta import StoreSettings, record_settings
from gateway.memory.records import MemoryRecord, Scope, check_tenant_id
from gateway.memory.repository import RecordRepository
from gateway.memory.validation import check_text
from gateway.runtime.errors import UnprocessableInput

__all__ = ['export_user', 'forget_user', 'import_embedded', 'import_records', 'record_to_jsonl', 'records_from_jsonl', 'reembed']


async def forget_user(repo: RecordRepository, user_id: str) -> int:
    """Erase every key of ``user_id``; returns the number of records deleted. Cached
    embeddings are keyed by text hash, not user, and expire with their TTL."""
    check_tenant_id(user_id, "user_id")
    return await repo.delete_user(user_id)


async def export_user(repo: RecordRepository, user_id: str) -> AsyncIterator[MemoryRecord]:
    """Every record of ``user_id``: profile first, then each friend's events, oldest first."""
    check_tenant_id(user_id, "user_id")
    for part in await repo.partitions_of(user_id):
        ids = await repo.ids_of(part)
        for start in range(0, len(ids), 500):
            found = await repo.fetch(user_id, ids[start : start + 500])
            for doc_id in ids[start : start + 500]:
                if doc_id in found:
                    yield found[doc_id]


def _check_imported(record: MemoryRecord, max_chars: int) -> MemoryRecord:
    check_tenant_id(record.user_id, "user_id")
    if record.scope is Scope.EVENT:
        check_tenant_id(record.friend_id, "friend_id")
    elif record.friend_id is not None:
        raise UnprocessableInput(f"profile record {record.id} has a friend_id", param="friend_id")
    check_text(record.text, max_chars)
    return record


async def import_records(
    repo: RecordRepository, embedder: Embedder, config: MemoryConfig, records: Iterable[MemoryRecord]
) -> int:
    """Store ``records`` as given (ids, times, retirement kept), re-embedded in batches;
    a record whose id exists for that user replaces it. Returns the number stored.

    Raises:
        UnprocessableInput / PayloadTooLarge / InvalidRequest: a record fails the checks
            (nothing of its batch is written).
    """
    total = 0
    batch: list[MemoryRecord] = []
    for record in records:
        batch.append(_check_imported(record, config.max_text_chars))
        if len(batch) == config.embedding.batch_size:
            total += await _import_batch(repo, embedder, batch)
            batch = []
    if batch:
        total += await _import_batch(repo, embedder, batch)
    return total


async def _import_batch(repo: RecordRepository, embedder: Embedder, batch: list[MemoryRecord]) -> int:
    vectors = await embed_memories(embedder, batch)
    found: dict[tuple[str, str], MemoryRecord] = {}  # the versions being replaced, one read per user
    for user_id in dict.fromkeys(r.user_id for r in batch):
        ids = [r.id for r in batch if r.user_id == user_id]
        found.update(((user_id, i), r) for i, r in (await repo.fetch(user_id, ids)).items())
    writes = []
    for record, vector in zip(batch, vectors, strict=True):
        existing = found.get((record.user_id, record.id))
        if existing is not None and existing.scope is not record.scope:
            await repo.remove([existing])
            existing = None
        writes.append((record, vector, existing))
    await repo.write(writes)
    return len(writes)


async def import_embedded(
    repo: RecordRepository, config: MemoryConfig, groups: Sequence[Sequence[tuple[MemoryRecord, np.ndarray]]]
) -> int:
    """Store groups of ``(record, vector)`` as given (ids, times, retirement kept; the
    caller embedded them with the store's model, :func:`embed_memories`); a record whose
    id exists for that user replaces it. One round trip reads the versions being replaced,
    one writes every group (:meth:`RecordRepository.write_groups`: a group, one user's,
    is written whole or not at all). Returns the number stored.

    Raises:
        UnprocessableInput / PayloadTooLarge / InvalidRequest: a record fails the checks
            (nothing is written).
    """
    checked = [[(_check_imported(record, config.max_text_chars), vector) for record, vector in group]
               for group in groups]
    wanted: dict[str, list[str]] = {}
    for group in checked:
        for record, _vector in group:
            wanted.setdefault(record.user_id, []).append(record.id)
    found = await repo.fetch_many(wanted)
    moved = [old for group in checked for record, _v in group
             if (old := found.get((record.user_id, record.id))) is not None and old.scope is not record.scope]
    if moved:  # a replay that changed the record's scope: its old partition's entries go first
        await repo.remove(moved)
    writes = [[(record, vector, None if (old := found.get((record.user_id, record.id))) is None
                or old.scope is not record.scope else old) for record, vector in group] for group in checked]
    await repo.write_groups(writes)
    return sum(len(group) for group in writes)


async def reembed(repo: RecordRepository, embedder: Embedder, batch_size: int) -> int:
    """Re-embed every record of every user with ``embedder`` and rebuild the index, then
    record the model. Run it with the gateway stopped (`memgate memories reembed`):
    records written meanwhile may miss the new index. Returns the records re-embedded."""
    backend = repo.backend
    await backend.reset_index(embedder.dimensions)
    total = 0
    for user_id in await repo.users():
        for part in await repo.partitions_of(user_id):
            ids = await repo.ids_of(part)
            found = await repo.fetch(user_id, ids)
            records = [found[d] for d in ids if d in found]
            items: list[tuple[MemoryRecord, np.ndarray]] = []
            for start in range(0, len(records), batch_size):
                chunk = records[start : start + batch_size]
                items += zip(chunk, await embed_memories(embedder, chunk), strict=True)
            await backend.rebuild_partition(part, items)
            total += len(items)
    settings = StoreSettings(embedder.model, embedder.dimensions, backend.name, backend.index_version)
    await record_settings(repo.client, repo.keys, settings)
    return total


def record_to_jsonl(record: MemoryRecord) -> str:
    """One JSONL line (with the trailing newline)."""
    return record.model_dump_json() + "\n"


def records_from_jsonl(lines: Iterable[str], user_id: str | None = None) -> Iterator[MemoryRecord]:
    """Parse JSONL lines, one :class:`MemoryRecord` JSON per line (blank lines skipped):
    the one reader of the export format (admin import route, ``memgate memories import``).

    Raises:
        UnprocessableInput: a line is not a valid record (its 1-based number, the field
            and the reason in the message), or ``user_id`` is given and a record belongs
            to another user.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = MemoryRecord.model_validate_json(line)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"])
            raise UnprocessableInput(
                f"line {number}: not a memory record: {field + ': ' if field else ''}{error['msg']}") from None
        if user_id is not None and record.user_id != user_id:
            raise UnprocessableInput(f"line {number}: record belongs to user {record.user_id!r}, not {user_id!r}")
        yield record
