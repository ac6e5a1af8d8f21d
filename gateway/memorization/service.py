"""The memorization service a plugin gets from ``Services.memorization(config)``.

One object per memorize configuration: the request-path enqueue (capture the new turns,
two Redis round trips), the workers (inside ``memgate serve`` or ``memgate worker``), and
forgetting a user's queue state. Everything is keyed by the configuration's own
``queue.key_prefix``, so a custom prefix is honoured everywhere (forget included).

No accepted turn is lost to a short Redis outage: an enqueue that fails (Redis down,
connection pool exhausted, timeout; or any other error of the client, such as redis-py's
cluster client failing a command on a connection torn down while a node dies) puts the
captured job in a bounded in-process buffer
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
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gateway.memorization.capture import capture_exchange, group_conversation_id, memorize_disabled
from gateway.memorization.config import MemorizeConfig
from gateway.memorization.forget import forget_queue_state
from gateway.memorization.ingest import IngestResult, NewConversation, conversation_job
from gateway.memorization.observe import declare_metrics
from gateway.memorization.processor import JobProcessor
from gateway.memorization.queue import ClaimedNotQueued
from gateway.memorization.runtime import queue_for, run_workers
from gateway.memory.redis_errors import UNAVAILABLE_ERRORS
from gateway.proxy.model_client import ModelClient, ModelOutputError
from gateway.runtime.errors import MemoryModelFailed, MemoryUnavailable, PermissionDenied, UpstreamError
from gateway.speakers.group import attribute, speaker_user_id

__all__ = ["Memorization", "MemorizeConfig"]

log = logging.getLogger("memgate.memorize")

#: What a failed enqueue raises when Redis cannot take the job now (retryable); on Redis
#: Cluster also CLUSTERDOWN / TRYAGAIN while a failover runs (see UNAVAILABLE_ERRORS).
RETRYABLE = (*UNAVAILABLE_ERRORS, MemoryUnavailable, OSError, TimeoutError)


@dataclass
class _Pending:
    """A captured job waiting for Redis. ``claimed``: ``(shard, job fields)`` once its turns
    were claimed but not queued (:class:`~gateway.memorization.queue.ClaimedNotQueued`):
    a retry then only XADDs."""

    header_json: str
    user_id: str
    friend_id: str
    turns: tuple[tuple[str, str], ...]
    claimed: tuple[int, dict[str, str]] | None = None
    #: An attempt failed without an answer: Redis may have run its claim (``resume``
    #: of :meth:`~gateway.memorization.queue.JobQueue.enqueue`).
    attempted: bool = False


def _tenants(
    request: Any, principal: Any, headers: Any, max_candidates: int,
) -> list[tuple[str, frozenset[int] | None, str | None]]:
    """``(user id, message indexes or None for all, conversation id or None)`` per job:
    the caller's own tenant, or for a group call one per speaker with a message among the
    last ``max_candidates`` (so the captures cost O(messages x max_candidates) at most)."""
    if principal.namespace is None:
        return [(principal.user_id, None, None)]
    speakers = attribute(request.messages)
    by_speaker: dict[str, set[int]] = {}
    for i, name in enumerate(speakers):
        if name is not None:
            by_speaker.setdefault(name, set()).add(i)
    last = request.last_user_index()
    answered = speakers[last] if last is not None else None
    if answered is not None:
        by_speaker.setdefault(answered, set()).add(len(request.messages))  # the reply
    first = len(request.messages) - max_candidates
    conversation = group_conversation_id(request, headers)
    return [(speaker_user_id(principal.namespace, name), frozenset(indexes), conversation)
            for name, indexes in by_speaker.items() if max(indexes) >= first]


class Memorization:
    """Queue, workers, buffer and forgetting for one :class:`MemorizeConfig`."""

    def __init__(self, config: MemorizeConfig, redis: Any, store: Any, upstreams: Any, telemetry: Any) -> None:
        self.config = config
        self.redis = redis
        self.store = store
        self.upstreams = upstreams
        self.telemetry = telemetry
        declare_metrics(telemetry)
        self.queue = queue_for(config, redis)
        self._buffer: deque[_Pending] = deque()
        self._wake = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None
        self._processors: dict[str, JobProcessor] = {}
        self._model: Any = None

    @property
    def buffered(self) -> int:
        """Jobs waiting in process for Redis."""
        return len(self._buffer)

    async def enqueue(self, call: Any, reply: Any, now: datetime) -> str | None:
        """``call``: the :class:`gateway.chain.sdk.CallContext`; ``reply``: its
        :class:`~gateway.chain.sdk.AssembledReply` (typed loosely: the SDK imports this module).

        Returns the stream entry id of the job, None when there was nothing new (or it was
        disabled by header, or the body did not parse), or ``"buffered"`` when Redis could
        not take it now (see module docstring). Two Redis round trips (claim, then XADD to the
        user's queue shard; one when no turn is new).

        A group key's call (``principal.namespace`` set, :mod:`gateway.speakers.group`) makes one
        job per speaker with turns in the candidate window, each holding only the turns
        attributed to that speaker (the reply goes with the speaker answered), enqueued
        one after the other (two round trips each); returns the last entry id.
        """
        request = call.original
        if request is None or (self.config.honour_header and memorize_disabled(call.headers)):
            return None
        principal = call.principal
        entry: str | None = None
        settings = getattr(call, "settings", None)
        for user_id, include, conversation in _tenants(request, principal, call.headers, self.config.queue.max_candidate_turns):
            capture = capture_exchange(
                request, reply, headers=call.headers, user_id=user_id,
                friend_id=principal.friend_id, request_id=call.request_id, received_at=now,
                traceparent=call.trace_context, max_candidates=self.config.queue.max_candidate_turns,
                max_chars=self.config.redaction.max_chars, include=include, conversation=conversation,
            )
            if not capture.turns:
                continue
            header = capture.header
            if settings is not None and not settings.inference:  # the user's seed 000 P4 switch
                header = header.model_copy(update={"inference": False})
            pending = _Pending(
                header.model_dump_json(), user_id, principal.friend_id,
                tuple((t.hash, t.model_dump_json()) for t in capture.turns),
            )
            entry = await self._enqueue_one(pending) or entry
        return entry

    async def _enqueue_one(self, pending: _Pending) -> str | None:
        if self._buffer:  # keep order: older buffered jobs go first
            self._hold(pending)
            return "buffered"
        try:
            return await self._push(pending)
        except Exception as exc:  # never drop an accepted turn
            # RETRYABLE (Redis unreachable, failing over), or a non-Redis error of the
            # client: redis-py's cluster client can raise AttributeError on a connection
            # torn down under it while a node dies (seen in bench failover). Either way
            # the job is kept and retried by the buffer's flusher.
            log.warning("memorize enqueue failed (%s); buffering the job",
                        type(exc).__name__ if isinstance(exc, RETRYABLE) else repr(exc))
            self._hold(pending)
            return "buffered"

    async def _push(self, pending: _Pending) -> str | None:
        if pending.claimed is not None:
            return await self.queue.append(*pending.claimed)
        try:
            return await self.queue.enqueue(
                pending.header_json, pending.user_id, pending.friend_id, list(pending.turns),
                self.config.queue.seen_ttl_s, self.config.queue.claim_stale_s, resume=pending.attempted,
            )
        except ClaimedNotQueued as exc:
            pending.claimed = (exc.shard, exc.fields)  # the buffer's retry only XADDs
            raise exc.__cause__ or exc from None
        except BaseException:
            pending.attempted = True  # the claim may have run (a timeout): the retry resumes it
            raise

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
            except Exception as exc:  # RETRYABLE, or any other failure (see _enqueue_one): keep the job
                if not isinstance(exc, RETRYABLE):
                    log.warning("memorize buffer flush failed (%r); retrying", exc)
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

    async def ingest(self, user_id: str, friend_id: str, chunk: NewConversation, now: datetime) -> IngestResult:
        """Form the memories of a conversation chunk now (``POST /v1/memories`` with
        ``messages``; :mod:`gateway.memorization.ingest`): the same processor as the
        workers', run in the request. Extract mode calls the memory model (``model``); a
        chunk may ask for it only where this configuration's ``mode`` is extract or
        ``ingest_extract`` is on.

        Raises:
            PermissionDenied: ``mode: extract`` asked where it is not allowed (403, ``param: mode``).
            InvalidRequest: see :func:`~gateway.memorization.ingest.conversation_job` (400).
            MemoryUnavailable: Redis is down (503).
            MemoryModelFailed: the memory model failed or answered unusably (502; what it
                said stays in the log).
            UpstreamTimeout / UpstreamConnectError: the memory model's server (504 / 502).
        """
        if chunk.mode == "extract" and self.config.mode != "extract" and not self.config.ingest_extract:
            raise PermissionDenied(
                "mode: 'extract' (memory-model calls) is not enabled for this key; send 'verbatim' or omit mode, "
                "or ask the operator for memorize.ingest_extract", param="mode", code="extract_not_allowed")
        processor = self._processor(chunk.mode or self.config.mode)
        epoch = await processor.epoch(user_id)
        job = conversation_job(chunk, user_id=user_id, friend_id=friend_id, epoch=epoch, now=now,
                               max_chars=self.config.redaction.max_chars)
        if not job.turns:
            return IngestResult(ids=[], decision="no message has text")
        try:
            outcome, plan, written = await processor.run(job)
        except ModelOutputError as exc:
            log.warning("conversation ingest: memory model output unusable: %s", exc)
            raise MemoryModelFailed(f"memory model: {exc}") from None
        except UpstreamError as exc:
            if type(exc) is not UpstreamError:  # a timeout or refused connection: says nothing of the answer
                raise
            log.warning("conversation ingest: memory model failed: %s", exc.message)
            raise MemoryModelFailed(f"memory model: {exc.message}") from None
        if outcome != "done" or plan is None:
            return IngestResult(ids=[], decision="the user was forgotten while the chunk was ingested")
        merged_into = [op.target for op in plan.ops if op.kind == "merge" and op.target and op.id not in written]
        return IngestResult(ids=written + [t for t in dict.fromkeys(merged_into) if t not in written],
                            skipped=plan.skipped, decision=plan.decision)

    def _processor(self, mode: str) -> JobProcessor:
        processor = self._processors.get(mode)
        if processor is None:
            model = None
            if mode == "extract":
                if self._model is None:
                    self._model = ModelClient(self.config.model, self.upstreams)
                model = self._model
            config = self.config.model_copy(update={"mode": mode})
            processor = self._processors[mode] = JobProcessor(config, self.store, self.queue, model,
                                                              telemetry=self.telemetry)
        return processor

    async def aclose(self) -> None:
        """Stop the flusher; jobs still buffered are counted as shed. Closes the memory
        model client of extract-mode ingests."""
        if self._model is not None:
            await self._model.aclose()
            self._model = None
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
            self._flusher = None
        if self._buffer:
            self._shed(len(self._buffer))
            self._buffer.clear()

    @contextlib.asynccontextmanager
    async def workers(self, count: int, busy: Callable[[], bool] | None = None) -> AsyncIterator[list[Any]]:
        """``count`` workers as tasks for the duration of the ``async with``; ``busy``:
        whether the request path sharing their event loop is saturated (they yield then,
        :meth:`gateway.memorization.worker.Worker.yields`)."""
        if self.store is None or count <= 0:
            yield []
            return
        async with run_workers(self.config, self.redis, self.store, self.upstreams, count, self.telemetry,
                               busy=busy) as workers:
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
