"""``extract`` mode: decide -> extract -> reconcile (seed 003's
decide -> summarize -> embed -> store, with mem0's reconcile step, Chhikara et al. 2025).

1. **decide** (seed 003 decision prompt): nothing worth keeping -> an empty plan.
2. **extract** atomic facts with scope, type, keywords, importance, emotion, ``occurred``
   (resolved in code), speaker and preference slot, plus the conversation's updated
   gist (no extra call; seed 002 event gists).
3. **reconcile**: each fact's nearest live memories (``store.search`` top k, same
   tenant and scope, gists excluded) go to one model call that answers ADD / UPDATE /
   DELETE / NOOP per fact; skipped when no fact has a neighbour (all ADD).

Placeholder and empty facts are dropped and identical ones kept once; a fact whose text a
live memory already has is neither reconciled nor stored. A placeholder
gist (``"..."``, the prompt's own example; :func:`is_placeholder`) leaves the stored gist as it is.

Model calls use ``ModelClient.complete_json`` (JSON schema with ``maxItems`` =
``max_facts`` on the facts, pydantic-validated, one repair attempt); a
``ModelOutputError`` propagates and the worker dead-letters the job at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gateway.memorization.config import MemorizeConfig
from gateway.memorization.facts import (
    already_known,
    is_placeholder,
    reconcile_ops,
    render_candidates,
    to_new_memory,
    usable_facts,
)
from gateway.memorization.jobs import Job
from gateway.memorization.plan import Op, Plan, gist_id_for
from gateway.memorization.prompts import DECIDE, EXTRACT, GIST_RULE, RECONCILE, language_of, render_conversation
from gateway.memorization.schemas import Decision, Extraction, Reconciliation
from gateway.memory.records import MemoryRecord, MemoryType, NewMemory, Scope, Source, Tenant
from gateway.runtime.errors import NotFound

SYSTEM = {"en": "You are a careful memory manager. Answer with JSON only.",
          "zh": "你是一个严谨的记忆管理器。只用 JSON 回答。"}


def _messages(lang: str, prompt: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM[lang]}, {"role": "user", "content": prompt}]


class Extractor:
    """Plans the writes of one ``turns`` job in extract mode."""

    def __init__(self, config: MemorizeConfig, store: Any, model: Any) -> None:
        self._config = config
        self._store = store
        self._model = model

    async def plan(self, job: Job, turns: Sequence[tuple[str, str]], started_ms: int) -> Plan:
        """``turns`` = redacted ``(role, text)``; ``started_ms`` = conversation start."""
        tenant = Tenant(job.user_id, job.friend_id)
        lang = language_of([text for _, text in turns])
        conversation = render_conversation(list(turns), job.friend_id)
        decision = await self._model.complete_json(
            _messages(lang, DECIDE[lang].format(conversation=conversation)), Decision, "memorize_decision")
        if not decision.should_remember:
            return Plan(decision=f"not worth keeping: {decision.reason[:200]}")
        gist_id = gist_id_for(job.user_id, job.friend_id, job.conversation_id, started_ms)
        previous = await self._previous_gist(tenant, gist_id)
        message_time = max(t.at for t in job.turns)
        prompt = EXTRACT[lang].format(
            friend=job.friend_id, date=message_time.date().isoformat(), max_facts=self._config.max_facts,
            gist_rule=GIST_RULE[lang if self._config.gists.enabled else "off"],
            previous_gist=previous or "-", conversation=conversation,
        )
        extraction = await self._model.complete_json(
            _messages(lang, prompt), Extraction, "memorize_extraction", max_items={"facts": self._config.max_facts})
        facts = usable_facts(extraction.facts, self._config.max_facts)
        memories = [to_new_memory(f, job, message_time) for f in facts]
        ops = await self._reconcile(job, tenant, lang, memories)
        if self._config.gists.enabled and extraction.gist and not is_placeholder(extraction.gist):
            ops.append(self._gist_op(job, gist_id, extraction.gist, started_ms))
        return Plan(ops=tuple(ops), decision=f"{len(memories)} fact(s): {decision.reason[:200]}")

    async def _previous_gist(self, tenant: Tenant, gist_id: str) -> str | None:
        try:
            record = await self._store.get(tenant, gist_id)
        except NotFound:
            return None
        return record.metadata.get("summary") or record.text

    async def _reconcile(self, job: Job, tenant: Tenant, lang: str, memories: list[NewMemory]) -> list[Op]:
        candidates: list[list[MemoryRecord]] = []
        for memory in memories:
            hits = await self._store.search(
                tenant, memory.text, top_k=self._config.reconcile_top_k, scopes=[memory.scope.value])
            candidates.append([h.record for h in hits if h.record.metadata.get("kind") != "gist"])
        # a fact some live memory already states word for word is not stored again
        fresh = [i for i, m in enumerate(memories) if not already_known(m, candidates[i])]
        memories = [memories[i] for i in fresh]
        candidates = [candidates[i] for i in fresh]
        decisions: list = []
        if any(candidates):
            items = render_candidates(memories, candidates)
            answer = await self._model.complete_json(
                _messages(lang, RECONCILE[lang].format(items=items)), Reconciliation, "memorize_reconcile")
            decisions = answer.decisions
        return reconcile_ops(job, memories, candidates, decisions)

    def _gist_op(self, job: Job, gist_id: str, gist: str, started_ms: int) -> Op:
        started = datetime.fromtimestamp(started_ms / 1000, tz=job.enqueued_at.tzinfo)
        summary = gist.strip()[: self._config.gists.max_chars]
        memory = NewMemory(
            scope=Scope.EVENT, type=MemoryType.EPISODIC, text=f"{started.date().isoformat()}: {summary}",
            importance=0.4, occurred_at=started, source=Source.CONVERSATION,
            metadata={"kind": "gist", "session_id": job.conversation_id, "summary": summary,
                      "updated_by_job": job.job_id},
        )
        return Op(kind="upsert", id=gist_id, memory=memory, reason="gist")
