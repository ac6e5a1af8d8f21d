"""The memorization service a plugin gets from ``Services.memorization(config)``.

One object per memorize configuration: the request-path enqueue (capture the new turns,
one Redis round trip), the workers (inside ``memgate serve`` or ``memgate worker``), and
forgetting a user's queue state. Everything is keyed by the configuration's own
``queue.key_prefix``, so a custom prefix is honoured everywhere (forget included).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from gateway.memorization.capture import capture_exchange, memorize_disabled
from gateway.memorization.config import MemorizeConfig
from gateway.memorization.forget import forget_queue_state
from gateway.memorization.runtime import queue_for, run_workers

__all__ = ["Memorization", "MemorizeConfig"]


class Memorization:
    """Queue, workers and forgetting for one :class:`MemorizeConfig`."""

    def __init__(self, config: MemorizeConfig, redis: Any, store: Any, upstreams: Any, telemetry: Any) -> None:
        self.config = config
        self.redis = redis
        self.store = store
        self.upstreams = upstreams
        self.telemetry = telemetry
        self.queue = queue_for(config, redis)

    async def enqueue(self, call: Any, reply: Any, now: datetime) -> str | None:
        """``call``: the :class:`gateway.sdk.CallContext`; ``reply``: its
        :class:`~gateway.sdk.AssembledReply` (typed loosely: the SDK imports this module).
        The stream entry id of the job, or None (nothing new, disabled by header, no
        parsed request). One Redis round trip (dedupe + XADD)."""
        request = call.original
        if request is None or (self.config.honour_header and memorize_disabled(call.headers)):
            return None
        principal = call.principal
        capture = capture_exchange(
            request, reply, headers=call.headers, user_id=principal.user_id,
            friend_id=principal.friend_id, request_id=call.request_id, received_at=now,
            traceparent=call.trace_context, max_candidates=self.config.queue.max_candidate_turns,
        )
        if not capture.turns:
            return None
        return await self.queue.enqueue(
            capture.header.model_dump_json(), principal.user_id, principal.friend_id,
            [(t.hash, t.model_dump_json()) for t in capture.turns], self.config.queue.seen_ttl_seconds,
        )

    @contextlib.asynccontextmanager
    async def workers(self, count: int) -> AsyncIterator[list[Any]]:
        """``count`` workers as tasks for the duration of the ``async with``."""
        if self.store is None or count <= 0:
            yield []
            return
        async with run_workers(self.config, self.redis, self.store, self.upstreams, count, self.telemetry) as workers:
            yield workers

    async def run_workers(self, count: int, stop: asyncio.Event) -> None:
        """Run ``count`` workers until ``stop`` is set (``memgate worker``)."""
        async with self.workers(count):
            await stop.wait()

    async def forget_user(self, user_id: str) -> None:
        """Make the user's queued jobs stale and drop their queue state (see
        :mod:`gateway.memorization.forget`)."""
        await forget_queue_state(self.redis, user_id, queue_prefix=self.config.queue.key_prefix)
