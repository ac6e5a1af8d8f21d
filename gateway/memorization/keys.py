"""Redis key names of memorization.

Per-user keys live under ``<prefix>:{<escaped user>}:`` (a Redis Cluster hash tag, the
user id percent-encoded as in :func:`gateway.memory.keys.escape_key_part`); the queue is
sharded into ``queue.shards`` streams, shard ``i``'s keys under ``<prefix>:{<prefix>#<i>.<j>}:``
(their own hash tag; ``j`` is the smallest number putting the tag's hash slot in the
``i``-th of ``shards`` equal slot ranges, so the shards spread evenly over a cluster whose
primaries hold equal slot ranges, as ``redis-cli --cluster create`` makes them; ``#`` never
occurs in an escaped user id, so a shard's keys cannot be taken for a user's, nor match a
user's SCAN pattern):

=========================================  ==============================================
``mgq:{mgq#i.j}:jobs``                      job stream of shard i (consumer group ``memorize``)
``mgq:{mgq#i.j}:retry``                     zset of shard i's jobs waiting to be retried (score ms)
``mgq:{mgq#i.j}:dead``                      dead-letter stream of shard i (job + last error)
``mgq:{u}:epoch``                           forget epoch of user u (INCR by forget)
``mgq:{u}:seen:<f>``                        set of memorized turn hashes of (u, f)
``mgq:{u}:claims``                          hash job id -> claimed job no worker took yet
``mgq:{u}:claimed``                         zset job id -> claim time (ms)
``mgq:{u}:convs:<f>``                       hash conversation id -> first seen (ms)
``mgq:{u}:nconv:<f>``                       conversations counted for inference
``mgq:{u}:plan:<job>``                      the job's planned writes (JSON, replayed)
``mgq:{u}:done:<job>``                      the job's done marker
=========================================  ==============================================

A user's jobs always go to shard :meth:`QueueKeys.shard_of` (a stable hash of the user
id), so the jobs of one conversation stay in one stream, in order. Every script and
MULTI touches one slot only: a shard's three keys, or one user's keys.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from gateway.memory.keys import escape_key_part


@dataclass(frozen=True, slots=True)
class QueueKeys:
    """Key names under ``prefix``, for a queue of ``shards`` streams."""

    prefix: str
    shards: int = 1

    def shard_of(self, user_id: str) -> int:
        """The shard of every job of ``user_id``: the first 8 bytes of BLAKE2b of the UTF-8
        id, modulo ``shards`` (stable across processes and restarts, unlike ``hash()``).

        >>> QueueKeys("mgq", 1).shard_of("alice"), QueueKeys("mgq", 4).shard_of("alice")
        (0, 1)
        """
        if self.shards == 1:
            return 0
        digest = hashlib.blake2b(user_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self.shards

    def shard_base(self, shard: int) -> str:
        return f"{self.prefix}:{{{_shard_tags(self.prefix, self.shards)[shard]}}}:"

    def stream(self, shard: int) -> str:
        return self.shard_base(shard) + "jobs"

    def retry(self, shard: int) -> str:
        return self.shard_base(shard) + "retry"

    def dead(self, shard: int) -> str:
        return self.shard_base(shard) + "dead"

    def user_base(self, user_id: str) -> str:
        return f"{self.prefix}:{{{escape_key_part(user_id)}}}:"

    def epoch(self, user_id: str) -> str:
        return self.user_base(user_id) + "epoch"

    def seen(self, user_id: str, friend_id: str) -> str:
        return self.user_base(user_id) + "seen:" + escape_key_part(friend_id)

    def claims(self, user_id: str) -> str:
        """Hash job id -> the claimed job not yet taken by a worker (``{h, e, t}`` JSON)."""
        return self.user_base(user_id) + "claims"

    def claimed(self, user_id: str) -> str:
        """Zset job id -> when it was claimed (ms), or last queued again."""
        return self.user_base(user_id) + "claimed"

    def conversations(self, user_id: str, friend_id: str) -> str:
        return self.user_base(user_id) + "convs:" + escape_key_part(friend_id)

    def conversation_count(self, user_id: str, friend_id: str) -> str:
        return self.user_base(user_id) + "nconv:" + escape_key_part(friend_id)

    def plan(self, user_id: str, job_id: str) -> str:
        return self.user_base(user_id) + "plan:" + job_id

    def done(self, user_id: str, job_id: str) -> str:
        return self.user_base(user_id) + "done:" + job_id

    def forgettable_pattern(self, user_id: str) -> str:
        """SCAN pattern of every per-user key (the epoch is kept apart by the caller)."""
        return self.user_base(user_id) + "*"


@functools.lru_cache(maxsize=64)
def _shard_tags(prefix: str, shards: int) -> tuple[str, ...]:
    """Hash tag of each shard (see module docstring); ~``shards`` CRC16s per shard."""
    tags = []
    for shard in range(shards):
        low, high = (REDIS_CLUSTER_HASH_SLOTS * shard) // shards, (REDIS_CLUSTER_HASH_SLOTS * (shard + 1)) // shards
        j = 0
        while not low <= key_slot(f"{prefix}#{shard}.{j}".encode()) < high:
            j += 1
        tags.append(f"{prefix}#{shard}.{j}")
    return tuple(tags)
