"""Workers: read jobs from the consumer group, process, ack, retry, reclaim, dead-letter.
Any number of workers, in ``memgate serve`` or ``memgate worker``
processes, share the group; each has its own consumer name.

Loop of one worker: promote due retries -> after a failed round of the loop, the
entries it was handed and did not settle (its own pending list, :meth:`Worker.recover`)
-> every ``claim_every_s`` XAUTOCLAIM jobs idle
longer than ``claim_min_idle_ms`` (their worker died) -> XREADGROUP up to ``batch`` new
jobs (BLOCK) -> handle the batch (:meth:`Worker.handle_batch`): up to ``concurrency`` jobs
at once, so their embeddings share the embedder's micro-batches and their Redis round
trips overlap; jobs of one conversation (:func:`lane_of`) run one after
the other in stream order. Verbatim jobs of different conversations run as batches
(:meth:`Worker._handle_waves`, :meth:`JobProcessor.run_batch`: shared round trips and
embedding calls, settled together; a failed batch is handled job by job). Between read
batches an in-serve worker yields to a saturated request path (:meth:`Worker.yields`).
Each job is still settled on its own (ack, retry or dead
letter), so at-least-once delivery, idempotent writes and forget epochs hold per job as
before. Handling: unreadable entry -> dead letter; delivered more than
``max_deliveries`` times without an ack (it keeps killing or wedging workers, so every
restart would reclaim it again) -> dead letter; otherwise process under
``job_timeout_s``; success -> done marker + XACK + XDEL. Failures:

- overran ``job_timeout_s`` -> dead letter at once ("overran job_timeout_s=...");
- a non-retryable error (:func:`is_permanent`: the memory model's answer is still
  invalid after the client's repair attempt, or the job's data fails validation) ->
  dead letter at once, since a retry would fail the same way;
- anything else (Redis, upstream 5xx, a model-call timeout) -> attempt + 1 and retry
  after ``backoff_base_s * 2**(attempt-1)`` (capped), or the dead letter after
  ``max_attempts``.

Dead letters hold the job with redacted turns and the reason. Only ``Exception`` is
caught: cancellation (shutdown) leaves the job un-acked, to be reclaimed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from gateway.memorization.config import WorkerConfig
from gateway.memorization.jobs import Job, job_from_fields, retried
from gateway.memorization.observe import declare_metrics, job_span
from gateway.memorization.processor import JobProcessor
from gateway.memorization.queue import JobQueue, entry_ms, parse_ref
from gateway.proxy.model_client import ModelOutputError

log = logging.getLogger("memgate.memorize")


def is_permanent(exc: BaseException) -> bool:
    """A failure a retry would repeat: the memory model's answer is invalid even after
    :class:`~gateway.proxy.model_client.ModelClient`'s repair attempt (temperature 0 answers the
    same way again), or the job's own data fails validation."""
    return isinstance(exc, (ModelOutputError, ValidationError, UnicodeError))


def backoff_s(attempt: int, config: WorkerConfig) -> float:
    """Delay before retry number ``attempt`` (1-based): exponential, capped.

    >>> backoff_s(1, WorkerConfig()), backoff_s(3, WorkerConfig()), backoff_s(20, WorkerConfig())
    (2.0, 8.0, 300.0)
    """
    return min(config.backoff_max_s, config.backoff_base_s * 2 ** (attempt - 1))


def lane_of(entry_id: str, job: Job | None) -> tuple[str, ...]:
    """Jobs with the same lane are handled sequentially, in stream order: those of one
    conversation of one tenant (its first-seen time and, in ``extract`` mode, its gist
    and reconciliation build on the earlier job). Unreadable entries get a lane each.

    >>> lane_of("1-0", None)
    ('entry', '1-0')
    """
    if job is None:
        return ("entry", entry_id)
    return (job.user_id, job.friend_id, job.kind, job.conversation_id)


def consumer_name(index: int = 0) -> str:
    """``<host>-<pid>-<index>-<random>``: unique per worker, readable in XINFO CONSUMERS."""
    return f"{socket.gethostname()}-{os.getpid()}-{index}-{uuid.uuid4().hex[:6]}"


