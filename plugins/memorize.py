"""``memorize``: after each chat completion, enqueue a memorization job.

Capabilities (:mod:`gateway.chain.sdk`):

- :class:`~gateway.chain.sdk.CompletionObserver` ``on_complete``: runs after the client has the
  whole reply, streamed or not, or after it went away (such a job is marked
  ``partial``). It reads the client's request from ``call.original`` and the request
  span's W3C traceparent from ``call.trace_context`` (the job's span links to it).
- :class:`~gateway.chain.sdk.Lifecycle`: starts ``worker.in_serve`` workers with the gateway.
- :class:`~gateway.chain.sdk.BackgroundWorkers`: what ``memgate worker -n N`` runs.
- :class:`~gateway.chain.sdk.ConversationIngester`: ``POST /v1/memories`` with ``messages`` forms
  the chunk's memories with this configuration, synchronously
  (:meth:`gateway.chain.sdk.Memorizer.ingest`).
- :class:`~gateway.chain.sdk.Forgetter`: a forgotten user's queued jobs become stale (under this
  configuration's own ``queue.key_prefix``).

Request-path cost: hashing the candidate turns plus two Redis round trips when a turn is
new (the claim script's dedupe check, then the XADD to the user's queue shard,
:mod:`gateway.memorization.queue`), one when none is. Everything else (redaction,
the memory model, embedding, the store) happens in workers
(:mod:`gateway.memorization.worker`). Off for a call: per key with
``clients[].plugins.memorize.enabled: false``, or per request with the header
``x-memgate-memorize: off`` (``honour_header``).
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from typing import ClassVar

from gateway.chain.sdk import (
    AssembledReply,
    CallContext,
    IngestResult,
    MemorizeConfig,
    Memorizer,
    NewConversation,
    Services,
    Tenant,
)

__all__ = ["MemorizePlugin"]


class MemorizePlugin:
    """See module docstring."""

    name: ClassVar[str] = "memorize"
    Config = MemorizeConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: MemorizeConfig, services: Services) -> None:
        self.config = config
        self.memorization: Memorizer = services.memorization(config)
        self._busy = services.recall_saturated  # the request path's memory searches queue
        self._workers: contextlib.AsyncExitStack | None = None

    async def on_complete(self, call: CallContext, reply: AssembledReply) -> None:
        """Enqueue the exchange's new turns (nothing when every turn was seen before)."""
        await self.memorization.enqueue(call, reply, datetime.now(UTC))

    async def ingest(self, tenant: Tenant, chunk: NewConversation) -> IngestResult:
        """The chunk's memories, formed now (see module docstring). ``tenant.friend_id``
        is set (the API refuses a chunk without one, 422)."""
        return await self.memorization.ingest(tenant.user_id, tenant.friend_id or "", chunk, datetime.now(UTC))

    async def start(self) -> None:
        """Start ``worker.in_serve`` workers (none when memory has no store); they yield
        to the gateway's requests while its memory searches queue for admission."""
        stack = contextlib.AsyncExitStack()
        await stack.enter_async_context(self.memorization.workers(self.config.worker.in_serve, busy=self._busy))
        self._workers = stack

    async def stop(self) -> None:
        """Let in-serve workers finish the job in hand, then stop them."""
        stack, self._workers = self._workers, None
        if stack is not None:
            await stack.aclose()

    async def aclose(self) -> None:
        """Give buffered jobs a last chance (2 s), then stop the buffer's flusher."""
        await self.memorization.flush(2.0)
        await self.memorization.aclose()

    async def run_workers(self, count: int, stop: asyncio.Event) -> None:
        await self.memorization.run_workers(count, stop)

    async def forget_user(self, user_id: str) -> None:
        await self.memorization.forget_user(user_id)
