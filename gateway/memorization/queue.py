"""The durable job queue on a Redis Stream with one consumer group (issue 5, item 2).

Delivery is at-least-once:

- **enqueue** (request path, one round trip): a Lua script adds the candidate turns'
  hashes to the tenant's seen set (SADD says which are new), reads the user's forget
  epoch and XADDs the job with only the new turns; nothing is added when no turn is new.
- **read**: ``XREADGROUP GROUP memorize <consumer> COUNT n BLOCK ms STREAMS jobs >``.
- **reclaim**: ``XAUTOCLAIM jobs memorize <consumer> <min-idle> 0-0 COUNT n`` takes over
  jobs a dead or stuck worker was delivered but never acked; ``XPENDING`` gives their
  delivery counts so a job that keeps killing workers is dead-lettered too.
- **complete**: one MULTI writes the job's done marker, XACKs and XDELs the entry (acked
  entries are deleted, so XLEN is the backlog).
- **retry**: one MULTI moves the job (attempt + 1, last error) into the ``retry`` zset
  scored by its not-before time and XACK/XDELs the entry; :meth:`JobQueue.promote_due`
  (a Lua script, atomic) moves due jobs back onto the stream.
- **dead-letter**: one MULTI XADDs job + error to the ``dead`` stream and XACK/XDELs.

Privacy: a queued job holds the turns as said (redaction costs regex time the request
path does not have); they live in Redis only until the job is acked (the entry is
deleted) or parked for retry. Dead letters are written redacted.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aredis
import redis.exceptions

from gateway.memorization.jobs import Job, job_fields
from gateway.memorization.keys import QueueKeys

Entry = tuple[str, dict[bytes, bytes]]

_ENQUEUE = """
local new = {}
for i = 3, #ARGV, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then new[#new + 1] = ARGV[i + 1] end
end
if #ARGV >= 3 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if #new == 0 then return false end
local epoch = redis.call('GET', KEYS[2]) or '0'
return redis.call('XADD', KEYS[3], '*', 'h', ARGV[2], 'e', epoch, 't', '[' .. table.concat(new, ',') .. ']')
"""

_PROMOTE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, job in ipairs(due) do
  redis.call('XADD', KEYS[2], '*', 'j', job)
  redis.call('ZREM', KEYS[1], job)
end
return #due
"""


def entry_ms(entry_id: str) -> int:
    """Milliseconds part of a stream entry id (``<ms>-<seq>``)."""
    return int(entry_id.split("-", 1)[0])


@dataclass(frozen=True)
class QueueStats:
    """Queue state for gauges: backlog (XLEN: waiting + delivered, not acked), pending
    (delivered, not acked), parked retries, dead letters, and lag: the age in seconds of
    the oldest entry on the stream (a retried job re-enters with a fresh entry id)."""

    length: int
    pending: int
    retrying: int
    dead: int
    lag_seconds: float


