"""Forgetting a user wins over late jobs (issue 5, item 6).

:func:`forget_user` (called by the admin API) first INCRements the user's forget epoch,
then deletes the user's memorization keys (seen hashes, conversations, plans, done
markers; never the epoch) and finally erases the memories (``store.forget_user``). Jobs
carry the epoch read at enqueue; a worker drops a job whose epoch is old and re-checks
after writing, erasing what it wrote if a forget slipped in between
(:mod:`gateway.memorization.processor`).
"""

from __future__ import annotations

from typing import Any

from gateway.memorization.keys import QueueKeys

SCAN_BATCH = 500


async def forget_user(redis: Any, store: Any, user_id: str, *, queue_prefix: str = "mgq") -> int:
    """Forget ``user_id`` everywhere; returns the memory records erased.

    ``queue_prefix`` must match ``memorize.config.queue.key_prefix`` (default ``mgq``).

    Raises:
        gateway.errors.InvalidRequest: malformed user id (from the store).
        gateway.errors.MemoryUnavailable / redis errors: Redis is down (nothing is
            half-forgotten in a way a retry cannot finish: call again).
    """
    keys = QueueKeys(queue_prefix)
    epoch_key = keys.epoch(user_id)
    await redis.incr(epoch_key)
    batch: list[Any] = []
    async for key in redis.scan_iter(match=keys.forgettable_pattern(user_id), count=SCAN_BATCH):
        name = key.decode() if isinstance(key, bytes) else key
        if name != epoch_key:
            batch.append(key)
        if len(batch) >= SCAN_BATCH:
            await redis.unlink(*batch)
            batch = []
    if batch:
        await redis.unlink(*batch)
    return await store.forget_user(user_id)
