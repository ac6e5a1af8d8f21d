"""One job, start to finish, minus queue bookkeeping (the worker owns that).

Order: done marker? -> forget epoch still the job's? (one round trip, with the stored
plan) -> plan (stored once, ``SET NX``, replayed as stored; verbatim plans are not stored:
they are a function of the job, and of the near-duplicates already stored, whose merges
apply idempotently: :mod:`gateway.memorization.neardup`) -> apply -> epoch re-checked *after* the writes: if a forget ran
meanwhile, what this job wrote is erased again (forget increments the epoch before it
erases, so either the forget's erase sees these records or this re-check sees the new
epoch: forget always wins). Redaction runs on every turn before planning, so neither the
memory model nor the store ever sees the raw text.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from gateway.memorization.apply import apply_plan, undo
from gateway.memorization.config import MemorizeConfig
from gateway.memorization.extract import Extractor
from gateway.memorization.inference import Inferrer
from gateway.memorization.jobs import Job, JobHeader
from gateway.memorization.neardup import merge_near_duplicates
from gateway.memorization.plan import Plan
from gateway.memorization.queue import JobQueue
from gateway.memorization.redact import Redactor
from gateway.memorization.verbatim import verbatim_plan
from gateway.memory.records import Tenant

#: Above this many characters a job is redacted, and a verbatim job planned, in a worker
#: thread (about 1 ms of regex work on the loop at this size; measured with
#: ``bench/big_messages.py``).
OFF_LOOP_CHARS = 16_384


class JobProcessor:
    """Plans and applies jobs; shared by every worker of a process (holds no job state)."""

    def __init__(self, config: MemorizeConfig, store: Any, queue: JobQueue, model: Any = None,
                 redactor: Redactor | None = None, telemetry: Any = None) -> None:
        self.config = config
        self.store = store
        self.queue = queue
        self.redactor = redactor or Redactor.from_config(config.redaction)
        self.telemetry = telemetry  # counts skipped turns (memgate_memorize_turns_skipped_total)
        self._extractor = Extractor(config, store, model) if model is not None else None
        self._inferrer = Inferrer(config.inference, store, model) if model is not None else None

    async def epoch(self, user_id: str) -> int:
        return int(await self.queue.client.get(self.queue.keys.epoch(user_id)) or 0)

    def redacted(self, job: Job) -> Job:
        """``job`` with every turn's text cut to ``redaction.max_chars`` and redacted, its
        ``context`` and ``context_after`` redacted too (a new value). Linear in the text (:mod:`gateway.memorization.redact`); callers on the
        event loop use :meth:`redacted_async`."""
        turns = tuple(
            t.model_copy(update={"text": self.redactor.redact(t.text), "context": self.redactor.redact(t.context),
                                 "context_after": self.redactor.redact(t.context_after)})
            for t in job.turns
        )
        return job.model_copy(update={"turns": turns})

    async def redacted_async(self, job: Job) -> Job:
        """:meth:`redacted`, in a worker thread when the job holds more than
        :data:`OFF_LOOP_CHARS` characters (so a big job never stalls the event loop that
        also serves chat requests in ``memgate serve``)."""
        if _chars(job) > OFF_LOOP_CHARS:
            return await asyncio.to_thread(self.redacted, job)
        return self.redacted(job)

    async def process(self, job: Job) -> str:
        """Outcome: ``done``, ``duplicate`` (done before) or ``stale`` (forgotten since)."""
        outcome, _plan, _written = await self.run(job)
        return outcome

    async def run(self, job: Job) -> tuple[str, Plan | None, list[str]]:
        """:meth:`process`, also returning the plan (None unless ``done``) and the ids of
        the records written (empty unless ``done``)."""
        pipe = self.queue.client.pipeline(transaction=False)
        pipe.exists(self.queue.keys.done(job.user_id, job.job_id))
        pipe.get(self.queue.keys.epoch(job.user_id))
        pipe.get(self.queue.keys.plan(job.user_id, job.job_id))
        pipe.hdel(self.queue.keys.claims(job.user_id), job.job_id)  # on the stream: no longer only claimed
        pipe.zrem(self.queue.keys.claimed(job.user_id), job.job_id)
        done, epoch, stored, *_claim = await pipe.execute()  # one round trip (issue 10, item 3)
        if done:
            return "duplicate", None, []
        if int(epoch or 0) != job.epoch:
            return "stale", None, []
        job = await self.redacted_async(job)
        # verbatim plans need no conversation start (only extract's gists and inference do)
        started_ms = job.enqueued_ms if self._is_verbatim(job) else await self._conversation_start(job)
        plan = Plan.model_validate_json(stored) if stored else await self._plan(job, started_ms)
        if plan.skipped and self.telemetry is not None:
            for reason, count in (plan.dropped or {"small_talk": plan.skipped}).items():
                self.telemetry.metrics.inc("memgate_memorize_turns_skipped_total", count, reason=reason)
        tenant = Tenant(job.user_id, job.friend_id)
        written = await apply_plan(self.store, tenant, plan)
        if await self.epoch(job.user_id) != job.epoch:
            await undo(self.store, tenant, written)
            return "stale", None, []
        return "done", plan, written

    async def _plan(self, job: Job, started_ms: int) -> Plan:
        """A new plan for ``job`` (none was stored), stored ``SET NX`` unless it is a
        verbatim one: that is a pure function of the job (op ids from job id and turn
        hash, :func:`verbatim_plan`), so a replay makes the same ops and storing it would
        only cost a round trip."""
        key = self.queue.keys.plan(job.user_id, job.job_id)
        plan = await self._make_plan(job, started_ms)
        if self._is_verbatim(job):
            return plan
        ttl = self.config.queue.done_ttl_s
        if not await self.queue.client.set(key, plan.model_dump_json(), nx=True, ex=ttl):
            stored = await self.queue.client.get(key)
            if stored is None:  # expired between SET NX and GET: plan again
                return plan
            return Plan.model_validate_json(stored)
        return plan

    def _is_verbatim(self, job: Job) -> bool:
        return job.kind != "inference" and (self.config.mode == "verbatim" or self._extractor is None)

    async def _make_plan(self, job: Job, started_ms: int) -> Plan:
        if job.kind == "inference":
            if self._inferrer is None:
                return Plan(decision="inference needs a memory model")
            return await self._inferrer.plan(job)
        if self._is_verbatim(job):
            make = functools.partial(verbatim_plan, job, [t.text for t in job.turns], self.config.verbatim_roles,
                                     skip_small_talk=self.config.verbatim_skip_small_talk,
                                     profile=self.config.verbatim_profile,
                                     context_after=self.config.verbatim_context_after,
                                     formation=self.config.formation)
            # linear (keywords, salience per turn) but pure Python: a big job (a bulk ingest) plans in a thread
            plan = await asyncio.to_thread(make) if _chars(job) > OFF_LOOP_CHARS else make()
            if self.config.verbatim_merge_duplicates != "off" and plan.ops:
                plan = await merge_near_duplicates(self.store, Tenant(job.user_id, job.friend_id), plan,
                                                   events=self.config.verbatim_merge_duplicates == "all")
            return plan
        assert self._extractor is not None  # _is_verbatim otherwise
        turns = [(t.role, t.text) for t in job.turns]
        return await self._extractor.plan(job, turns, started_ms)

    async def _conversation_start(self, job: Job) -> int:
        """First-seen time of the job's conversation (ms); counts new conversations and
        enqueues an inference job every ``inference.interval`` of them (not for a job whose
        user turned the ``inference`` memory setting off)."""
        if job.kind != "turns":
            return job.enqueued_ms
        keys, client = self.queue.keys, self.queue.client
        convs = keys.conversations(job.user_id, job.friend_id)
        pipe = client.pipeline(transaction=False)
        pipe.hsetnx(convs, job.conversation_id, job.enqueued_ms)
        pipe.hget(convs, job.conversation_id)
        is_new, first_seen = await pipe.execute()
        if is_new and job.inference and self.config.inference.enabled and self.config.mode == "extract":
            count = await client.incr(keys.conversation_count(job.user_id, job.friend_id))
            if count % self.config.inference.interval == 0:
                await self.queue.push(inference_job(job))
        return int(first_seen or job.enqueued_ms)


def _chars(job: Job) -> int:
    """Characters of a job's turns with their contexts."""
    return sum(len(t.text) + len(t.context) + len(t.context_after) for t in job.turns)


def inference_job(after: Job) -> Job:
    """The inference job a ``turns`` job triggers (same tenant and epoch, fixed id)."""
    header = JobHeader(
        job_id=after.job_id[:24] + "inf0", kind="inference", user_id=after.user_id,
        friend_id=after.friend_id, request_id=after.request_id, traceparent=after.traceparent,
        enqueued_at=after.enqueued_at,
    )
    return Job(**header.model_dump(), epoch=after.epoch)
