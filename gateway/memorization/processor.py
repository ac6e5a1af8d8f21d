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
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from gateway.memorization.apply import apply_plan, apply_plans, undo
from gateway.memorization.clause_classifier import STRUCTURAL_ONLY, Candidate, ClauseModel, promoted
from gateway.memorization.clause_classifier import candidates as clause_candidates
from gateway.memorization.clause_classifier import load as load_clause_models
from gateway.memorization.config import MemorizeConfig
from gateway.memorization.extract import Extractor
from gateway.memorization.inference import Inferrer
from gateway.memorization.jobs import Job, JobHeader
from gateway.memorization.neardup import decide, merge_near_duplicates, search, searches_of
from gateway.memorization.observe import declare_metrics
from gateway.memorization.plan import Plan
from gateway.memorization.profile_classifier import demoted, texts_of
from gateway.memorization.profile_classifier import load as load_profile_models
from gateway.memorization.queue import JobQueue
from gateway.memorization.redact import Redactor
from gateway.memorization.verbatim import TURN_CHARS, verbatim_plan
from gateway.memory.embeddings.base import embed_texts
from gateway.memory.records import Tenant, embedded_views

_log = logging.getLogger("memgate.memorize")

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
        declare_metrics(telemetry)
        self._extractor = Extractor(config, store, model) if model is not None else None
        self._inferrer = Inferrer(config.inference, store, model) if model is not None else None
        self._clause_models: dict[str, ClauseModel] | None = None
        self._clause_structural = config.verbatim_clause_features == "structural"  # no sentence vector to embed
        wanted = config.verbatim_clause_classifier
        if wanted and config.formation == "disclosure" and hasattr(store, "embedder"):
            try:
                self._clause_models = (load_clause_models(STRUCTURAL_ONLY, 0) if self._clause_structural
                                       else load_clause_models(store.embedder.model, store.embedder.dimensions))
            except ValueError:
                if wanted is True:
                    raise
                _log.info("verbatim clause classifier: no weights for the embedder %s, structural features alone",
                          store.embedder.model)
                self._clause_models, self._clause_structural = load_clause_models(STRUCTURAL_ONLY, 0), True
        self._profile_models: dict[str, ClauseModel] | None = None
        gate = config.verbatim_profile_classifier
        if gate and config.formation == "disclosure" and config.verbatim_profile and hasattr(store, "embedder"):
            try:
                self._profile_models = load_profile_models(store.embedder.model, store.embedder.dimensions)
            except ValueError:
                if gate is True:
                    raise
                _log.info("verbatim profile classifier: no weights for the embedder %s, off", store.embedder.model)

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
        done, epoch, stored, *_claim = await pipe.execute()  # one round trip
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

    def batchable(self, job: Job) -> bool:
        """Whether :meth:`run_batch` takes ``job``: a verbatim job, on a store that takes
        pre-embedded groups (``embedder``, ``import_embedded``)."""
        return self._is_verbatim(job) and hasattr(self.store, "import_embedded") and hasattr(self.store, "embedder")

    async def run_batch(self, jobs: Sequence[Job]) -> list[tuple[str, Plan | None, list[str]]]:
        """:meth:`run` for several :meth:`batchable` jobs at once, none depending on
        another's writes (no two of one conversation: the worker runs those in later
        batches), each job's result as :meth:`run` gives it. Same steps and the same
        outcome for each job, with the Redis round trips and embedding calls shared:

        1. one round trip: every job's done marker, forget epoch and stored plan (and its
           claim dropped);
        2. redaction and verbatim planning per job (pure; in a thread for a big job);
        3. near-duplicate searches (:func:`~gateway.memorization.neardup.searches_of`) of
           every plan, their query texts and every new memory's views embedded in one
           ``embed_many`` call (with ``verbatim_profile_classifier`` the fresh adds' texts and
           the views first, each fresh plan's profile memories gated by
           :func:`~gateway.memorization.profile_classifier.demoted` before its searches are
           made), the searches run concurrently, then
           :func:`~gateway.memorization.neardup.decide` per plan;
        4. every plan's records written in one round trip, a plan's records whole or not
           at all (:func:`~gateway.memorization.apply.apply_plans`);
        5. one round trip re-reads the epochs; a job whose user was forgotten meanwhile
           has its records erased (:func:`~gateway.memorization.apply.undo`): ``stale``.

        Raises:
            Any error of a step (Redis, the embedder, a job's data): nothing is settled;
            the worker then runs the jobs one by one (:meth:`run`), which is safe after a
            partial write: op ids are fixed and merges idempotent (module docstring).
        """
        keys, client = self.queue.keys, self.queue.client
        pipe = client.pipeline(transaction=False)
        for job in jobs:
            pipe.exists(keys.done(job.user_id, job.job_id))
            pipe.get(keys.epoch(job.user_id))
            pipe.get(keys.plan(job.user_id, job.job_id))
            pipe.hdel(keys.claims(job.user_id), job.job_id)  # on the stream: no longer only claimed
            pipe.zrem(keys.claimed(job.user_id), job.job_id)
        replies = await pipe.execute()
        results: list[tuple[str, Plan | None, list[str]]] = [("stale", None, [])] * len(jobs)
        live: list[tuple[int, Job, Plan]] = []
        fresh: set[int] = set()  # indexes in ``live`` of plans made now (a stored plan is replayed as stored)
        todo: list[tuple[int, Job, str | None]] = []
        for position, job in enumerate(jobs):
            done, epoch, stored = replies[5 * position:5 * position + 3]
            if done:
                results[position] = ("duplicate", None, [])
                continue
            if int(epoch or 0) != job.epoch:
                continue
            todo.append((position, await self.redacted_async(job), stored))
        promotions = iter(await self._promotions([job for _p, job, stored in todo if not stored]))
        for position, redacted, stored in todo:
            if not stored:
                fresh.add(len(live))
            plan = Plan.model_validate_json(stored) if stored else \
                await self._verbatim_plan(redacted, next(promotions))
            if plan.skipped and self.telemetry is not None:
                for reason, count in (plan.dropped or {"small_talk": plan.skipped}).items():
                    self.telemetry.metrics.inc("memgate_memorize_turns_skipped_total", count, reason=reason)
            live.append((position, redacted, plan))
        if not live:
            return results
        embedder = self.store.embedder
        mode = self.config.verbatim_merge_duplicates
        gated = self._profile_models is not None
        # the profile gate reads each fresh profile memory's text vector, the text its search
        # embeds anyway: every fresh add's text (the searches' queries) and the views are
        # embedded in the one call first, so scopes are final before the searches are made
        known = await embed_texts(embedder, [
            *(op.memory.text for n, (_p, _j, plan) in enumerate(live) if n in fresh for op in plan.ops
              if op.kind == "add" and op.memory is not None),
            *(v for _p, _j, plan in live for op in plan.ops if op.memory is not None for v in embedded_views(op.memory)),
        ]) if gated else {}
        if self._profile_models is not None:
            live = [(p, j, demoted(plan, self._profile_models, known) if n in fresh else plan)
                    for n, (p, j, plan) in enumerate(live)]
        searches = [(n, search) for n, (_p, _job, plan) in enumerate(live) if n in fresh and mode != "off"
                    for search in searches_of(plan, events=mode == "all")]
        views = [v for _p, _j, plan in live for op in plan.ops if op.memory is not None for v in embedded_views(op.memory)]
        # a search compares a new memory with stored ones, statement to statement: it uses
        # the text's vector as a stored text (neardup.search), which is also the memory's
        # first view, so an asymmetric model (E5) embeds it once, not again as ``query: ``
        vectors = await embed_texts(embedder, [*(text for _n, (_i, text, _o) in searches), *views], known)
        found = await asyncio.gather(*(
            search(self.store, Tenant(live[n][1].user_id, live[n][1].friend_id), text, options, vectors[text])
            for n, (_i, text, options) in searches))
        hits: dict[int, dict[int, list[Any]]] = {}
        for (n, (index, _text, _options)), found_hits in zip(searches, found, strict=True):
            hits.setdefault(n, {})[index] = found_hits
        plans = [(Tenant(job.user_id, job.friend_id), decide(plan, hits[n]) if n in hits else plan)
                 for n, (_p, job, plan) in enumerate(live)]
        written = await apply_plans(self.store, plans, vectors)
        pipe = client.pipeline(transaction=False)
        for _p, job, _plan in live:
            pipe.get(keys.epoch(job.user_id))
        epochs = await pipe.execute()
        for (position, job, _plan), (tenant, plan), ids, epoch in zip(live, plans, written, epochs, strict=True):
            if int(epoch or 0) != job.epoch:
                await undo(self.store, tenant, ids)
                continue
            results[position] = ("done", plan, ids)
        return results

    async def _promotions(self, jobs: Sequence[Job]) -> list[dict[int, frozenset[int]]]:
        """Per redacted job (in order), the clauses the clause classifier keeps, by turn
        index (``verbatim_clause_classifier``; :mod:`gateway.memorization.clause_classifier`):
        every job's candidate clauses embedded in one ``embed_many`` call. Empty when the
        option is off."""
        if self._clause_models is None or not jobs:
            return [{} for _ in jobs]
        roles = self.config.verbatim_roles

        def found_in(job: Job) -> list[tuple[int, list[Candidate]]]:
            return [(t.index, found) for t in job.turns if t.role in roles and t.text.strip()
                    and (found := clause_candidates(t.text.strip()[:TURN_CHARS]))]

        per_job = [await asyncio.to_thread(found_in, job) if _chars(job) > OFF_LOOP_CHARS else found_in(job)
                   for job in jobs]
        texts = [c.text for found in per_job for _i, cands in found for c in cands]
        if not texts:
            return [{} for _ in jobs]
        models = self._clause_models
        if self._clause_structural:  # the model reads no sentence vector: zero-width rows
            return [{index: chosen for index, cands in found
                     if (chosen := promoted(models, cands, np.zeros((len(cands), 0), np.float32)))} for found in per_job]
        vectors = await embed_texts(self.store.embedder, texts)
        return [{index: chosen for index, cands in found
                 if (chosen := promoted(models, cands, np.stack([vectors[c.text] for c in cands])))}
                for found in per_job]

    async def _verbatim_plan(self, job: Job, promote: dict[int, frozenset[int]] | None = None) -> Plan:
        """The verbatim plan of a redacted ``job`` before near-duplicate merging;
        ``promote``: the clause classifier's picks (:meth:`_promotions`; computed here when
        None and the option is on)."""
        if promote is None and self._clause_models is not None:
            promote = (await self._promotions([job]))[0]
        make = functools.partial(verbatim_plan, job, [t.text for t in job.turns], self.config.verbatim_roles,
                                 skip_small_talk=self.config.verbatim_skip_small_talk,
                                 profile=self.config.verbatim_profile,
                                 context_after=self.config.verbatim_context_after,
                                 formation=self.config.formation, promote=promote)
        # linear (keywords, salience per turn) but pure Python: a big job (a bulk ingest) plans in a thread
        return await asyncio.to_thread(make) if _chars(job) > OFF_LOOP_CHARS else make()

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
            plan = await self._verbatim_plan(job)
            known: dict[str, Any] = {}
            if self._profile_models is not None and (texts := texts_of([plan])):
                # the profile texts' vectors: the gate's, then their near-duplicate searches'
                known = await embed_texts(self.store.embedder, texts)
                plan = demoted(plan, self._profile_models, known)
            if self.config.verbatim_merge_duplicates != "off" and plan.ops:
                plan = await merge_near_duplicates(self.store, Tenant(job.user_id, job.friend_id), plan,
                                                   events=self.config.verbatim_merge_duplicates == "all", known=known)
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
