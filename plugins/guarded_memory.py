"""Memory-store searches for the recall plugins: tenant from the caller, a time limit,
and the shared circuit breaker (:mod:`gateway.breaker`, ``services.breakers``).

Every failure the plugins tolerate becomes :class:`RecallSkipped` with a short reason
that the chain puts into ``x-memgate-degraded`` (``auto_recall:memory_unavailable``):

- ``breaker_open``: the breaker refused the call (no I/O at all);
- ``memory_unavailable``: Redis or the embedding model is down (``MemoryUnavailable``);
- ``memory_timeout``: the search took longer than the plugin's ``timeout_ms``.

The last two count as breaker failures. Programming errors are not caught here: they
reach the chain, which fails open and records them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from gateway.sdk import CallContext, CircuitBreaker, MemoryUnavailable, ScoredMemory, Skipped, Tenant

__all__ = ['GuardedMemory', 'RecallSkipped', 'caller_tenant']


class RecallSkipped(Skipped):
    """Memory was not consulted for this request; ``reason`` names why. A
    :class:`~gateway.sdk.Skipped`: raised out of a hook, the chain records it."""


def caller_tenant(call: CallContext) -> Tenant:
    """The memory tenant of the caller: ``Tenant(user_id, friend_id)`` from its key."""
    return Tenant(call.principal.user_id, call.principal.friend_id)


class GuardedMemory:
    """``search`` on the store under a timeout and the breaker (see module docstring)."""

    def __init__(self, store: Any, breaker: CircuitBreaker, timeout_s: float) -> None:
        self.store = store
        self.breaker = breaker
        self.timeout_s = timeout_s

    async def search(
        self, tenant: Tenant, query: str, top_k: int, threshold: float,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
    ) -> list[ScoredMemory]:
        """The store's hits, best first.

        Raises:
            RecallSkipped: no store, breaker open, store down, or past ``timeout_s``.
        """
        if self.store is None:
            raise RecallSkipped("memory_disabled")
        if not self.breaker.allow():
            raise RecallSkipped("breaker_open")
        try:
            async with asyncio.timeout(self.timeout_s):
                hits = await self.store.search(
                    tenant, query, top_k=top_k, threshold=threshold,
                    scopes=None if scopes is None else list(scopes),
                    types=None if types is None else list(types),
                )
        except MemoryUnavailable:
            self.breaker.failure()
            raise RecallSkipped("memory_unavailable") from None
        except TimeoutError:
            self.breaker.failure()
            raise RecallSkipped("memory_timeout") from None
        except BaseException:  # cancelled (chain deadline, client gone) or a bug: re-raised
            self.breaker.abandon()
            raise
        self.breaker.success()
        return hits
