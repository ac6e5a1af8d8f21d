"""Memory inference (seed 000 P4): conclusions drawn from several
memories, stored as ``type=inference``, ``source=inference`` with ``confidence`` and
``based_on`` (ids that exist in the tenant, checked here: the model only sees short ids
``m1..`` and an id it invents is dropped, as is a conclusion resting on fewer than two
memories or below ``inference_min_confidence``). Scope: profile when every memory it
rests on is profile, else event. A conclusion nearly identical to a live inference
already stored is skipped (:func:`is_duplicate`: cosine >= 0.92; for two mostly Chinese
texts the character-bigram rule of :func:`gateway.memorization.neardup.is_near_duplicate`
instead, since multilingual-e5-small scores unrelated Chinese pairs up to ~0.92).

Trigger: the worker counts new conversations per tenant and enqueues an ``inference``
job every ``inference.interval`` conversations (seed 000: 10); off by default.
"""

from __future__ import annotations

from typing import Any

from gateway.memorization.config import InferenceConfig
from gateway.memorization.facts import base_metadata
from gateway.memorization.jobs import Job
from gateway.memorization.neardup import is_near_duplicate, mostly_chinese
from gateway.memorization.plan import Op, Plan, memory_id_for
from gateway.memorization.prompts import INFER, language_of
from gateway.memorization.schemas import Inferences
from gateway.memory.records import MemoryRecord, MemoryType, NewMemory, Scope, Source, Tenant

DUPLICATE_COSINE = 0.92


def is_duplicate(new: str, old: str, similarity: float) -> bool:
    """Whether the conclusion ``new`` repeats the stored inference ``old`` (``similarity``:
    their cosine as the store reports it): for two mostly Chinese texts
    (:func:`~gateway.memorization.neardup.mostly_chinese`) the near-duplicate rule by
    character bigrams, whatever the cosine (all-MiniLM-L6-v2 scores Chinese restatements
    0.5-0.95, multilingual-e5-small unrelated Chinese pairs 0.76-0.92); otherwise a cosine
    of at least :data:`DUPLICATE_COSINE`."""
    if mostly_chinese(new) and mostly_chinese(old):
        return is_near_duplicate(new, old, similarity)
    return similarity >= DUPLICATE_COSINE


def inference_ops(job: Job, answer: Inferences, shown: dict[str, MemoryRecord], min_confidence: float) -> list[Op]:
    """Checked writes for the model's answer (sans-IO); see module docstring."""
    ops = []
    for i, item in enumerate(answer.inferences):
        based = [shown[s] for s in dict.fromkeys(item.based_on) if s in shown]
        if item.confidence < min_confidence or len(based) < 2 or len(based) != len(set(item.based_on)):
            continue
        scope = Scope.PROFILE if all(r.scope is Scope.PROFILE for r in based) else Scope.EVENT
        memory = NewMemory(
            scope=scope, type=MemoryType.INFERENCE, text=item.conclusion.strip(), importance=0.5,
            source=Source.INFERENCE, confidence=item.confidence, based_on=[r.id for r in based],
            metadata={**base_metadata(job), "kind": "inference"},
        )
        ops.append(Op(kind="add", id=memory_id_for(job.job_id, str(i), job.enqueued_ms), memory=memory, reason="inference"))
    return ops


class Inferrer:
    """Plans an ``inference`` job."""

    def __init__(self, config: InferenceConfig, store: Any, model: Any) -> None:
        self._config = config
        self._store = store
        self._model = model

    async def plan(self, job: Job) -> Plan:
        tenant = Tenant(job.user_id, job.friend_id)
        page = await self._store.list(tenant, limit=min(1000, self._config.max_memories * 3))
        live = [r for r in page.items if not r.retired and r.type is not MemoryType.INFERENCE
                and r.metadata.get("kind") != "gist"][: self._config.max_memories]
        if len(live) < 2:
            return Plan(decision="fewer than two memories")
        shown = {f"m{i + 1}": r for i, r in enumerate(live)}
        lang = language_of([r.text for r in live])
        listing = "\n".join(f"[{s}] {r.text}" for s, r in shown.items())
        messages = [{"role": "user", "content": INFER[lang].format(memories=listing)}]
        answer = await self._model.complete_json(messages, Inferences, "memorize_inference")
        ops = []
        for op in inference_ops(job, answer, shown, self._config.min_confidence):
            hits = await self._store.search(tenant, op.memory.text, top_k=3, types=["inference"])  # type: ignore[union-attr]
            if not any(is_duplicate(op.memory.text, h.record.text, h.similarity) for h in hits):  # type: ignore[union-attr]
                ops.append(op)
        return Plan(ops=tuple(ops), decision=f"{len(ops)} inference(s) from {len(live)} memories")
