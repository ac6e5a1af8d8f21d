"""Turning the memory model's answers into memories and writes, sans-IO.

- :func:`to_new_memory`: an extracted fact becomes a :class:`NewMemory`. Speaker
  attribution: a fact from an assistant turn is about the persona's side of this
  friendship, so it is stored as an *event* memory with ``metadata.speaker="assistant"``
  and never as the user's profile. Preference slots (seed 000 P3): ``type=preference``
  with ``metadata {"slot", "value"}`` for personalization. ``occurred_at`` comes from
  :func:`gateway.memory.dates.resolve_occurred` (message time if unknown).
- :func:`usable_facts`: placeholder or empty facts (``"..."``, ``"N/A"``,
  the prompt's own example) are dropped, identical facts (:func:`normalized` text) kept
  once, at most ``max_facts`` kept; :func:`already_known` tells a fact whose text an
  existing candidate memory already has (it is not stored again, nor sent to reconcile).
- :func:`reconcile_ops`: mem0's ADD / UPDATE / DELETE / NOOP decisions (Chhikara et al.
  2025) checked against what the model was shown: a target must be one of that fact's
  candidates (short ids ``m1..``); an UPDATE of an unknown target becomes ADD, a DELETE
  of one becomes NOOP; a record is updated or deleted at most once per job; a fact the
  model forgot to decide on is ADDed (never a silent loss).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from gateway.memorization.jobs import Job
from gateway.memorization.plan import Op, memory_id_for
from gateway.memorization.schemas import ExtractedFact, ReconcileDecision
from gateway.memory.dates import resolve_occurred
from gateway.memory.records import MemoryRecord, MemoryType, NewMemory, Scope, Source

PREFERENCE_SLOTS = ("technical_depth", "language", "response_length", "code_style")


#: Texts small models emit instead of a fact: the extraction prompt's own example value,
#: "none"-like words and template slots. Compared after :func:`normalized`.
PLACEHOLDERS = frozenset({
    "", "n/a", "na", "none", "null", "nil", "nothing", "unknown", "empty", "todo", "tbd", "fact",
    "facts", "text", "the fact", "string", "example", "placeholder", "no facts", "no fact", "-",
    "无", "没有", "空",
})
_SPACE_RE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.,;:!?'\"`()[]{}<>-_*#…。，；：！？、“”‘’（）【】《》"


def normalized(text: str) -> str:
    """Case-folded, whitespace collapsed, punctuation trimmed at both ends: two facts with
    the same normalized text say the same thing.

    >>> normalized("  The user likes  Jazz. "), normalized("...")
    ('the user likes jazz', '')
    """
    return _SPACE_RE.sub(" ", text.casefold()).strip(_EDGE_PUNCT)


def is_placeholder(text: str) -> bool:
    """True for an empty or placeholder fact (``"..."``, ``"N/A"``, ``"<fact>"``) or one
    without a single letter or digit."""
    norm = normalized(text)
    return norm in PLACEHOLDERS or not any(ch.isalnum() for ch in norm)


def usable_facts(facts: Sequence[ExtractedFact], limit: int) -> list[ExtractedFact]:
    """``facts`` minus placeholders and repeats (first kept), at most ``limit``."""
    seen: set[str] = set()
    kept: list[ExtractedFact] = []
    for fact in facts:
        key = normalized(fact.text)
        if is_placeholder(fact.text) or key in seen:
            continue
        seen.add(key)
        kept.append(fact)
        if len(kept) == limit:
            break
    return kept


def already_known(memory: NewMemory, candidates: Sequence[MemoryRecord]) -> bool:
    """A candidate (live memory of the same tenant and scope) has the same normalized text."""
    key = normalized(memory.text)
    return any(normalized(c.text) == key for c in candidates)


def base_metadata(job: Job) -> dict[str, object]:
    """Links every memory of a job back to where it came from."""
    meta: dict[str, object] = {
        "conversation_id": job.conversation_id, "job_id": job.job_id, "request_id": job.request_id,
    }
    if job.partial:
        meta["partial"] = True
    if job.client_metadata:
        meta["client_metadata"] = dict(job.client_metadata)
    sources = [t.metadata for t in job.turns if t.metadata]
    if sources:  # extract mode cannot tell which turn a fact came from: all of the job's
        meta["source_messages"] = sources
    return meta


def _slot(value: str | None) -> str | None:
    if not value:
        return None
    slot = re.sub(r"[^a-z0-9_]+", "_", value.strip().lower()).strip("_")
    return slot[:64] or None


def to_new_memory(fact: ExtractedFact, job: Job, message_time: datetime) -> NewMemory:
    """See module docstring."""
    meta = {**base_metadata(job), "speaker": fact.speaker}
    scope = Scope(fact.scope) if fact.speaker == "user" else Scope.EVENT
    mtype = MemoryType(fact.type)
    slot = _slot(fact.slot)
    if mtype is MemoryType.PREFERENCE and slot:
        meta.update(slot=slot, value=(fact.value or "").strip())
    if fact.occurred:
        meta["occurred_expression"] = fact.occurred[:100]
    occurred = resolve_occurred(fact.occurred, message_time) or message_time
    emotion = (fact.emotion or "").strip()[:64] or None
    return NewMemory(
        scope=scope, type=mtype, text=fact.text.strip(), keywords=[k[:64] for k in fact.keywords[:8]],
        importance=fact.importance, emotion=emotion, occurred_at=occurred,
        source=Source.CONVERSATION, metadata=meta,
    )


def short_ids(candidates: Sequence[Sequence[MemoryRecord]]) -> dict[str, MemoryRecord]:
    """``m1, m2, ...`` for each distinct candidate record, in order of first appearance."""
    out: dict[str, MemoryRecord] = {}
    seen: set[str] = set()
    for group in candidates:
        for record in group:
            if record.id not in seen:
                seen.add(record.id)
                out[f"m{len(out) + 1}"] = record
    return out


def reconcile_ops(
    job: Job,
    memories: Sequence[NewMemory],
    candidates: Sequence[Sequence[MemoryRecord]],
    decisions: Sequence[ReconcileDecision],
    first_slot: int = 0,
) -> list[Op]:
    """Writes for ``memories`` (fact i has ``candidates[i]``); see module docstring.
    Op ids are :func:`memory_id_for` ``(job, first_slot + i)``."""
    names = short_ids(candidates)
    by_id = {r.id: name for name, r in names.items()}
    allowed = [{by_id[r.id] for r in group} for group in candidates]
    chosen: dict[int, ReconcileDecision] = {}
    for given in decisions:
        if given.fact < len(memories) and given.fact not in chosen:
            chosen[given.fact] = given
    touched: set[str] = set()
    ops: list[Op] = []
    for i, memory in enumerate(memories):
        new_id = memory_id_for(job.job_id, str(first_slot + i), job.enqueued_ms)
        decision: ReconcileDecision | None = chosen.get(i)
        event = decision.event if decision else "ADD"
        target = decision.target if decision else None
        valid = target in allowed[i] and target not in touched if target else False
        if event == "NOOP":
            continue
        if event == "DELETE":
            if valid:
                touched.add(target)  # type: ignore[arg-type]
                ops.append(Op(kind="delete", target=names[target].id, reason=f"contradicted: {memory.text[:300]}"))  # type: ignore[index]
            continue
        if event == "UPDATE" and valid:
            touched.add(target)  # type: ignore[arg-type]
            text = ((decision.text if decision else None) or "").strip() or memory.text
            ops.append(Op(kind="update", id=new_id, target=names[target].id,  # type: ignore[index]
                          memory=memory.model_copy(update={"text": text}), reason="updated"))
            continue
        ops.append(Op(kind="add", id=new_id, memory=memory, reason="new"))
    return ops


def render_candidates(memories: Sequence[NewMemory], candidates: Sequence[Sequence[MemoryRecord]]) -> str:
    """The reconcile prompt's items: each new fact and its candidates by short id."""
    names = {r.id: n for n, r in short_ids(candidates).items()}
    lines = []
    for i, (memory, group) in enumerate(zip(memories, candidates, strict=True)):
        lines.append(f"New fact {i}: {memory.text}")
        for record in group:
            lines.append(f"  [{names[record.id]}] {record.text} (since {record.occurred_at.date().isoformat()})")
        if not group:
            lines.append("  (no existing memories)")
    return "\n".join(lines)
