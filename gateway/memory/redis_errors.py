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

__all__ = ['UNAVAILABLE_ERRORS', 'redis_boundary']

#: A lost or timed-out connection; on Redis Cluster also a cluster that is down or a slot
#: not served yet while a failover runs (CLUSTERDOWN, TRYAGAIN, no node for the slot).
UNAVAILABLE_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, redis.exceptions.ClusterError,
                      redis.exceptions.TryAgainError, redis.exceptions.SlotNotCoveredError)


@contextmanager
def redis_boundary() -> Iterator[None]:
    """Inside: a lost or timed-out Redis connection raises MemoryUnavailable (503)."""
    try:
        yield
    except UNAVAILABLE_ERRORS as exc:
        raise MemoryUnavailable(f"memory store unavailable: {type(exc).__name__}: {exc}") from exc
