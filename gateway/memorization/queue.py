"""The durable job queue on Redis Streams with one consumer group,
sharded into ``queue.shards`` streams: a user's jobs always go to shard
:meth:`~gateway.memorization.keys.QueueKeys.shard_of`, each shard has its own stream,
retry zset and dead-letter stream under one hash tag (one slot on Redis Cluster), and
every shard has the same consumer group. With one shard (the default) this is one stream.

Delivery is at-least-once:

- **enqueue** (request path, two round trips): a Lua script on the tenant's slot adds the
  candidate turns' hashes to the tenant's seen set (SADD says which are new) and returns
  the new turns with the user's forget epoch; then the job is XADDed with only the new
  turns to the user's shard (another slot on a cluster: one script may not touch both).
  Nothing is added when no turn is new. Ordering argument: the claim (SADD) comes first,
  so two concurrent requests carrying the same turn cannot both enqueue it. When the XADD
  fails, the claimed hashes are SREMed again, so a retry of the same turns (the
  gateway's buffer, or the next request's history) is not deduplicated away; when the
  SREM fails too (Redis unreachable), :class:`ClaimedNotQueued` carries the prepared job
  and the gateway's buffer retries only its XADD. The epoch read with the claim travels
  in the job, so a forget that runs between the two steps still wins (the worker finds
  the job stale). The claim script also records the job in the user's ``claims`` hash
  and its time in the ``claimed`` zset (same slot, no extra round trip); the worker that
  takes the job deletes both (in its first round trip). A claim older than ``queue.claim_stale_s`` is one whose gateway died
  between the two steps (or one waiting behind a long backlog): the user's next enqueue
  XADDs it again, so a killed gateway delays those turns instead of losing them (a
  duplicate is a no-op: same job id, done marker).
- **read**: ``XREADGROUP GROUP memorize <consumer> COUNT n STREAMS <shard> >`` on every
  shard in turn, starting one shard further each call (fair: no shard waits behind
  another); when every shard is empty, one read BLOCKs on the next shard in turn, so a
  job waits at most ``block_ms`` plus one sweep.
- **reclaim**: ``XAUTOCLAIM <shard> memorize <consumer> <min-idle> 0-0 COUNT n`` on every
  shard takes over jobs a dead or stuck worker was delivered but never acked;
  ``XPENDING`` gives their delivery counts so a job that keeps killing workers is
  dead-lettered too.
- **complete**: the job's done marker (the user's slot) is written, then one MULTI XACKs
  and XDELs the entry (the shard's slot; acked entries are deleted, so XLEN is the
  backlog). A crash in between leaves the entry pending; its redelivery finds the done
  marker and only acks.
- **retry**: one MULTI moves the job (attempt + 1, last error) into its shard's ``retry``
  zset scored by its not-before time and XACK/XDELs the entry;
  :meth:`JobQueue.promote_due` (a Lua script per shard, atomic) moves due jobs back.
- **dead-letter**: one MULTI XADDs job + error to the shard's ``dead`` stream and XACK/XDELs.

Entry ids the queue hands out (:meth:`JobQueue.read`, :meth:`JobQueue.reclaim`,
:meth:`JobQueue.dead_letters`) name their shard: ``<ms>-<seq>`` on shard 0,
``<ms>-<seq>@<shard>`` on the others (:func:`entry_ref`).

Privacy: a queued job holds the turns as said (redaction costs regex time the request
path does not have); they live in Redis only until the job is acked (the entry is
deleted) or parked for retry. Dead letters are written redacted.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aredis
import redis.exceptions

from gateway.memorization.jobs import Job, job_fields, job_from_fields
from gateway.memorization.keys import QueueKeys
from gateway.memory.scripts import Script
from gateway.memory.scripts import run as run_script

log = logging.getLogger("memgate.memorize")

Entry = tuple[str, dict[bytes, bytes]]

#: KEYS: seen set, forget epoch, claims hash, claim times zset (one user's slot). ARGV:
#: seen TTL s, now ms, stale ms, job id, header JSON, resume flag ('1': a retry of a job
#: whose earlier attempt may have claimed its turns), then (hash, turn JSON) pairs. Reply:
#: {epoch or '', claimed hashes, new turns, stale claims (JSON {h, e, t}: re-XADD them),
#: this job's own claim when resuming and no turn is new ('' otherwise)}.
#: Cost: the turns, plus O(log n) for the claims (at most 10 stale ones per call).
_CLAIM = """
local hashes, new = {}, {}
for i = 7, #ARGV, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    hashes[#hashes + 1] = ARGV[i]
    new[#new + 1] = ARGV[i + 1]
  end
end
if #ARGV >= 7 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local own = ''
if ARGV[6] == '1' and #new == 0 then
  own = redis.call('HGET', KEYS[3], ARGV[4]) or ''
  if own ~= '' then redis.call('ZADD', KEYS[4], tonumber(ARGV[2]), ARGV[4]) end
end
local now = tonumber(ARGV[2])
local stale = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[3]), 'LIMIT', 0, 10)) do
  local held = redis.call('HGET', KEYS[3], id)
  if held then
    redis.call('ZADD', KEYS[4], now, id)
    stale[#stale + 1] = held
  else
    redis.call('ZREM', KEYS[4], id)
  end
end
local epoch = ''
if #new > 0 then
  epoch = redis.call('GET', KEYS[2]) or '0'
  redis.call('HSET', KEYS[3], ARGV[4], cjson.encode({h = ARGV[5], e = epoch, t = '[' .. table.concat(new, ',') .. ']'}))
  redis.call('ZADD', KEYS[4], now, ARGV[4])
  redis.call('EXPIRE', KEYS[3], ARGV[1])
  redis.call('EXPIRE', KEYS[4], ARGV[1])
end
return {epoch, hashes, new, stale, own}
"""

_PROMOTE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, job in ipairs(due) do
  redis.call('XADD', KEYS[2], '*', 'j', job)
  redis.call('ZREM', KEYS[1], job)
end
return #due
"""

#: The two scripts, run like the store's (loaded on ``NOSCRIPT``, then ``EVAL`` with the
#: source: :mod:`gateway.memory.scripts`).
CLAIM_SCRIPT = Script("memorize_claim", _CLAIM)
PROMOTE_SCRIPT = Script("memorize_promote", _PROMOTE)


#: A stream entry id as Redis writes it: ``<ms>-<seq>`` in ASCII digits.
_STREAM_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


def entry_ms(entry_id: str) -> int:
    """Milliseconds part of a stream entry id (``<ms>-<seq>``, maybe ``@<shard>``)."""
    return int(entry_id.split("-", 1)[0])


def entry_ref(shard: int, entry_id: bytes | str) -> str:
    """The id the queue hands out for ``entry_id`` of ``shard``: bare on shard 0,
    ``<id>@<shard>`` otherwise.

    >>> entry_ref(0, b"1-0"), entry_ref(2, "1-0"), parse_ref("1-0@2"), parse_ref("1-0")
    ('1-0', '1-0@2', (2, '1-0'), (0, '1-0'))
    """
    entry = _id(entry_id)
    return entry if shard == 0 else f"{entry}@{shard}"


def parse_ref(ref: str) -> tuple[int, str]:
    """``(shard, stream entry id)`` of an id made by :func:`entry_ref`.

    Raises:
        ValueError: the shard part is not a number.
    """
    entry, _, shard = ref.partition("@")
    return (int(shard) if shard else 0), entry


class ClaimedNotQueued(Exception):
    """:meth:`JobQueue.enqueue` claimed turns (their hashes are in the seen set) but could
    neither XADD the job nor release the claim: ``fields`` is the job to XADD to
    ``shard`` later (:meth:`JobQueue.append`); ``__cause__`` is the Redis error."""

    def __init__(self, shard: int, fields: dict[str, str]) -> None:
        super().__init__(f"job claimed but not queued on shard {shard}")
        self.shard = shard
        self.fields = fields


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
    """See module docstring. One instance per Redis client; no state beyond key names and
    the read rotation."""

    def __init__(self, client: aredis.Redis, keys: QueueKeys, group: str) -> None:
        self.client = client
        self.keys = keys
        self.group = group
        self._next_shard = 0  # where the next read sweep starts

    @property
    def shards(self) -> range:
        return range(self.keys.shards)

    async def enqueue(self, header_json: str, user_id: str, friend_id: str,
                      turns: Sequence[tuple[str, str]], seen_ttl_s: int, claim_stale_s: float = 300.0,
                      now_ms: int | None = None, resume: bool = False) -> str | None:
        """XADD a job with the turns whose hash is new; ``turns`` = ``(hash, turn JSON)``.
        Claim first, then XADD (module docstring); claims older than ``claim_stale_s``
        whose job no worker has taken yet are XADDed again (``now_ms``: the clock, tests).

        ``resume``: this is a retry of a call that failed without an answer (a timeout
        while Redis stalled). Redis may still have run that call's claim once it was back:
        then no turn is new, but the job's own claim is held and no worker took it, so it
        is XADDed now (a duplicate of a job that was queued after all is a no-op for the
        worker: same job id, done marker). Without this the turns would wait for the
        stale-claim sweep, which only runs on the user's next enqueue.

        Returns the entry id (:func:`entry_ref`), or None when every turn was memorized before.

        Raises:
            redis errors: nothing is left claimed; retry the same call.
            ClaimedNotQueued: the turns are claimed; retry with :meth:`append`.
        """
        now = int(time.time() * 1000) if now_ms is None else now_ms
        job_id = json.loads(header_json).get("job_id", "")
        args: list[Any] = [seen_ttl_s, now, int(claim_stale_s * 1000), job_id, header_json, "1" if resume else "0"]
        for digest, turn_json in turns:
            args += [digest, turn_json]
        seen, claims, claimed = self.keys.seen(user_id, friend_id), self.keys.claims(user_id), self.keys.claimed(user_id)
        reply: Any = await run_script(self.client, CLAIM_SCRIPT, [seen, self.keys.epoch(user_id), claims, claimed], args)
        epoch, hashes, texts, stale, own = reply
        shard = self.keys.shard_of(user_id)
        for claim in stale:  # a gateway died between claim and XADD (or the backlog is long)
            held = json.loads(claim)
            with contextlib.suppress(Exception):  # kept: the next enqueue past claim_stale_s retries it
                await self.append(shard, {k: held[k] for k in ("h", "e", "t")})
        if not hashes:
            if own:  # resuming: the earlier attempt's claim ran, its XADD did not (see above)
                held = json.loads(own)
                return await self.append(shard, {k: held[k] for k in ("h", "e", "t")})
            return None
        fields = {"h": header_json, "e": _id(epoch), "t": "[" + ",".join(_id(t) for t in texts) + "]"}
        try:
            return await self.append(shard, fields)
        except Exception as exc:
            try:
                pipe = self.client.pipeline(transaction=False)
                pipe.srem(seen, *hashes)
                pipe.hdel(claims, job_id)
                pipe.zrem(claimed, job_id)
                await pipe.execute()
            except Exception:
                raise ClaimedNotQueued(shard, fields) from exc
            raise

    async def append(self, shard: int, fields: Mapping[str, str]) -> str:
        """XADD ``fields`` to ``shard``'s stream; returns the entry id (:func:`entry_ref`)."""
        entry = await self.client.xadd(self.keys.stream(shard), dict(fields))
        return entry_ref(shard, entry)

    async def push(self, job: Job) -> str:
        """XADD a whole job to its user's shard (inference jobs, tools)."""
        return await self.append(self.keys.shard_of(job.user_id), dict(job_fields(job)))

    async def ensure_group(self) -> None:
        """Create the consumer group (and stream) of every shard if missing, after moving
        what a pre-shard queue left (:meth:`adopt_legacy`); idempotent."""
        await self.adopt_legacy()
        for shard in self.shards:
            try:
                await self.client.xgroup_create(self.keys.stream(shard), self.group, id="0", mkstream=True)
            except redis.exceptions.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    async def adopt_legacy(self, batch: int = 500) -> int:
        """Move the jobs, retries and dead letters of the queue from before it was sharded (one stream
        ``<prefix>:jobs``, ``<prefix>:retry``, ``<prefix>:dead``) to their users' shards;
        returns how many were moved. Each is written to its shard before it is deleted
        from the old key, so a crash or a second worker doing the same can only duplicate
        a job (jobs are idempotent: the done marker), never lose one. Jobs delivered but
        not acked on the old stream are moved too (their worker's ack goes nowhere)."""
        old_stream, old_retry, old_dead = (f"{self.keys.prefix}:{name}" for name in ("jobs", "retry", "dead"))
        moved = 0
        for old, target in ((old_stream, self.keys.stream), (old_dead, self.keys.dead)):
            while True:
                rows: Any = await self.client.xrange(old, count=batch)
                if not rows:
                    break
                for entry_id, fields in rows:
                    await self.client.xadd(target(self._shard_of_fields(fields)), dict(fields))
                    await self.client.xdel(old, entry_id)
                    moved += 1
        while True:
            parked: Any = await self.client.zrange(old_retry, 0, batch - 1, withscores=True)
            if not parked:
                break
            for job_json, score in parked:
                await self.client.zadd(self.keys.retry(self._shard_of_fields({b"j": job_json})), {job_json: score})
                await self.client.zrem(old_retry, job_json)
                moved += 1
        if moved:
            log.warning("memorize queue %s: moved %d job(s) of the pre-shard queue to the shards", self.keys.prefix, moved)
        return moved

    def _shard_of_fields(self, fields: Mapping[Any, Any]) -> int:
        """Shard of a stream entry's job (a dead letter's ``job``); 0 when unreadable."""
        try:
            plain = {_id(k): v for k, v in fields.items()}
            if "job" in plain:  # a dead letter
                plain = {"j": plain["job"]}
            return self.keys.shard_of(job_from_fields(plain).user_id)
        except Exception:
            return 0

    async def read(self, consumer: str, count: int, block_ms: int | None) -> list[Entry]:
        """Up to ``count`` new entries for ``consumer`` (XREADGROUP ``>``): every shard in
        turn without blocking, starting one shard further each call; when all are empty,
        one read that blocks up to ``block_ms`` on the next shard in turn."""
        start = self._next_shard
        self._next_shard = (start + 1) % self.keys.shards
        order = [(start + i) % self.keys.shards for i in self.shards]
        entries: list[Entry] = []
        if self.keys.shards > 1:
            for shard in order:
                entries += await self._read_shard(shard, consumer, count - len(entries), None)
                if len(entries) >= count:
                    return entries
            if entries:
                return entries
        return await self._read_shard(order[0], consumer, count, block_ms)

    async def _read_shard(self, shard: int, consumer: str, count: int, block_ms: int | None) -> list[Entry]:
        reply: Any = await self.client.xreadgroup(
            self.group, consumer, {self.keys.stream(shard): ">"}, count=count, block=block_ms
        )
        return [(entry_ref(shard, i), f) for _, entries in reply or () for i, f in entries]

    async def reclaim(self, consumer: str, min_idle_ms: int, count: int) -> list[tuple[str, dict, int]]:
        """Entries idle for ``min_idle_ms`` taken over by ``consumer`` (XAUTOCLAIM, up to
        ``count`` per shard), each with its delivery count. Entries deleted meanwhile are
        acked and skipped."""
        out: list[tuple[str, dict, int]] = []
        for shard in self.shards:
            out += await self._reclaim_shard(shard, consumer, min_idle_ms, count)
        return out

    async def _reclaim_shard(self, shard: int, consumer: str, min_idle_ms: int, count: int) -> list[tuple[str, dict, int]]:
        stream = self.keys.stream(shard)
        reply = await self.client.xautoclaim(stream, self.group, consumer, min_idle_ms, "0-0", count=count)
        claimed = [(_id(i), f) for i, f in reply[1] if f]
        gone = [_id(i) for i in (reply[2] if len(reply) > 2 else ())]
        gone += [_id(i) for i, f in reply[1] if not f]
        if gone:
            await self.client.xack(stream, self.group, *gone)
        if not claimed:
            return []
        pending: Any = await self.client.xpending_range(
            stream, self.group, min=claimed[0][0], max=claimed[-1][0],
            count=len(claimed) * 4, consumername=consumer,
        )
        deliveries = {_id(p["message_id"]): int(p["times_delivered"]) for p in pending}
        return [(entry_ref(shard, i), f, deliveries.get(i, 1)) for i, f in claimed]

    async def own_pending(self, consumer: str, count: int) -> list[tuple[str, dict, int]]:
        """Entries delivered to ``consumer`` and not acked yet (its own pending entries
        list), up to ``count`` in all, shard by shard, each with its delivery count: the
        ids and counts from XPENDING, the fields by XRANGE (one pipelined round trip per
        shard). Neither touches the pending list, so reading it again and again (a worker
        that keeps failing to settle) neither counts as a delivery (XREADGROUP from id
        ``0`` would: ``max_deliveries`` would then dead-letter a job no worker died of) nor
        resets the idle time XAUTOCLAIM goes by. Entries deleted meanwhile are acked and
        skipped (as :meth:`reclaim`). Used by a worker whose batch failed half-way (Redis
        went away while it settled its jobs): it takes them up again as soon as Redis
        answers, instead of leaving them to another worker's XAUTOCLAIM after
        ``claim_min_idle_ms``."""
        out: list[tuple[str, dict, int]] = []
        for shard in self.shards:
            if len(out) >= count:
                break
            stream = self.keys.stream(shard)
            pending: Any = await self.client.xpending_range(
                stream, self.group, min="-", max="+", count=count - len(out), consumername=consumer)
            if not pending:
                continue
            ids = [_id(p["message_id"]) for p in pending]
            pipe = self.client.pipeline(transaction=False)  # one key: one slot
            for entry in ids:
                pipe.xrange(stream, min=entry, max=entry, count=1)
            rows: list[Any] = await pipe.execute()
            gone = [entry for entry, found in zip(ids, rows, strict=True) if not found or not found[0][1]]
            if gone:
                await self.client.xack(stream, self.group, *gone)
            out += [(entry_ref(shard, entry), found[0][1], int(p["times_delivered"]))
                    for entry, found, p in zip(ids, rows, pending, strict=True) if found and found[0][1]]
        return out

    async def is_done(self, job: Job) -> bool:
        return bool(await self.client.exists(self.keys.done(job.user_id, job.job_id)))

    def _settle(self, ref: str) -> tuple[Any, str, str]:
        """A MULTI pipeline (one shard: one slot) with the entry's XACK + XDEL queued
        last by :meth:`_ack`; returns ``(pipe, shard's stream, entry id)``."""
        shard, entry = parse_ref(ref)
        return self.client.pipeline(transaction=True), self.keys.stream(shard), entry

    def _ack(self, pipe: Any, stream: str, entry: str) -> None:
        pipe.xack(stream, self.group, entry)
        pipe.xdel(stream, entry)

    async def complete(self, entry_id: str, job: Job, done_ttl_s: int) -> None:
        """Done marker, then XACK + XDEL atomically (module docstring: the marker is the
        user's slot, the entry the shard's)."""
        await self.client.set(self.keys.done(job.user_id, job.job_id), entry_id, ex=done_ttl_s)
        pipe, stream, entry = self._settle(entry_id)
        self._ack(pipe, stream, entry)
        await pipe.execute()

    async def complete_many(self, entries: Sequence[tuple[str, Job]], done_ttl_s: int) -> None:
        """:meth:`complete` for several entries in two round trips: every done marker
        (one pipeline), then per shard one MULTI that XACKs and XDELs its entries (the
        marker of each job is written before its entry is acked, as :meth:`complete` does)."""
        if not entries:
            return
        pipe = self.client.pipeline(transaction=False)
        for entry_id, job in entries:
            pipe.set(self.keys.done(job.user_id, job.job_id), entry_id, ex=done_ttl_s)
        await pipe.execute()
        by_shard: dict[int, list[str]] = {}
        for entry_id, _job in entries:
            shard, entry = parse_ref(entry_id)
            by_shard.setdefault(shard, []).append(entry)
        for shard, ids in by_shard.items():
            pipe = self.client.pipeline(transaction=True)
            pipe.xack(self.keys.stream(shard), self.group, *ids)
            pipe.xdel(self.keys.stream(shard), *ids)
            await pipe.execute()

    async def drop(self, entry_id: str) -> None:
        """XACK + XDEL without a done marker (stale or unreadable entries)."""
        pipe, stream, entry = self._settle(entry_id)
        self._ack(pipe, stream, entry)
        await pipe.execute()

    async def retry(self, entry_id: str, job: Job, not_before_ms: int) -> None:
        """Park ``job`` in its shard's retry zset until ``not_before_ms``; XACK + XDEL the entry."""
        pipe, stream, entry = self._settle(entry_id)
        pipe.zadd(self.keys.retry(parse_ref(entry_id)[0]), {job.model_dump_json(): not_before_ms})
        self._ack(pipe, stream, entry)
        await pipe.execute()

    async def dead_letter(self, entry_id: str, job_json: str, error: str) -> None:
        """XADD ``{job, error}`` to the shard's dead-letter stream; XACK + XDEL the entry."""
        pipe, stream, entry = self._settle(entry_id)
        pipe.xadd(self.keys.dead(parse_ref(entry_id)[0]), {"job": job_json, "error": error[:4000], "entry": entry_id})
        self._ack(pipe, stream, entry)
        await pipe.execute()

    async def promote_due(self, now_ms: int | None = None, count: int = 100) -> int:
        """Move retries whose time has come back onto their shard's stream; returns how many."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        moved = 0
        for shard in self.shards:
            promoted: Any = await run_script(self.client, PROMOTE_SCRIPT, [self.keys.retry(shard), self.keys.stream(shard)],
                                             [now, count])
            moved += int(promoted)
        return moved

    async def dead_letters(self, count: int = 100) -> list[tuple[str, dict[str, str]]]:
        """The oldest ``count`` dead letters over every shard as ``(id, {job, error, entry})``."""
        rows: list[tuple[str, dict[str, str]]] = []
        for shard in self.shards:
            found: Any = await self.client.xrange(self.keys.dead(shard), count=count)
            rows += [(entry_ref(shard, i), {k.decode(): v.decode() for k, v in f.items()}) for i, f in found]
        rows.sort(key=lambda row: tuple(int(p) for p in parse_ref(row[0])[1].split("-")))
        return rows[:count]

    def _dead_key(self, dead_id: str) -> tuple[str, str] | None:
        """``(dead-letter stream, entry id)`` of ``dead_id``; None when it names no shard or
        is no stream id Redis accepts (``<ms>-<seq>``, each 64-bit unsigned)."""
        try:
            shard, entry = parse_ref(dead_id)
        except ValueError:
            return None
        if _STREAM_ID.fullmatch(entry) is None or not all(int(p) < 2**64 for p in entry.split("-")):
            return None
        return (self.keys.dead(shard), entry) if 0 <= shard < self.keys.shards else None

    async def read_dead_letter(self, dead_id: str) -> dict[str, str] | None:
        """One dead letter ``{job, error, entry}`` by its id (:meth:`dead_letters`), None
        when there is none (admin console)."""
        where = self._dead_key(dead_id)
        if where is None:
            return None
        rows: Any = await self.client.xrange(where[0], min=where[1], max=where[1], count=1)
        return {k.decode(): v.decode() for k, v in rows[0][1].items()} if rows else None

    async def requeue_dead(self, dead_id: str, job: Job) -> str | None:
        """Put a dead letter's ``job`` back on its shard's job stream (attempts reset, last
        error kept) and delete the letter, atomically (MULTI). Returns the new entry id,
        None when the letter was gone (nothing is queued then)."""
        where = self._dead_key(dead_id)
        if where is None:
            return None
        shard = parse_ref(dead_id)[0]
        fresh = job.model_copy(update={"attempt": 0})
        pipe = self.client.pipeline(transaction=True)
        pipe.xdel(where[0], where[1])
        pipe.xadd(self.keys.stream(shard), dict(job_fields(fresh)))
        deleted, entry = await pipe.execute()
        if not deleted:  # raced with another retry or drop: undo the XADD
            await self.client.xdel(self.keys.stream(shard), entry)
            return None
        return entry_ref(shard, entry)

    async def drop_dead(self, dead_id: str) -> bool:
        """Delete one dead letter; False when there was none."""
        where = self._dead_key(dead_id)
        return bool(where and await self.client.xdel(where[0], where[1]))

    async def consumers(self) -> list[dict[str, Any]]:
        """The consumer group's consumers over every shard (``XINFO CONSUMERS``): ``name``,
        ``pending`` (delivered, not acked; summed over shards) and ``idle_ms`` (since its
        last read attempt on any shard), workers of ``memgate serve`` and ``memgate worker``
        processes alike; [] before the group exists."""
        merged: dict[str, dict[str, Any]] = {}
        for shard in self.shards:
            try:
                rows: Any = await self.client.xinfo_consumers(self.keys.stream(shard), self.group)
            except redis.exceptions.ResponseError:
                continue
            for r in rows:
                name = _id(r["name"])
                seen = merged.setdefault(name, {"name": name, "pending": 0, "idle_ms": int(r["idle"])})
                seen["pending"] += int(r["pending"])
                seen["idle_ms"] = min(seen["idle_ms"], int(r["idle"]))
        return list(merged.values())

    async def stats(self, now_ms: int | None = None) -> QueueStats:
        """See :class:`QueueStats` (sums over shards; lag: the oldest entry of any shard);
        one pipelined round trip plus one XPENDING per shard."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        pipe = self.client.pipeline(transaction=False)
        for shard in self.shards:
            pipe.xlen(self.keys.stream(shard))
            pipe.xrange(self.keys.stream(shard), count=1)
            pipe.zcard(self.keys.retry(shard))
            pipe.xlen(self.keys.dead(shard))
        replies = await pipe.execute()
        length = retrying = dead = pending = 0
        oldest: int | None = None
        for shard in self.shards:
            n, first, parked, letters = replies[4 * shard:4 * shard + 4]
            length, retrying, dead = length + int(n), retrying + int(parked), dead + int(letters)
            if first:
                ms = entry_ms(_id(first[0][0]))
                oldest = ms if oldest is None else min(oldest, ms)
            try:
                pending += int((await self.client.xpending(self.keys.stream(shard), self.group))["pending"])
            except redis.exceptions.ResponseError:
                pass
        lag = max(0.0, (now - oldest) / 1000.0) if oldest is not None else 0.0
        return QueueStats(length, pending, retrying, dead, lag)

    async def drained(self) -> bool:
        """Nothing waiting, in flight or parked for retry."""
        stats = await self.stats()
        return stats.length == 0 and stats.retrying == 0


def _id(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
