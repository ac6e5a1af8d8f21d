"""Record hashes, partition listings and the user/friend registries, for both backends.

Writes go through one atomic script call per user (:class:`~gateway.memory.scripts.Batch`;
all of a user's keys share the ``{user}`` hash tag, so this also holds on Redis Cluster):
record hash, listing entry, friend registry and the backend's index entries are applied
together, as MULTI/EXEC would. The global ``users`` set is updated just before, in the same
round trip but outside the script (another slot on a cluster); a user listed there without
records is harmless.

A live record whose ``metadata.follows`` names another record of its user is added to that
record's ``followed_by`` list in the same script call (:meth:`~gateway.memory.scripts.Batch.follow`,
after every record of the call is written; a replay adds nothing twice): the reverse link
recall reads (:data:`~gateway.memory.records.FOLLOWED_BY`). A memory split off older ones
(``metadata.split_from``) gets no list of theirs: recall reads theirs
(:func:`~gateway.memory.records.split_sources`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any

import numpy as np
import redis.asyncio as aredis
from redis.asyncio.client import Pipeline

import gateway.memory.scripts as scripts
from gateway.memory.backend import IndexBackend
from gateway.memory.codec import absent_fields, record_from_reply, record_to_hash
from gateway.memory.ids import is_memory_id
from gateway.memory.keys import KeySpace, Partition
from gateway.memory.records import FOLLOWS, MAX_FOLLOWERS, MemoryRecord
from gateway.memory.scripts import Batch, Script

__all__ = ['FETCH_RECORDS', 'SCAN_BATCH', 'WRITE_CHUNK', 'RecordRepository', 'Write', 'packed']

#: ``(new record, its vector or None when unchanged, the version it replaces or None)``
Write = tuple[MemoryRecord, np.ndarray | None, MemoryRecord | None]
SCAN_BATCH = 1000
#: Records per atomic write script (:meth:`RecordRepository.write`).
WRITE_CHUNK = 16

#: ``HGETALL`` of every key in one command (:mod:`gateway.memory.scripts`): a reply per
#: key, a flat ``[field, value, ...]`` list, empty for a missing key.
FETCH_RECORDS = Script("fetch-records", """#!lua flags=no-writes
local out = {}
for i = 1, #KEYS do out[i] = redis.call('HGETALL', KEYS[i]) end
return out
""")


def _records(ids: Sequence[str], replies: Sequence[object]) -> dict[str, MemoryRecord]:
    """:data:`FETCH_RECORDS` replies for ``ids`` -> the records that exist, by id."""
    return {d: record_from_reply(flat) for d, flat in zip(ids, replies, strict=True) if flat}  # type: ignore[arg-type]


def packed(groups: Sequence[Sequence[Write]], chunk: int = WRITE_CHUNK) -> dict[str, list[list[Write]]]:
    """``groups`` (each one user's writes) packed per user, in order, into chunks of up to
    ``chunk`` writes, one atomic script call each (:meth:`RecordRepository.write_groups`):
    a group goes whole into one chunk unless it alone holds more than ``chunk`` writes
    (it is then cut into chunks of its own). Empty groups are left out.

    >>> r = lambda u: (MemoryRecord.model_construct(user_id=u), None, None)
    >>> {u: [len(c) for c in cs] for u, cs in packed([[r("a")] * 10, [r("a")] * 10, [r("b")] * 3], 16).items()}
    {'a': [10, 10], 'b': [3]}

    Raises:
        ValueError: a group mixes users.
    """
    by_user: dict[str, list[list[Write]]] = {}
    for group in groups:
        if not group:
            continue
        users = {w[0].user_id for w in group}
        if len(users) != 1:
            raise ValueError("a write group must hold one user's records")
        chunks = by_user.setdefault(users.pop(), [])
        if len(group) > chunk:
            chunks.extend(list(group[at:at + chunk]) for at in range(0, len(group), chunk))
        elif chunks and len(chunks[-1]) + len(group) <= chunk:
            chunks[-1].extend(group)
        else:
            chunks.append(list(group))
    return by_user


class RecordRepository:
    """See module docstring."""

    def __init__(self, client: aredis.Redis, keys: KeySpace, backend: IndexBackend):
        self.client = client
        self.keys = keys
        self.backend = backend

    async def fetch(self, user_id: str, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """Records of ``user_id`` among ``ids`` (missing ones left out), one command."""
        if not ids:
            return {}
        keys = [self.keys.record(user_id, doc_id) for doc_id in ids]
        replies = await scripts.run(self.client, FETCH_RECORDS, keys)
        return _records(ids, replies)  # type: ignore[arg-type]

    def queue_fetch(self, pipe: Pipeline, user_id: str, ids: Sequence[str]) -> Callable[[object], dict[str, MemoryRecord]]:
        """:meth:`fetch` queued on ``pipe`` (one :data:`FETCH_RECORDS` call, so other reads
        share its round trip); returns the function that turns that call's reply into
        :meth:`fetch`'s result."""
        FETCH_RECORDS.queue(pipe, [self.keys.record(user_id, doc_id) for doc_id in ids])
        return lambda reply: _records(ids, reply)  # type: ignore[arg-type]

    async def write(self, writes: Sequence[Write]) -> None:
        """Store new or changed records with their index entries: per user, one round trip
        with the global ``users`` set's SADD first, then the keys of up to
        :data:`WRITE_CHUNK` of the user's records changed atomically by one
        :class:`~gateway.memory.scripts.Batch` (a record with all its index entries is
        always in one batch; a bulk write of hundreds of records is several short script
        calls, so Redis serves other clients in between)."""
        by_user = sorted(writes, key=lambda w: w[0].user_id)
        for user_id, group in groupby(by_user, key=lambda w: w[0].user_id):
            mine = list(group)
            for at in range(0, len(mine), WRITE_CHUNK):
                batch = Batch()
                for record, vector, old in mine[at:at + WRITE_CHUNK]:
                    self._queue_write(batch, record, vector, old)
                self._queue_follows(batch, [w[0] for w in mine[at:at + WRITE_CHUNK]])
                await self._apply(batch, user_id)

    async def fetch_many(self, wanted: Mapping[str, Sequence[str]]) -> dict[tuple[str, str], MemoryRecord]:
        """Records among ``wanted`` (user id -> record ids) by ``(user id, record id)``,
        missing ones left out: one :data:`FETCH_RECORDS` per user, all in one round trip."""
        users = [(user_id, list(ids)) for user_id, ids in wanted.items() if ids]
        if not users:
            return {}

        def build(pipe: Pipeline) -> None:
            for user_id, ids in users:
                FETCH_RECORDS.queue(pipe, [self.keys.record(user_id, doc_id) for doc_id in ids])

        replies = await scripts.execute(self.client, build)
        return {(user_id, doc_id): record for (user_id, ids), reply in zip(users, replies, strict=True)
                for doc_id, record in _records(ids, reply).items()}

    async def write_groups(self, groups: Sequence[Sequence[Write]]) -> None:
        """Store several groups of writes (each group one user's: e.g. the records of one
        memorization job) in one round trip: per user, the ``users`` set's SADD, then its
        groups packed in order into :class:`~gateway.memory.scripts.Batch` script calls of
        up to :data:`WRITE_CHUNK` records, a group never split across two calls unless it
        alone holds more than :data:`WRITE_CHUNK` records (then it is chunked as
        :meth:`write` does). Each script call is atomic, so a group is written whole or
        not at all; a failed round trip may have applied some groups and not others.

        Raises:
            ValueError: a group mixes users.
        """
        by_user = packed(groups)
        if not by_user:
            return
        batches: list[Batch] = []
        for chunks in by_user.values():
            for chunk in chunks:
                batch = Batch()
                for record, vector, old in chunk:
                    self._queue_write(batch, record, vector, old)
                self._queue_follows(batch, [w[0] for w in chunk])
                batches.append(batch)

        def build(pipe: Pipeline) -> None:
            for user_id in by_user:
                pipe.sadd(self.keys.users, user_id)
            for batch in batches:
                batch.queue(pipe)

        await scripts.execute(self.client, build)

    async def _apply(self, batch: Batch, new_user: str | None = None) -> None:
        def build(pipe: Pipeline) -> None:
            if new_user is not None:
                pipe.sadd(self.keys.users, new_user)
            batch.queue(pipe)

        await scripts.execute(self.client, build)

    def _queue_write(self, batch: Batch, record: MemoryRecord, vector, old) -> None:
        key = self.keys.record(record.user_id, record.id)
        fields = record_to_hash(record, self.keys)
        gone = absent_fields(fields)
        if gone:
            batch.hdel(key, *gone)
        batch.hset(key, mapping=fields)
        part = Partition.of(record)
        batch.zadd(self.keys.listing(part), {record.id: 0})
        if part.friend_id is not None:
            batch.sadd(self.keys.friends(record.user_id), part.friend_id)
        self.backend.queue_put(batch, record, vector, old)

    def _queue_follows(self, batch: Batch, records: Sequence[MemoryRecord]) -> None:
        """The reverse links of ``records`` (module docstring): each live one whose
        ``metadata.follows`` is a well-formed memory id goes into that record's
        ``followed_by``."""
        for record in records:
            if record.retired:
                continue
            follows = record.metadata.get(FOLLOWS)
            if is_memory_id(follows) and follows != record.id:
                batch.follow(self.keys.record(record.user_id, follows), record.id, MAX_FOLLOWERS)

    async def remove(self, records: Sequence[MemoryRecord]) -> None:
        """Delete records and their index entries (one atomic :class:`Batch` per user)."""
        by_user = sorted(records, key=lambda r: r.user_id)
        for _user, group in groupby(by_user, key=lambda r: r.user_id):
            batch = Batch()
            for record in group:
                batch.delete(self.keys.record(record.user_id, record.id))
                batch.zrem(self.keys.listing(Partition.of(record)), record.id)
                self.backend.queue_remove(batch, record)
            await self._apply(batch)

    async def page_ids(self, parts: Sequence[Partition], before: str | None, limit: int) -> list[str]:
        """Up to ``limit`` ids of ``parts`` below ``before`` (exclusive), newest first.

        Ids start with their creation time in ms (:mod:`gateway.memory.ids`), so reverse
        lexicographic order of the listing zsets is newest first and stable.
        """
        top = f"({before}" if before else "+"
        pipe = self.client.pipeline(transaction=False)
        for part in parts:
            pipe.execute_command("ZRANGE", self.keys.listing(part), top, "-", "BYLEX", "REV", "LIMIT", 0, limit)
        merged = {m.decode() for reply in await pipe.execute() for m in reply}
        return sorted(merged, reverse=True)[:limit]

    async def count(self, parts: Iterable[Partition]) -> int:
        pipe = self.client.pipeline(transaction=False)
        for part in parts:
            pipe.zcard(self.keys.listing(part))
        return sum(await pipe.execute())

    async def partitions_of(self, user_id: str) -> list[Partition]:
        """The user's profile partition and one per friend that has event memories."""
        members: Any = await self.client.smembers(self.keys.friends(user_id))
        friends = sorted(f.decode() for f in members)
        return [Partition(user_id, None), *(Partition(user_id, f) for f in friends)]

    async def ids_of(self, part: Partition) -> list[str]:
        """Every record id of ``part``, oldest first."""
        ids: Any = await self.client.zrange(self.keys.listing(part), 0, -1)
        return [m.decode() for m in ids]

    async def users(self) -> list[str]:
        users: Any = await self.client.smembers(self.keys.users)
        return sorted(u.decode() for u in users)

    async def delete_user(self, user_id: str) -> int:
        """UNLINK every key of the user: each partition's records, listing and vector set,
        the keys in the user's registry (keyword postings), the registries themselves.
        Cost is proportional to the user's keys (a keyspace SCAN per user would be
        proportional to every tenant's: minutes at 1M memories). Returns the records
        deleted. Records are read from the listings before anything is removed, so an
        interrupted call leaves a state a second call finishes."""
        parts = await self.partitions_of(user_id)
        deleted = 0
        for part in parts:
            ids = await self.ids_of(part)
            deleted += len(ids)
            for start in range(0, len(ids), SCAN_BATCH):
                await self.client.unlink(*(self.keys.record(user_id, i) for i in ids[start:start + SCAN_BATCH]))
        registry = self.keys.registry(user_id)
        async for batch in self._batches(self.client.sscan_iter(registry, count=SCAN_BATCH)):
            await self.client.unlink(*batch)
        tail = [self.keys.vector_set(p) for p in parts] + [self.keys.listing(p) for p in parts]
        await self.client.unlink(*tail, registry, self.keys.friends(user_id))
        await self.client.srem(self.keys.users, user_id)
        return deleted

    @staticmethod
    async def _batches(keys) -> AsyncIterator[list[bytes]]:
        batch: list[bytes] = []
        async for key in keys:
            batch.append(key)
            if len(batch) >= SCAN_BATCH:
                yield batch
                batch = []
        if batch:
            yield batch
