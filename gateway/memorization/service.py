"""The memorization service a plugin gets from ``Services.memorization(config)``.

One object per memorize configuration: the request-path enqueue (capture the new turns,
one Redis round trip), the workers (inside ``memgate serve`` or ``memgate worker``), and
forgetting a user's queue state. Everything is keyed by the configuration's own
``queue.key_prefix``, so a custom prefix is honoured everywhere (forget included).

No accepted turn is lost to a short Redis outage: an enqueue that fails (Redis down,
connection pool exhausted, timeout) puts the captured job in a bounded in-process buffer
(``queue.buffer_max_jobs``) that a flusher task retries in order with backoff (50 ms
doubling up to ``queue.buffer_retry_max_s``). Past the bound the oldest job is shed and
counted (``memgate_memorize_shed_total``, logged). Forgetting a user drops their buffered
jobs first, so a forget still wins. Jobs still buffered when the gateway stops are
counted as shed (they live in process memory only).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis.exceptions

from gateway.errors import MemoryUnavailable
from gateway.memorization.capture import capture_exchange, memorize_disabled
from gateway.memorization.config import MemorizeConfig
from gateway.memorization.forget import forget_queue_state
from gateway.memorization.runtime import queue_for, run_workers

__all__ = ["Memorization", "MemorizeConfig"]

log = logging.getLogger("memgate.memorize")

#: What a failed enqueue raises when Redis cannot take the job now (retryable).
RETRYABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, MemoryUnavailable, OSError, TimeoutError)


@dataclass(frozen=True)
class _Pending:
    """A captured job waiting for Redis."""

    header_json: str
    user_id: str
    friend_id: str
    turns: tuple[tuple[str, str], ...]


class Memorization:
    """Queue, workers, buffer and forgetting for one :class:`MemorizeConfig`."""

    def __init__(self, config: MemorizeConfig, redis: Any, store: Any, upstreams: Any, telemetry: Any) -> None:
        self.config = config
        self.redis = redis
        self.store = store
        self.upstreams = upstreams
        self.telemetry = telemetry
        self.queue = queue_for(config, redis)
        self._buffer: deque[_Pending] = deque()
        self._wake = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None

    @property
    def buffered(self) -> int:
        """Jobs waiting in process for Redis."""
        return len(self._buffer)

    async def enqueue(self, call: Any, reply: Any, now: datetime) -> str | None:
        """``call``: the :class:`gateway.sdk.CallContext`; ``reply``: its
        :class:`~gateway.sdk.AssembledReply` (typed loosely: the SDK imports this module).

        Returns the stream entry id of the job, None when there was nothing new (or it was
        disabled by header, or the body did not parse), or ``"buffered"`` when Redis could
        not take it now (see module docstring). One Redis round trip (dedupe + XADD).
        """
        request = call.original
        if request is None or (self.config.honour_header and memorize_disabled(call.headers)):
            return None
        principal = call.principal
        capture = capture_exchange(
            request, reply, headers=call.headers, user_id=principal.user_id,
            friend_id=principal.friend_id, request_id=call.request_id, received_at=now,
            traceparent=call.trace_context, max_candidates=self.config.queue.max_candidate_turns,
            max_chars=self.config.redaction.max_chars,
        )
        if not capture.turns:
            return None
        header = capture.header
        settings = getattr(call, "settings", None)
        if settings is not None and not settings.inference:  # the user's seed 000 P4 switch
            header = header.model_copy(update={"inference": False})
        pending = _Pending(
            header.model_dump_json(), principal.user_id, principal.friend_id,
            tuple((t.hash, t.model_dump_json()) for t in capture.turns),
        )
        if self._buffer:  # keep order: older buffered jobs go first
            self._hold(pending)
            return "buffered"
        try:
            return await self._push(pending)
        except RETRYABLE as exc:
            log.warning("memorize enqueue failed (%s); buffering the job", type(exc).__name__)
            self._hold(pending)
            return "buffered"

    async def _push(self, pending: _Pending) -> str | None:
        return await self.queue.enqueue(
            pending.header_json, pending.user_id, pending.friend_id, list(pending.turns),
            self.config.queue.seen_ttl_s,
        )

    def _hold(self, pending: _Pending) -> None:
        limit = self.config.queue.buffer_max_jobs
        if limit == 0:
            self._shed(1)
            return
        if len(self._buffer) >= limit:
            self._buffer.popleft()
            self._shed(1)
        self._buffer.append(pending)
        self._wake.set()
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_forever(), name="memorize-buffer")

    def _shed(self, count: int) -> None:
        if self.telemetry is not None:
            self.telemetry.metrics.inc("memgate_memorize_shed_total", count)
        log.error("memorize: %d job(s) shed (buffer full or gateway stopping)", count)

    async def _flush_forever(self) -> None:
        delay = 0.05
        while self._buffer:
            try:
                while self._buffer:
                    await self._push(self._buffer[0])
                    self._buffer.popleft()
                delay = 0.05
            except RETRYABLE:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._wake.wait()  # new work does not shorten the backoff; stop does
                delay = min(delay * 2, self.config.queue.buffer_retry_max_s)

    async def flush(self, timeout_s: float) -> int:
        """Try to hand every buffered job to Redis within ``timeout_s``; returns how many
        are still buffered."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while self._buffer and self._flusher is not None and not self._flusher.done():
                    await asyncio.shield(self._flusher)
        return len(self._buffer)

    async def aclose(self) -> None:
        """Stop the flusher; jobs still buffered are counted as shed."""
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
            self._flusher = None
        if self._buffer:
            self._shed(len(self._buffer))
            self._buffer.clear()

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
        """Drop the user's buffered jobs, then make their queued jobs stale and drop their
        queue state (see :mod:`gateway.memorization.forget`)."""
        kept = [p for p in self._buffer if p.user_id != user_id]
        self._buffer.clear()
        self._buffer.extend(kept)
        await forget_queue_state(self.redis, user_id, queue_prefix=self.config.queue.key_prefix)
