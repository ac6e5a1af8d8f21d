"""Guarded memory searches, the core's side of :meth:`gateway.chain.sdk.Services.recall`
(:class:`gateway.chain.sdk.GuardedRecall`): a time limit, admission control
(:mod:`gateway.runtime.admission`, one queue per gateway and config) and the shared
circuit breaker (:mod:`gateway.runtime.breaker`, one per gateway and config, per node on a
cluster) around the store's search.

Every failure the plugins tolerate becomes :class:`RecallSkipped` with a short reason
that the chain puts into ``x-memgate-degraded`` (``<plugin>:memory_unavailable``):

- ``breaker_open``: the breaker refused the call (no I/O at all);
- ``memory_unavailable``: Redis or the embedding model is down (``MemoryUnavailable``);
- ``memory_timeout``: the store did not answer although it had a fair share of the time
  (admitted with at least ``min(admission.fair_ms, timeout / 2)`` left) and the gateway
  was not saturated (when it timed out, a search slot was free and nobody waited);
- ``overloaded``: the search could not be served before this request's deadline: shed by
  admission control, refused by a full embedding queue (``EmbeddingOverloaded``), or timed
  out after its time went to waiting (admitted with less than the fair share left, or
  while every slot was taken: under saturation the event loop and the embedding queue
  are part of every search's time, so the timeout says nothing certain about the store).

Trade-off: a store that hangs while the gateway is saturated shows as overload, not as
a breaker failure: newcomers are still shed at once (the hung searches raise the
service-time average), but up to ``max_concurrent`` searches at a time wait out their
limit; once the load falls below the slot count, the next timeouts open the breaker.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from gateway.chain.sdk import RecallSkipped, SearchSpec
from gateway.memory.embeddings.batching import EmbeddingOverloaded
from gateway.memory.records import MemoryRecord, ScoredMemory, Tenant
from gateway.runtime.admission import Admission, Overloaded
from gateway.runtime.breaker import CircuitBreaker, ShardedBreaker
from gateway.runtime.errors import MemoryUnavailable

__all__ = ['GuardedMemory', 'MemoryRecall']


class MemoryRecall(Protocol):
    """The memory store as recall reads it (:class:`gateway.chain.services.StoreRecall`):
    hybrid search of one tenant's memories, nothing else (no writes, deletes or listing).
    No deadline of its own: :class:`GuardedMemory` wraps each call in ``asyncio.timeout``.

    Raises (both methods): :class:`~gateway.runtime.errors.MemoryUnavailable` when Redis or the embedding model is
    down, :class:`~gateway.memory.embeddings.batching.EmbeddingOverloaded` when the embedding queue is full; ``ValueError`` for
    an option :meth:`search_many` does not know."""

    async def search(
        self, tenant: Tenant, query: str, top_k: int = 5, threshold: float = 0.0,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
    ) -> list[ScoredMemory]:
        """Up to ``top_k`` memories of ``tenant`` for ``query``, in ranking order
        (:class:`ScoredMemory`: ``score`` the ranking score, ``similarity`` the cosine in
        [0, 1] that ``threshold`` applies to), of the ``scopes`` and ``types`` given
        (None: all)."""
        ...

    async def search_many(
        self, tenant: Tenant, query: str, searches: Sequence[Mapping[str, Any]],
    ) -> list[list[ScoredMemory]]:
        """One :meth:`search` per entry of ``searches`` (its keyword arguments: ``top_k``,
        ``threshold``, ``scopes``, ``types``) for one ``query``, embedded once."""
        ...

    async def get_many(self, tenant: Tenant, memory_ids: Sequence[str]) -> list[MemoryRecord]:
        """The records of ``memory_ids`` visible to ``tenant`` (order kept, retired ones
        included, missing or invisible ones left out), one round trip
        (:meth:`gateway.memory.store.MemoryStore.get_many`)."""
        ...


class GuardedMemory:
    """:class:`gateway.chain.sdk.GuardedRecall`: ``search`` / ``search_many`` on the store
    (None: memory off) under a time limit, admission control and the breaker (see module
    docstring); ``get_many`` under the time limit and the breaker.
    ``admission`` None: no concurrency limit (tool loops)."""

    def __init__(
        self, store: MemoryRecall | None, breaker: CircuitBreaker | ShardedBreaker, timeout_s: float, admission: Admission | None = None
    ) -> None:
        self.store = store
        self.breaker = breaker
        self.timeout_s = timeout_s
        self.admission = admission

    async def search(
        self, tenant: Tenant, query: str, top_k: int, threshold: float,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
        time_left: float | None = None,
    ) -> list[ScoredMemory]:
        """The store's hits, best first. ``time_left``: seconds left of the request's
        deadline (``call.time_left()``), None for no cut.

        Raises:
            RecallSkipped: no store, breaker open, store down, store timeout, or overloaded.
        """
        (hits,) = await self.search_many(tenant, query, [SearchSpec(top_k, threshold, scopes, types)], time_left)
        return hits

    async def search_many(
        self, tenant: Tenant, query: str, specs: Sequence[SearchSpec], time_left: float | None = None,
    ) -> list[list[ScoredMemory]]:
        """One list of hits per spec, for one query: the searches run concurrently as
        one guarded call (one admission slot, one time limit, one breaker outcome), so a
        request that reads two scopes separately counts as one search everywhere.

        Raises:
            RecallSkipped: as :meth:`search`.
        """
        if self.store is None:
            raise RecallSkipped("memory_disabled")
        budget = self.timeout_s
        fair_s = budget / 2
        if self.admission is not None:
            fair_s = min(self.admission.config.fair_ms / 1000.0, budget / 2)
            if time_left is not None:
                budget = min(budget, time_left - self.admission.config.reserve_ms / 1000.0)
        elif time_left is not None:
            budget = min(budget, time_left)
        if budget <= 0:
            raise RecallSkipped("overloaded")
        breaker = self._breaker_for(tenant)
        if not breaker.allow():
            raise RecallSkipped("breaker_open")
        deadline = time.monotonic() + budget
        store_left = budget
        congested = False
        try:
            if self.admission is None:
                hits = await self._search(budget, tenant, query, specs)
            else:
                async with self.admission.slot(deadline):
                    store_left = deadline - time.monotonic()
                    try:
                        hits = await self._search(store_left, tenant, query, specs)
                    except TimeoutError:
                        congested = self._congested()  # while this search still holds its slot
                        raise
        except (Overloaded, EmbeddingOverloaded):
            breaker.abandon()
            raise RecallSkipped("overloaded") from None
        except MemoryUnavailable:
            breaker.failure()
            raise RecallSkipped("memory_unavailable") from None
        except TimeoutError:
            if store_left < fair_s or congested:  # time went to queueing: overload
                breaker.abandon()
                raise RecallSkipped("overloaded") from None
            breaker.failure()
            raise RecallSkipped("memory_timeout") from None
        except BaseException:  # cancelled (chain deadline, client gone) or a bug: re-raised
            breaker.abandon()
            raise
        breaker.success()
        return hits

    async def get_many(
        self, tenant: Tenant, memory_ids: Sequence[str], time_left: float | None = None,
    ) -> list[MemoryRecord]:
        """The store's records of ``memory_ids`` visible to ``tenant`` (order kept,
        retired ones included, the others left out; one round trip) under the time limit
        (``timeout_s``, cut to ``time_left``) and the breaker, without an admission slot
        (a read of a few known keys, no embedding). A timeout is not counted against the
        store (the searches judge it); the store down is.

        Raises:
            RecallSkipped: no store (``memory_disabled``), breaker open, store down
                (``memory_unavailable``), no time left or timed out (``memory_timeout``).
        """
        if self.store is None:
            raise RecallSkipped("memory_disabled")
        budget = self.timeout_s if time_left is None else min(self.timeout_s, time_left)
        if budget <= 0:
            raise RecallSkipped("memory_timeout")
        breaker = self._breaker_for(tenant)
        if not breaker.allow():
            raise RecallSkipped("breaker_open")
        try:
            async with asyncio.timeout(budget):
                records = await self.store.get_many(tenant, memory_ids)
        except MemoryUnavailable:
            breaker.failure()
            raise RecallSkipped("memory_unavailable") from None
        except TimeoutError:
            breaker.abandon()
            raise RecallSkipped("memory_timeout") from None
        except BaseException:
            breaker.abandon()
            raise
        breaker.success()
        return records

    def _breaker_for(self, tenant: Tenant) -> CircuitBreaker:
        """The breaker that judges ``tenant``'s store calls: the user's shard of a
        :class:`~gateway.runtime.breaker.ShardedBreaker` (its store node), else the one breaker."""
        return self.breaker.for_user(tenant.user_id) if isinstance(self.breaker, ShardedBreaker) else self.breaker

    def _congested(self) -> bool:
        """Every search slot is taken or searches wait for one: the gateway is saturated,
        so a slow search says more about queueing (event loop, embedding queue) than
        about the store."""
        if self.admission is None:
            return False
        queue = self.admission.queue
        return bool(queue.waiting) or queue.in_flight >= self.admission.config.max_concurrent

    async def _search(
        self, limit_s: float, tenant: Tenant, query: str, specs: Sequence[SearchSpec],
    ) -> list[list[ScoredMemory]]:
        options = [{"top_k": spec.top_k, "threshold": spec.threshold,
                    "scopes": None if spec.scopes is None else list(spec.scopes),
                    "types": None if spec.types is None else list(spec.types)} for spec in specs]
        assert self.store is not None  # search_many returned early without a store
        async with asyncio.timeout(max(0.0, limit_s)):
            if len(specs) == 1:
                (spec,) = specs
                return [await self.store.search(tenant, query, top_k=spec.top_k, threshold=spec.threshold,
                                                scopes=spec.scopes, types=spec.types)]
            return list(await self.store.search_many(tenant, query, options))  # the query embedded once
