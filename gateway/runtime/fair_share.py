"""Fair share of heavy per-request work between tenants: bounded concurrency per tenant
and overall.

Work whose cost grows with the request body (a conversation ingest, a lorebook import,
a large world-book scan, an admin import) takes a slot before it runs:
at most ``per_tenant`` slots per tenant and ``total`` slots overall, each queue FIFO
(asyncio semaphores). A tenant that sends many bulk calls at once waits behind its own
calls instead of filling every slot, so another tenant's request finds a free slot (or
waits behind at most ``total - per_tenant`` other tenants' calls). The slot bounds how
much of the machine one tenant's bulk calls use at a time; the work itself must still
yield the event loop (chunked, or off the loop in a thread) so that requests that take no
slot (ordinary chats) keep their latency.

Limits in force (README "Limits"): :data:`INGEST` for conversation ingests and imports,
:data:`WRITES` for single memory writes; a plugin may hold one of its own (world-book
scans off the loop, per plugin instance).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["INGEST", "WRITES", "FairShare"]


class FairShare:
    """Slots for heavy work: ``per_tenant`` per tenant, ``total`` overall (module docstring).
    One instance per kind of work; loop-bound (create and use it on one event loop)."""

    def __init__(self, per_tenant: int, total: int) -> None:
        if per_tenant < 1 or total < per_tenant:
            raise ValueError("need 1 <= per_tenant <= total")
        self.per_tenant = per_tenant
        self.total = total
        self._tenants: dict[str, tuple[asyncio.Semaphore, int]] = {}
        self._all: asyncio.Semaphore | None = None

    def in_use(self, tenant: str) -> int:
        """Calls of ``tenant`` holding or waiting for a slot."""
        found = self._tenants.get(tenant)
        return 0 if found is None else found[1]

    @asynccontextmanager
    async def slot(self, tenant: str) -> AsyncIterator[None]:
        """Hold one of ``tenant``'s slots and one overall slot for the ``async with``
        (the tenant's first: a tenant waiting on itself does not hold an overall slot)."""
        if self._all is None:
            self._all = asyncio.Semaphore(self.total)
        semaphore, users = self._tenants.get(tenant) or (asyncio.Semaphore(self.per_tenant), 0)
        self._tenants[tenant] = (semaphore, users + 1)
        try:
            async with semaphore, self._all:
                yield
        finally:
            semaphore, users = self._tenants[tenant]
            if users == 1:
                del self._tenants[tenant]  # no entry per tenant ever seen: bounded by calls in flight
            else:
                self._tenants[tenant] = (semaphore, users - 1)


#: Conversation ingests (``POST /v1/memories`` with ``messages``) and imports (lorebooks,
#: admin JSONL) of one gateway process: one at a time per tenant, four overall.
INGEST = (1, 4)
#: Single memory writes through the memory API (embedding plus an index write whose size
#: grows with the text and keywords): two at a time per tenant, sixteen overall.
WRITES = (2, 16)
