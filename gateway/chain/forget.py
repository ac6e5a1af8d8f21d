"""Forgetting a user: the one place both the admin API and the CLI go through.

Order matters (forget wins over a late job): first every ``forget_user`` hook
runs (:class:`gateway.chain.sdk.Forgetter`; e.g. a plugin's memorization makes the user's
queued jobs stale under its own configured queue prefix, a plugin drops what it cached
about the user; the gateway's
own Responses tenancy records go the same way,
:meth:`gateway.proxy.responses_owners.ResponseOwners.forget_user`), then every stored
record of the user is erased. A hook that raises (Redis down: 503) stops the forget
before the memories are erased; the Responses records' hook resumes where it stopped, so
a retry finishes the forget.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gateway.chain.sdk import Forgetter

__all__ = ["forget_user"]


async def forget_user(forgetters: Iterable[Forgetter], store: Any, user_id: str) -> int:
    """Run every hook of ``forgetters``, then erase every memory of ``user_id`` (all
    friends); returns the memory records erased.

    Raises:
        InvalidRequest: malformed user id (from the store).
        MemoryUnavailable / redis errors: Redis is unreachable (503); nothing is
            half-forgotten that a retry would not finish.
    """
    for forgetter in forgetters:
        await forgetter.forget_user(user_id)
    return await store.forget_user(user_id)
