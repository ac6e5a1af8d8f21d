"""redis-py errors -> :class:`~gateway.runtime.errors.MemoryUnavailable`, once, at the store
boundary (architecture.md, "errors translated once at the boundary").

redis-py drops a broken connection and opens a new one on the next command, so once
Redis is back the same client works again: no restart needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis.exceptions

from gateway.runtime.errors import MemoryUnavailable

__all__ = ['UNAVAILABLE_ERRORS', 'redis_boundary', 'torn_down']

#: A lost or timed-out connection; on Redis Cluster also a cluster that is down or a slot
#: not served yet while a failover runs (CLUSTERDOWN, TRYAGAIN, no node for the slot).
UNAVAILABLE_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.ClusterError,
                      redis.exceptions.TryAgainError, redis.exceptions.SlotNotCoveredError)


def torn_down(exc: BaseException) -> bool:
    """``exc`` is redis-py failing on a connection torn down under a command: an
    ``AttributeError`` raised inside redis-py's own connection code (its stream writer or
    reader already ``None``: "'NoneType' object has no attribute 'writelines'"), which its
    cluster client lets through while a node dies and another coroutine drops the connection.
    Read from the frame that raised it (the traceback's last), so an ``AttributeError`` of the
    gateway's own code is never taken for one."""
    if not isinstance(exc, AttributeError):
        return False
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return str(tb.tb_frame.f_globals.get("__name__", "")).startswith(("redis.asyncio.connection", "redis.connection"))


@contextmanager
def redis_boundary() -> Iterator[None]:
    """Inside: a lost or timed-out Redis connection, or one torn down under a command
    (:func:`torn_down`), raises MemoryUnavailable (503)."""
    try:
        yield
    except UNAVAILABLE_ERRORS as exc:
        raise MemoryUnavailable(f"memory store unavailable: {type(exc).__name__}: {exc}") from exc
    except AttributeError as exc:
        if not torn_down(exc):
            raise
        raise MemoryUnavailable(f"memory store unavailable: connection torn down: {exc}") from exc