class JobQueue:
    """See module docstring. One instance per Redis client; no state beyond key names."""

    def __init__(self, client: aredis.Redis, keys: QueueKeys, group: str) -> None:
        self.client = client
        self.keys = keys
        self.group = group
        self._enqueue = client.register_script(_ENQUEUE)
        self._promote = client.register_script(_PROMOTE)

    async def enqueue(self, header_json: str, user_id: str, friend_id: str,
                      turns: Sequence[tuple[str, str]], seen_ttl_s: int) -> str | None:
        """XADD a job with the turns whose hash is new; ``turns`` = ``(hash, turn JSON)``.

        Returns the stream entry id, or None when every turn was memorized before.
        """
        args: list[Any] = [seen_ttl_s, header_json]
        for digest, turn_json in turns:
            args += [digest, turn_json]
        keys = [self.keys.seen(user_id, friend_id), self.keys.epoch(user_id), self.keys.stream]
        result = await self._enqueue(keys=keys, args=args)
        return result.decode() if isinstance(result, bytes) else result

    async def push(self, job: Job) -> str:
        """XADD a whole job (inference jobs, tools)."""
        entry = await self.client.xadd(self.keys.stream, dict(job_fields(job)))  # type: ignore[arg-type]  # redis-py stubs: invariant dict
        return entry.decode() if isinstance(entry, bytes) else entry

    async def ensure_group(self) -> None:
        """Create the consumer group (and stream) if missing; idempotent."""
        try:
            await self.client.xgroup_create(self.keys.stream, self.group, id="0", mkstream=True)
        except redis.exceptions.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read(self, consumer: str, count: int, block_ms: int | None) -> list[Entry]:
        """New entries for ``consumer`` (XREADGROUP ``>``); blocks up to ``block_ms``."""
        reply: Any = await self.client.xreadgroup(
            self.group, consumer, {self.keys.stream: ">"}, count=count, block=block_ms
        )
        return [(_id(i), f) for _, entries in reply or () for i, f in entries]

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[tuple[str, dict, int]]:
        """Entries idle for ``min_idle_ms`` taken over by ``consumer`` (XAUTOCLAIM), each
        with its delivery count. Entries deleted meanwhile are acked and skipped."""
        reply = await self.client.xautoclaim(
            self.keys.stream, self.group, consumer, min_idle_ms, "0-0", count=count
        )
        claimed = [(_id(i), f) for i, f in reply[1] if f]
        gone = [_id(i) for i in (reply[2] if len(reply) > 2 else ())]
        gone += [_id(i) for i, f in reply[1] if not f]
        if gone:
            await self.client.xack(self.keys.stream, self.group, *gone)
        if not claimed:
            return []
        pending: Any = await self.client.xpending_range(
            self.keys.stream, self.group, min=claimed[0][0], max=claimed[-1][0],
            count=len(claimed) * 4, consumername=consumer,
        )
        deliveries = {_id(p["message_id"]): int(p["times_delivered"]) for p in pending}
        return [(i, f, deliveries.get(i, 1)) for i, f in claimed]

    async def is_done(self, job: Job) -> bool:
        return bool(await self.client.exists(self.keys.done(job.user_id, job.job_id)))

    async def complete(self, entry_id: str, job: Job, done_ttl_s: int) -> None:
        """Done marker + XACK + XDEL, atomically."""
        pipe = self.client.pipeline(transaction=True)
        pipe.set(self.keys.done(job.user_id, job.job_id), entry_id, ex=done_ttl_s)
        pipe.xack(self.keys.stream, self.group, entry_id)
        pipe.xdel(self.keys.stream, entry_id)
        await pipe.execute()

    async def drop(self, entry_id: str) -> None:
        """XACK + XDEL without a done marker (stale or unreadable entries)."""
        pipe = self.client.pipeline(transaction=True)
        pipe.xack(self.keys.stream, self.group, entry_id)
        pipe.xdel(self.keys.stream, entry_id)
        await pipe.execute()

    async def retry(self, entry_id: str, job: Job, not_before_ms: int) -> None:
        """Park ``job`` in the retry zset until ``not_before_ms``; XACK + XDEL the entry."""
        pipe = self.client.pipeline(transaction=True)
        pipe.zadd(self.keys.retry, {job.model_dump_json(): not_before_ms})
        pipe.xack(self.keys.stream, self.group, entry_id)
        pipe.xdel(self.keys.stream, entry_id)
        await pipe.execute()

    async def dead_letter(self, entry_id: str, job_json: str, error: str) -> None:
        """XADD ``{job, error}`` to the dead-letter stream; XACK + XDEL the entry."""
        pipe = self.client.pipeline(transaction=True)
        pipe.xadd(self.keys.dead, {"job": job_json, "error": error[:4000], "entry": entry_id})
        pipe.xack(self.keys.stream, self.group, entry_id)
        pipe.xdel(self.keys.stream, entry_id)
        await pipe.execute()

    async def promote_due(self, now_ms: int | None = None, count: int = 100) -> int:
        """Move retries whose time has come back onto the stream; returns how many."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        return int(await self._promote(keys=[self.keys.retry, self.keys.stream], args=[now, count]))

    async def dead_letters(self, count: int = 100) -> list[tuple[str, dict[str, str]]]:
        """The oldest ``count`` dead letters as ``(id, {job, error, entry})``."""
        rows: Any = await self.client.xrange(self.keys.dead, count=count)
        return [(_id(i), {k.decode(): v.decode() for k, v in f.items()}) for i, f in rows]

    async def read_dead_letter(self, dead_id: str) -> dict[str, str] | None:
        """One dead letter ``{job, error, entry}`` by its id on the dead-letter stream,
        None when there is none (admin console)."""
        rows: Any = await self.client.xrange(self.keys.dead, min=dead_id, max=dead_id, count=1)
        return {k.decode(): v.decode() for k, v in rows[0][1].items()} if rows else None

    async def requeue_dead(self, dead_id: str, job: Job) -> str | None:
        """Put a dead letter's ``job`` back on the job stream (attempts reset, last error
        kept) and delete the letter, atomically (MULTI). Returns the new entry id, None
        when the letter was gone (nothing is queued then)."""
        fresh = job.model_copy(update={"attempt": 0})
        pipe = self.client.pipeline(transaction=True)
        pipe.xdel(self.keys.dead, dead_id)
        pipe.xadd(self.keys.stream, dict(job_fields(fresh)))  # type: ignore[arg-type]  # redis-py stubs: invariant dict
        deleted, entry = await pipe.execute()
        if not deleted:  # raced with another retry or drop: undo the XADD
            await self.client.xdel(self.keys.stream, entry)
            return None
        return _id(entry)

    async def drop_dead(self, dead_id: str) -> bool:
        """Delete one dead letter; False when there was none."""
        return bool(await self.client.xdel(self.keys.dead, dead_id))

    async def consumers(self) -> list[dict[str, Any]]:
        """The consumer group's consumers (``XINFO CONSUMERS``): ``name``, ``pending``
        (delivered, not acked) and ``idle_ms`` (since its last read attempt), workers of
        ``memgate serve`` and ``memgate worker`` processes alike; [] before the group exists."""
        try:
            rows: Any = await self.client.xinfo_consumers(self.keys.stream, self.group)
        except redis.exceptions.ResponseError:
            return []
        return [{"name": _id(r["name"]), "pending": int(r["pending"]), "idle_ms": int(r["idle"])} for r in rows]

    async def stats(self, now_ms: int | None = None) -> QueueStats:
        """See :class:`QueueStats`; one pipelined round trip."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        pipe = self.client.pipeline(transaction=False)
        pipe.xlen(self.keys.stream)
        pipe.xrange(self.keys.stream, count=1)
        pipe.zcard(self.keys.retry)
        pipe.xlen(self.keys.dead)
        length, first, retrying, dead = await pipe.execute()
        try:
            pending = (await self.client.xpending(self.keys.stream, self.group))["pending"]
        except redis.exceptions.ResponseError:
            pending = 0
        lag = max(0.0, (now - entry_ms(_id(first[0][0]))) / 1000.0) if first else 0.0
        return QueueStats(int(length), int(pending), int(retrying), int(dead), lag)

    async def drained(self) -> bool:
        """Nothing waiting, in flight or parked for retry."""
        stats = await self.stats()
        return stats.length == 0 and stats.retrying == 0


def _id(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