class Worker:
    """One consumer of the group."""

    def __init__(self, processor: JobProcessor, config: WorkerConfig, telemetry: Any = None,
                 name: str | None = None, busy: Callable[[], bool] | None = None) -> None:
        self.processor = processor
        self.busy = busy
        self.queue: JobQueue = processor.queue
        self.config = config
        self.telemetry = telemetry
        declare_metrics(telemetry)
        self.name = name or consumer_name()
        self.handled = 0

    def _inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        if self.telemetry is not None:
            self.telemetry.metrics.inc(name, amount, **labels)

    async def run(self, stop: asyncio.Event) -> None:
        """Work until ``stop`` is set (the current job is finished first). After a failure
        of the loop (Redis unreachable while a batch was settled), the worker first takes
        up the entries it was handed and did not settle (:meth:`recover`) once Redis
        answers again, so a stall delays those jobs by the stall, not by
        ``claim_min_idle_ms``."""
        await self.queue.ensure_group()
        last_claim = 0.0
        unsettled = False
        while not stop.is_set():
            try:
                await self.queue.promote_due()
                if unsettled:
                    await self.recover()
                    unsettled = False
                if time.monotonic() - last_claim >= self.config.claim_every_s:
                    last_claim = time.monotonic()
                    await self.reclaim_once()
                entries = await self.queue.read(self.name, self.config.batch, self.config.block_ms)
                while entries and not stop.is_set() and self.yields(entries):  # noqa: ASYNC110 (polls busy())
                    await asyncio.sleep(self.config.yield_pause_ms / 1000)
                await self.handle_batch([(entry_id, fields, 1) for entry_id, fields in entries])
            except Exception as exc:  # Redis down, etc.: keep the worker alive
                log.warning("memorize worker %s: %r", self.name, exc)
                self._inc("memgate_memorize_failures_total", error="loop")
                unsettled = True  # a batch may have been left half-settled: recover() it
                await asyncio.sleep(1.0)

    async def recover(self) -> int:
        """Handle the entries delivered to this worker and not settled
        (:meth:`JobQueue.own_pending`), a read batch at a time, until none is left; returns
        how many. A job whose records were written before its batch failed finds its
        done marker (``duplicate``) or rewrites the same ids (replay-safe: op ids are
        fixed)."""
        handled = 0
        while entries := await self.queue.own_pending(self.name, self.config.batch):
            await self.handle_batch(entries)
            handled += len(entries)
        if handled:
            log.info("memorize worker %s: took up %d unsettled job(s) of its own", self.name, handled)
        return handled

    def yields(self, entries: list[tuple[str, Any]], now_ms: int | None = None) -> bool:
        """Whether to pause ``yield_pause_ms`` before handling ``entries`` (a read batch):
        the request path sharing this worker's event loop is saturated (``busy()``: its
        memory searches queue for admission) and the oldest entry is younger than
        ``yield_max_lag_s``. Past that age the worker works regardless, so under
        sustained load the lag stays near ``yield_max_lag_s`` instead of growing."""
        if self.busy is None or self.config.yield_max_lag_s <= 0 or not self.busy():
            return False
        now = int(time.time() * 1000) if now_ms is None else now_ms
        oldest = min(entry_ms(parse_ref(entry_id)[1]) for entry_id, *_ in entries)
        return now - oldest < self.config.yield_max_lag_s * 1000

    async def reclaim_once(self) -> int:
        """XAUTOCLAIM stuck jobs and handle them; returns how many."""
        claimed = await self.queue.reclaim(self.name, self.config.claim_min_idle_ms, self.config.batch)
        if claimed:
            self._inc("memgate_memorize_reclaimed_total", len(claimed))
        await self.handle_batch(claimed)
        return len(claimed)

    async def handle_batch(self, entries: list[tuple[str, dict, int]]) -> list[str]:
        """Handle ``(entry id, fields, deliveries)`` entries: up to ``concurrency`` at once,
        those of one lane (:func:`lane_of`) sequentially in the given (stream) order.
        Returns the outcomes in entry order.

        Raises:
            Exception: the first error that escaped :meth:`handle` (Redis down while
                settling a job); the other entries are handled to the end first, and an
                entry left unsettled stays pending, to be reclaimed.
        """
        if len(entries) <= 1 or self.config.concurrency == 1:
            return [await self.handle(e, f, d) for e, f, d in entries]
        lanes: dict[tuple[str, ...], list[tuple[int, str, dict, int, Job | None]]] = {}
        for position, (entry_id, fields, deliveries) in enumerate(entries):
            try:
                job: Job | None = job_from_fields(fields)
            except Exception:
                job = None
            lanes.setdefault(lane_of(entry_id, job), []).append((position, entry_id, fields, deliveries, job))
        outcomes: list[str] = [""] * len(entries)
        if any(job is not None and deliveries <= self.config.max_deliveries and self.processor.batchable(job)
               for items in lanes.values() for _p, _e, _f, deliveries, job in items):
            await self._handle_waves(list(lanes.values()), outcomes)
            return outcomes
        slots = asyncio.Semaphore(self.config.concurrency)

        async def run_lane(items: list[tuple[int, str, dict, int, Job | None]]) -> None:
            for position, entry_id, fields, deliveries, job in items:
                async with slots:
                    outcomes[position] = await self.handle(entry_id, fields, deliveries, job)

        results = await asyncio.gather(*(run_lane(items) for items in lanes.values()), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        for error in errors:
            if not isinstance(error, Exception):
                raise error  # cancellation: shutdown
        if errors:
            raise errors[0]
        return outcomes

    async def _handle_waves(self, lanes: list[list[tuple[int, str, dict, int, Job | None]]], outcomes: list[str]) -> None:
        """Handle the lanes' entries in waves: wave k holds the k-th entry of every lane
        (so a conversation's jobs stay in stream order, each after the one before it was
        settled), cut into groups of up to half of ``concurrency`` jobs, two groups at a
        time (while one group's texts are embedded in the embedder's thread, the other's
        searches and writes run on the loop: at most ``concurrency`` jobs in flight). In a
        group, the batchable jobs (:meth:`JobProcessor.batchable`) run as one
        :meth:`JobProcessor.run_batch` and are settled together (:meth:`_handle_group`);
        the others run one by one (:meth:`handle`). Each group ends with a yield to the
        event loop.

        Raises:
            Exception: as :meth:`handle_batch`.
        """
        size = max(1, self.config.concurrency // 2)
        slots = asyncio.Semaphore(2)
        errors: list[Exception] = []

        async def run(group: list[tuple[int, str, dict, int, Job | None]]) -> None:
            batch = [item for item in group if item[4] is not None and item[3] <= self.config.max_deliveries
                     and self.processor.batchable(item[4])]
            single = [item for item in group if item not in batch]
            async with slots:
                try:
                    if batch:
                        for (position, *_rest), outcome in zip(batch, await self._handle_group(batch), strict=True):
                            outcomes[position] = outcome
                    for position, entry_id, fields, deliveries, job in single:
                        outcomes[position] = await self.handle(entry_id, fields, deliveries, job)
                except Exception as exc:  # settle the rest first (as handle_batch does)
                    errors.append(exc)
                await asyncio.sleep(0)  # let the request path run between groups

        for k in range(max(len(items) for items in lanes)):
            wave = [items[k] for items in lanes if k < len(items)]
            await asyncio.gather(*(run(wave[at:at + size]) for at in range(0, len(wave), size)))
        if errors:
            raise errors[0]

    async def _handle_group(self, items: list[tuple[int, str, dict, int, Job | None]]) -> list[str]:
        """Process ``items`` (batchable jobs, none of one conversation) with one
        :meth:`JobProcessor.run_batch` under ``job_timeout_s``, each in its own job span,
        then settle them together (:meth:`JobQueue.complete_many`: done markers, then the
        acks, as :meth:`handle` settles one). When the batch raises or overruns, each job
        is handled on its own instead (:meth:`handle`: its own budget, retry or dead
        letter; what the batch wrote is replay-safe). Returns the outcomes in ``items``
        order."""
        jobs = [job for _p, _e, _f, _d, job in items if job is not None]
        started = time.perf_counter()
        results: list[tuple[str, Any, list[str]]] | None = None
        with contextlib.ExitStack() as spans:
            opened = [spans.enter_context(job_span(self.telemetry, job, entry_id))
                      for _p, entry_id, _f, _d, job in items if job is not None]
            try:
                async with asyncio.timeout(self.config.job_timeout_s):
                    ran = await self.processor.run_batch(jobs)
            except Exception as exc:
                log.info("memorize worker %s: a batch of %d jobs failed (%r); handling them one by one",
                         self.name, len(jobs), exc)
            else:
                results = ran
                for span, (outcome, _plan, _ids) in zip(opened, ran, strict=True):
                    if span.is_recording():
                        span.set_attribute("memgate.outcome", outcome)
                        span.set_attribute("memgate.batch_size", len(jobs))
        if results is None:
            return [await self.handle(e, f, d, job) for _p, e, f, d, job in items]
        await self.queue.complete_many([(entry_id, job) for (_p, entry_id, _f, _d, _j), job in zip(items, jobs, strict=True)],
                                       self.processor.config.queue.done_ttl_s)
        self._inc("memgate_memorize_job_seconds_total", time.perf_counter() - started)
        return [self._count(outcome) for outcome, _plan, _ids in results]

    async def handle(self, entry_id: str, fields: dict, deliveries: int = 1, job: Job | None = None) -> str:
        """Process one entry and settle it (ack, retry or dead letter); returns the outcome.
        ``job``: the entry's job when the caller parsed it already."""
        try:
            job = job if job is not None else job_from_fields(fields)
        except Exception as exc:
            raw = repr({k: v for k, v in fields.items()})[:4000]
            await self.queue.dead_letter(entry_id, raw, f"unreadable job: {exc!r}"[:2000])
            return self._count("dead")
        if deliveries > self.config.max_deliveries:
            job = retried(job, f"delivered {deliveries} times without an ack (max_deliveries="
                               f"{self.config.max_deliveries}: it kills or wedges its worker)")
            await self.queue.dead_letter(entry_id, (await self.processor.redacted_async(job)).model_dump_json(), job.last_error or "")
            return self._count("dead")
        started = time.perf_counter()
        with job_span(self.telemetry, job, entry_id) as span:
            budget = asyncio.timeout(self.config.job_timeout_s)
            try:
                async with budget:
                    outcome = await self.processor.process(job)
            except Exception as exc:
                overran = isinstance(exc, TimeoutError) and budget.expired()
                kind = "JobTimeout" if overran else type(exc).__name__
                error = (f"JobTimeout: overran job_timeout_s={self.config.job_timeout_s}" if overran
                         else f"{type(exc).__name__}: {exc}")
                self._inc("memgate_memorize_failures_total", error=kind)
                if span.is_recording():
                    span.set_attribute("memgate.error", error[:500])
                return await self._failed(entry_id, job, error, permanent=overran or is_permanent(exc))
            if span.is_recording():
                span.set_attribute("memgate.outcome", outcome)
        await self.queue.complete(entry_id, job, self.processor.config.queue.done_ttl_s)
        self._inc("memgate_memorize_job_seconds_total", time.perf_counter() - started)
        return self._count(outcome)

    async def _failed(self, entry_id: str, job: Job, error: str, permanent: bool = False) -> str:
        failed = retried(job, error)
        if permanent or failed.attempt >= self.config.max_attempts:
            log.warning("memorize job %s dead-lettered after %d attempt(s)%s: %s", job.job_id, failed.attempt,
                        " (not retryable)" if permanent else "", error)
            await self.queue.dead_letter(entry_id, (await self.processor.redacted_async(failed)).model_dump_json(), error)
            return self._count("dead")
        not_before = int((time.time() + backoff_s(failed.attempt, self.config)) * 1000)
        await self.queue.retry(entry_id, failed, not_before)
        return self._count("retried")

    def _count(self, outcome: str) -> str:
        self.handled += 1
        self._inc("memgate_memorize_jobs_total", outcome=outcome)
        return outcome
