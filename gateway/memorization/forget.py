"""Forgetting a user wins over late jobs.

:func:`forget_queue_state` (the ``memorize`` plugin's forget hook, run by
:func:`gateway.chain.forget.forget_user` before the store erases the memories) INCRements the
user's forget epoch, then deletes the user's memorization keys (seen hashes,
conversations, plans, done markers; never the epoch). Jobs
carry the epoch read at enqueue; a worker drops a job whose epoch is old and re-checks
after writing, erasing what it wrote if a forget slipped in between
(:mod:`gateway.memorization.processor`).
"""

from __future__ import annotations

from typing import Any

from gateway.memorization.keys import QueueKeys

SCAN_BATCH = 500


async def forget_queue_state(redis: Any, user_id: str, *, queue_prefix: str) -> None:
    """Make ``user_id``'s queued jobs stale and delete their queue state.

    ``queue_prefix``: the memorize configuration's ``queue.key_prefix``.

    Raises:
        redis errors: Redis is down (nothing is half-forgotten in a way a retry cannot
            finish: call again).
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
