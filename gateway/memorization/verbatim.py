"""``verbatim`` mode: no model; each new turn (of ``verbatim_roles``, default the user's)
is stored as it was said, with keywords (:func:`gateway.memorization.keywords.keywords_of`)
and ``occurred_at`` = message time, or the day a relative expression in it names ("I went
there yesterday", "我上周五去了北京": :func:`gateway.memorization.dates.relative_in`, kept in
``metadata.occurred_expression``): an episodic *event* memory of the (user, friend) pair,
or, for a user turn stating a preference or fact about the user, a *profile* memory
(``verbatim_profile``); small talk is skipped (``verbatim_skip_small_talk``;
:mod:`gateway.memorization.salience`). No gist is made in this mode (an extractive gist
would only repeat the turns).
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.memorization.dates import relative_in
from gateway.memorization.facts import base_metadata
from gateway.memorization.jobs import Job
from gateway.memorization.keywords import keywords_of
from gateway.memorization.plan import Op, Plan, memory_id_for
from gateway.memorization.salience import is_small_talk, profile_type
from gateway.memory.records import MemoryType, NewMemory, Scope, Source


def verbatim_plan(
    job: Job, texts: Sequence[str], roles: Sequence[str], max_chars: int = 8000,
    skip_small_talk: bool = False, profile: bool = False,
) -> Plan:
    """One ``add`` per turn of ``job`` whose role is in ``roles``; ``texts`` are the turns'
    texts after redaction (same order as ``job.turns``). Op ids derive from the turn's
    dedupe hash, so the same turn in a replayed job maps to the same record.

    ``skip_small_talk``: turns :func:`~gateway.memorization.salience.is_small_talk` are
    not stored (counted in the plan's ``decision``). ``profile``: a user turn stating a
    preference or fact about the user (:func:`~gateway.memorization.salience.profile_type`)
    becomes a profile memory of that type instead of an episodic event.

    Each memory's metadata links it to its source: ``position`` (the turn's index in the
    request or ingested chunk), ``speaker`` and a ``name: `` text prefix when the message
    had a ``name``, ``source_messages`` (``[turn.metadata]``) when the caller gave one."""
    ops = []
    skipped = 0
    for turn, text in zip(job.turns, texts, strict=True):
        if turn.role not in roles or not text.strip():
            continue
        kept = text.strip()[:max_chars]
        if skip_small_talk and is_small_talk(kept):
            skipped += 1
            continue
        kind = profile_type(kept) if profile and turn.role == "user" else None
        meta = {**base_metadata(job), "kind": "turn", "role": turn.role, "turn_hash": turn.hash, "position": turn.index}
        if turn.metadata:
            meta["source_messages"] = [turn.metadata]
        if turn.name:
            meta["speaker"] = turn.name
        occurred = turn.at
        relative = relative_in(kept, turn.at)
        if relative is not None:  # "yesterday", "上周五": the day it names (issue 11, item 3)
            meta["occurred_expression"], occurred = relative
        memory = NewMemory(
            scope=Scope.PROFILE if kind else Scope.EVENT, type=kind or MemoryType.EPISODIC,
            text=f"{turn.name}: {kept}" if turn.name else kept,
            context=turn.context or None,
            keywords=keywords_of(kept), importance=0.5, occurred_at=occurred,
            source=Source.CONVERSATION, metadata=meta,
        )
        ops.append(Op(kind="add", id=memory_id_for(job.job_id, turn.hash, job.enqueued_ms), memory=memory, reason="verbatim"))
    note = f", {skipped} small talk skipped" if skipped else ""
    return Plan(ops=tuple(ops), decision=f"verbatim: {len(ops)} turn(s){note}", skipped=skipped)
