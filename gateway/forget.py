"""Forgetting a user: the one place both the admin API and the CLI go through.

Order matters (issue 5, "forget wins over a late job"): first the user's memorization
jobs still in the queue are made stale (their writes will be dropped by the worker),
then every stored record of the user is erased.
"""

from __future__ import annotations

from typing import Any


async def forget_user(redis: Any, store: Any, user_id: str) -> int:
    """Erase every memory of ``user_id`` (all friends); returns the records erased.

    Raises:
        MemoryUnavailable: Redis is unreachable (503); nothing is half-forgotten that a
            retry would not finish.
    """
    from gateway.memorization.forget import forget_user as forget_with_jobs

    return await forget_with_jobs(redis, store, user_id)
