"""``verbatim`` mode: no model; each new turn (of ``verbatim_roles``, default the user's)
is stored as an episodic *event* memory of the (user, friend) pair with keywords
(:func:`gateway.memorization.keywords.keywords_of`) and ``occurred_at`` = message time.
No gist is made in this mode (an extractive gist would only repeat the turns).
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.memorization.facts import base_metadata
from gateway.memorization.jobs import Job
from gateway.memorization.keywords import keywords_of
from gateway.memorization.plan import Op, Plan, memory_id_for
from gateway.memory.records import MemoryType, NewMemory, Scope, Source


def verbatim_plan(job: Job, texts: Sequence[str], roles: Sequence[str], max_chars: int = 8000) -> Plan:
    """One ``add`` per turn of ``job`` whose role is in ``roles``; ``texts`` are the turns'
    texts after redaction (same order as ``job.turns``). Op ids derive from the turn's
    dedupe hash, so the same turn in a replayed job maps to the same record."""
    ops = []
    for turn, text in zip(job.turns, texts, strict=True):
        if turn.role not in roles or not text.strip():
            continue
        meta = {**base_metadata(job), "kind": "turn", "role": turn.role, "turn_hash": turn.hash}
        kept = text.strip()[:max_chars]
        memory = NewMemory(
            scope=Scope.EVENT, type=MemoryType.EPISODIC, text=kept,
            keywords=keywords_of(kept), importance=0.5, occurred_at=turn.at,
            source=Source.CONVERSATION, metadata=meta,
        )
        ops.append(Op(kind="add", id=memory_id_for(job.job_id, turn.hash, job.enqueued_ms), memory=memory, reason="verbatim"))
    return Plan(ops=tuple(ops), decision=f"verbatim: {len(ops)} turn(s)")
