"""Redis key names of memorization.

Per-user keys live under ``<prefix>:{<escaped user>}:`` (a Redis Cluster hash tag, the
user id percent-encoded as in :func:`gateway.memory.keys.escape_key_part`):

=========================================  ==============================================
``mgq:jobs``                                the job stream (consumer group ``memorize``)
``mgq:retry``                               zset of jobs waiting to be retried (score ms)
``mgq:dead``                                dead-letter stream (job + last error)
``mgq:{u}:epoch``                           forget epoch of user u (INCR by forget)
``mgq:{u}:seen:<f>``                        set of memorized turn hashes of (u, f)
``mgq:{u}:convs:<f>``                       hash conversation id -> first seen (ms)
``mgq:{u}:nconv:<f>``                       conversations counted for inference
``mgq:{u}:plan:<job>``                      the job's planned writes (JSON, replayed)
``mgq:{u}:done:<job>``                      the job's done marker
=========================================  ==============================================

The stream is global, so the enqueue script touches keys of several slots: on Redis
Cluster run one stream per shard (not done here; a single Redis serves this design).
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.memory.keys import escape_key_part


@dataclass(frozen=True, slots=True)
class QueueKeys:
    """Key names under ``prefix``."""

    prefix: str

    @property
    def stream(self) -> str:
        return f"{self.prefix}:jobs"

    @property
    def retry(self) -> str:
        return f"{self.prefix}:retry"

    @property
    def dead(self) -> str:
        return f"{self.prefix}:dead"

    def user_base(self, user_id: str) -> str:
        return f"{self.prefix}:{{{escape_key_part(user_id)}}}:"

    def epoch(self, user_id: str) -> str:
        return self.user_base(user_id) + "epoch"

    def seen(self, user_id: str, friend_id: str) -> str:
        return self.user_base(user_id) + "seen:" + escape_key_part(friend_id)

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
