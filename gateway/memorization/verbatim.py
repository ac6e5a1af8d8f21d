"""``verbatim`` mode: no model; each new turn (of ``verbatim_roles``, default the user's)
is stored as it was said, with keywords (:func:`gateway.memorization.keywords.keywords_of`)
and ``occurred_at`` = message time, or the day a relative expression in it names ("I went
there yesterday", "我上周五去了北京": :func:`gateway.memory.dates.relative_in`, kept in
``metadata.occurred_expression``): an episodic *event* memory of the (user, friend) pair,
or, for a user turn stating a preference or fact about the user, a *profile* memory
(``verbatim_profile``); small talk is skipped (``verbatim_skip_small_talk``;
:mod:`gateway.memorization.salience`), except a user's "yes" to a fact-checking question,
kept with the question. Near-identical memories are merged afterwards
(:mod:`gateway.memorization.neardup`, by the processor). No gist is made in this mode (an
extractive gist would only repeat the turns).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Literal

from gateway.memorization.disclosure import Formed, analyse, durable_type, elided_reply
from gateway.memorization.facts import base_metadata
from gateway.memorization.jobs import Job, Turn
from gateway.memorization.keywords import keywords_of
from gateway.memorization.plan import Op, Plan, memory_id_for
from gateway.memorization.salience import (
    as_statement,
    confirmed_type,
    is_affirmation,
    is_small_talk,
    profile_type,
    proposition,
)
from gateway.memorization.scope import CHANGE, ONGOING, STATE, TAKEN_ON
from gateway.memory.dates import relative_in
from gateway.memory.records import STATEMENTS, MemoryType, NewMemory, Scope, Source

#: How a turn becomes a memory (``memorize.verbatim_formation``): ``disclosure``, the
#: clauses that tell something (:mod:`gateway.memorization.disclosure`); ``turn``, the
#: whole turn.
Formation = Literal["disclosure", "turn"]

#: Longest reply (characters) kept with the question it answers when it is not a "yes".
ANSWER_CHARS = 120


#: Characters of a turn that verbatim memorization reads (the rest is cut first).
TURN_CHARS = 8000


def verbatim_plan(
    job: Job, texts: Sequence[str], roles: Sequence[str], max_chars: int = TURN_CHARS,
    skip_small_talk: bool = False, profile: bool = False, context_after: bool = True,
    formation: Formation = "turn", promote: Mapping[int, Collection[int]] | None = None,
) -> Plan:
    """One ``add`` per turn of ``job`` whose role is in ``roles``; ``texts`` are the turns'
    texts after redaction (same order as ``job.turns``). Op ids derive from the turn's
    dedupe hash, so the same turn in a replayed job maps to the same record.

    ``skip_small_talk``: turns :func:`~gateway.memorization.salience.is_small_talk` are
    not stored (counted in the plan's ``decision``), except a user's bare "yes" to a
    fact-checking question of the other side (:func:`~gateway.memorization.salience.proposition`:
    "So your flight is on May 3rd?" - "yes"): that question is stored with the answer
    (``"question — answer"``, ``metadata.confirmed``), replacing the question's own
    memory when it was stored from this job, else read from the turn's ``context``.
    ``profile``: a user turn stating a preference or fact about the user
    (:func:`~gateway.memorization.salience.profile_type`), or a confirmed question that
    states one about the user in the second person, becomes a profile memory of that
    type instead of an episodic event.

    Each memory's metadata links it to its source: ``position`` (the turn's index in the
    request or ingested chunk), ``speaker`` and a ``name: `` text prefix when the message
    had a ``name``, ``source_messages`` (``[turn.metadata]``) when the caller gave one.
    ``context_after``: keep each turn's ``context_after`` (the next message's start) on its
    memory (``verbatim_context_after``).

    ``formation`` ``disclosure`` (``verbatim_formation``; the config's default, ``auto``,
    takes it when only the user's turns are stored):
    a turn forms the memory :func:`gateway.memorization.disclosure.analyse` finds in it
    (the clauses in which the speaker tells something, in their words; requests,
    questions, small talk and talk about the conversation form nothing and are counted
    in ``skipped`` and ``dropped``), scoped ``profile`` when it is a lasting fact and
    carrying its supersede ``metadata.slot``; a turn that forms nothing but answers the
    other side's question about the speaker ("How often do you run?" - "twice a week")
    is kept with that question, as a confirmation is; so is a short Chinese reply that forms a
    memory but names no subject of its own ("基本不吃 或者一个面包" to "你平时早饭一般吃
    什么？": :func:`gateway.memorization.disclosure.elided_reply`), the question before its
    first memory. ``turn``: the whole turn is the
    memory (the rules above). ``promote`` (``disclosure`` only): per turn index, the
    clauses a learned classifier reads as disclosures
    (:mod:`gateway.memorization.clause_classifier`, ``verbatim_clause_classifier``): they
    join the turn's memories; a turn the rules keep as an answer to the other side's
    question stays that answer."""
    ops: list[Op] = []
    by_position: dict[int, int] = {}  # turn index -> index in ops of the memory it formed
    skipped = confirmed = 0
    dropped: dict[str, int] = {}
    previous: Turn | None = None
    for turn, text in zip(job.turns, texts, strict=True):
        kept = text.strip()[:max_chars]
        before, previous = previous, turn
        if turn.role not in roles or not kept:
            continue
        if formation == "disclosure":
            formed = _disclosed(job, turn, kept, before, ops, by_position, context_after,
                                (promote or {}).get(turn.index, ()))
            if isinstance(formed, str):
                skipped += 1
                dropped[formed] = dropped.get(formed, 0) + 1
                continue
            new_ops, slot = formed
            if slot is None:
                by_position[turn.index] = len(ops)
                ops.extend(new_ops)
            else:
                ops[slot] = new_ops[0]
                by_position[turn.index] = slot
            continue
        if skip_small_talk and is_small_talk(kept):
            found = (_confirmation(job, turn, kept, before, ops, by_position, profile, context_after)
                     if turn.role == "user" else None)
            if found is None:
                skipped += 1
                continue
            op, slot = found
            confirmed += 1
            if slot is None:
                slot = len(ops)
                ops.append(op)
            else:  # the question's memory from this job becomes question + answer
                ops[slot] = op
            by_position[turn.index] = slot
            continue
        kind = profile_type(kept) if profile and turn.role == "user" else None
        by_position[turn.index] = len(ops)
        ops.append(Op(kind="add", id=memory_id_for(job.job_id, turn.hash, job.enqueued_ms),
                      memory=_memory(job, turn, kept, kind, context_after), reason="verbatim"))
    if formation == "disclosure":
        note = "".join(f", {n} {why}" for why, n in sorted(dropped.items()))
        return Plan(ops=tuple(ops), decision=f"verbatim: {len(ops)} memory(ies) formed{note}", skipped=skipped,
                    dropped=dropped)
    note = f", {skipped} small talk skipped" if skipped else ""
    note += f", {confirmed} confirmation(s) kept with the question" if confirmed else ""
    return Plan(ops=tuple(ops), decision=f"verbatim: {len(ops)} turn(s){note}", skipped=skipped)


def _disclosed(job: Job, turn: Turn, kept: str, before: Turn | None, ops: list[Op], by_position: dict[int, int],
               context_after: bool, promote: Collection[int] = ()) -> tuple[list[Op], int | None] | str:
    """The memories ``turn`` forms under ``formation: disclosure`` and the index in
    ``ops`` of the question's memory the first replaces (None: new ops), or why it forms
    none (``request``, ``question``, ``small_talk``, ``meta``, ``other``): see
    :func:`verbatim_plan`. The first memory's op id derives from the turn's hash as in
    ``turn`` formation, the n-th's from ``hash:n``. A Chinese reply that names no subject
    (:func:`~gateway.memorization.disclosure.elided_reply`) is kept with the question it
    answers, and is lasting only when the two read together are too (:func:`answer_type`:
    周末去哪玩了？ + 去爬山了 is an episode)."""
    found = analyse(kept)
    if found.memories:
        if promote:
            found = analyse(kept, promote)
        memories = list(found.memories)
        question = _asked(turn, before) if turn.role == "user" and len(kept) <= ANSWER_CHARS and elided_reply(kept) else None
        if question is not None:  # "基本不吃 或者一个面包" to "你平时早饭一般吃什么？": the question says what about
            answer = memories[0]
            if answer.durable and answer_type(question, answer.text) is None:  # 周末去哪玩了？ + 去爬山了: an episode
                answer = replace(answer, durable=False, type=MemoryType.EPISODIC, slot=None, attribute=None)
            memories[0] = replace(answer, text=f"{question} — {answer.text}", statements=())  # two speakers: kept whole
        ops = [_formed_op(job, turn, formed, n, context_after) for n, formed in enumerate(memories)]
        if question is not None and ops[0].memory is not None:
            first = ops[0].memory
            confirmed = {"question": question, "answer": kept, "position": turn.index}
            ops[0] = ops[0].model_copy(update={"memory": first.model_copy(
                update={"metadata": {**first.metadata, "confirmed": confirmed}})})
        return ops, None
    if turn.role == "user" and found.dropped in ("small_talk", "other", "meta"):
        answered = _confirmation(job, turn, kept, before, ops, by_position, True, context_after,
                                 any_answer="other" in found.kinds)  # only small talk: only a "yes" confirms
        if answered is not None:
            op, slot = answered
            return [op], slot
    if promote and (chosen := analyse(kept, promote)).memories:
        return [_formed_op(job, turn, formed, n, context_after) for n, formed in enumerate(chosen.memories)], None
    if found.statement is not None:
        return [_formed_op(job, turn, found.statement, 0, context_after)], None
    return found.dropped


def _asked(turn: Turn, before: Turn | None) -> str | None:
    """The other side's question (:func:`~gateway.memorization.salience.proposition`) that
    ``turn`` answers: the previous turn of the job when it is the other side's, else the
    turn's ``context``; None when it asked none (or offered something)."""
    if before is not None and before.index == turn.index - 1:
        return None if before.role == "user" else proposition(before.text.strip())
    return proposition(turn.context)


def _formed_op(job: Job, turn: Turn, formed: Formed, n: int, context_after: bool) -> Op:
    memory = _memory(job, turn, formed.text, formed.type if formed.durable else None, context_after)
    if formed.slot:
        memory = memory.model_copy(update={"metadata": {**memory.metadata, "slot": formed.slot}})
    elif formed.attribute:  # the user's health: the profile pick keeps a place for it
        memory = memory.model_copy(update={"metadata": {**memory.metadata, "attribute": formed.attribute}})
    if formed.statements:  # after a "name: " prefix, the spans shift by its length
        shift = len(memory.text) - len(formed.text)
        spans = [[start + shift, end + shift] for start, end in formed.statements]
        spans[0][0] = 0
        memory = memory.model_copy(update={"metadata": {**memory.metadata, STATEMENTS: spans}})
    slot = turn.hash if n == 0 else f"{turn.hash}:{n}"
    return Op(kind="add", id=memory_id_for(job.job_id, slot, job.enqueued_ms), memory=memory, reason="verbatim")


def _memory(job: Job, turn: Turn, kept: str, kind: MemoryType | None, context_after: bool = True) -> NewMemory:
    meta = {**base_metadata(job), "kind": "turn", "role": turn.role, "turn_hash": turn.hash, "position": turn.index}
    if turn.metadata:
        meta["source_messages"] = [turn.metadata]
    if turn.name:
        meta["speaker"] = turn.name
    occurred = turn.at
    relative = relative_in(kept, turn.at)
    if relative is not None:  # "yesterday", "上周五": the day it names
        meta["occurred_expression"], occurred = relative
    return NewMemory(
        scope=Scope.PROFILE if kind else Scope.EVENT, type=kind or MemoryType.EPISODIC,
        text=f"{turn.name}: {kept}" if turn.name else kept,
        context=turn.context or None,
        context_after=(turn.context_after or None) if context_after else None,
        keywords=keywords_of(kept), importance=0.5, occurred_at=occurred,
        source=Source.CONVERSATION, metadata=meta,
    )


#: A question about what happened, asked with a past auxiliary ("How was the trip?", "What
#: did you order?", "Were they nice?"): the proposition its answer completes is a past
#: situation (Quirk et al. 1985, 4.14 on the past tense), an episode.
_ASKS_PAST_EN = re.compile(r"\b(?:did|was|were)\b", re.IGNORECASE)
#: A question about the moment of the conversation ("How's your day going?", "What are you
#: up to?", "Where are you right now?", "What are you cooking?", "What's the weather like?",
#: 你在干嘛呢？, 路上堵吗？, 感觉怎么样？, 考得怎么样？): deictic time or a progressive activity of
#: the moment (a stage-level predicate, Carlson 1977, ch. 2), so its answer tells how things
#: are now, an episode, like :data:`_ASKS_PAST_EN`'s. "What are you studying?", "Where do
#: you work now?" or a progressive with a complement ("How many are you cooking for?", "What
#: are you playing on?") ask what holds and are not matched.
_ASKS_MOMENT = re.compile(
    r"\b(?:right\s+now|at\s+the\s+moment|up\s+to|today|tonight|this\s+(?:morning|afternoon|evening|weekend)|"
    r"how(?:'s|\s+is|\s+was)\s+(?:your|the|my)\s+(?:day|morning|afternoon|evening|night|week|weekend|shift)|"
    r"how(?:'s|\s+is)\s+it\s+going|weather|what\s+time|feel|feeling|"
    r"(?:are|am)\s+(?:you|i)\s+(?:making|cooking|watching|eating|drinking|having|doing|reading|playing)\s*[?？]?\s*$)"
    r"|\bwhere\s+(?:are\s+you|am\s+i)(?:\s+(?:now|right\s+now))?\s*[?？]?\s*$"
    r"|在干嘛|在干什么|在做什么|干嘛呢|路上|感觉|怎么样|天气|几点|今天|今晚|刚才|吃了吗|吃的什么|睡得",
    re.IGNORECASE,
)


def answer_type(question: str, reply: str) -> MemoryType | None:
    """The profile type of a user's ``reply`` to the other side's ``question`` (a
    :func:`~gateway.memorization.salience.proposition`), or None (an event). The answer
    completes the question's proposition ("How old is she?" + "gonna be 4 in march": she is
    4), so the two are read together as the user's own statement
    (:func:`~gateway.memorization.salience.as_statement`: "How old is my son, nine") by the
    disclosure rules (:func:`~gateway.memorization.disclosure.durable_type`): lasting when
    what it tells holds (an age, a name, a breed, a job, where the user lives or works, a
    diet, a medication or a habit with its frequency), an event when it tells an episode
    (:func:`~gateway.memorization.scope.is_episode`: 今天吃的什么？ + 火锅), how the user is at
    the moment (:func:`~gateway.memorization.salience.is_passing`), or answers a question
    about the past or the moment (:data:`_ASKS_PAST_EN`, :data:`_ASKS_MOMENT`: "How was the trip?" + "amazing, we saw whales")
    with nothing that holds after it (a change, something taken on, a frequency or span:
    :data:`~gateway.memorization.scope.CHANGE`, :data:`~gateway.memorization.scope.TAKEN_ON`,
    :data:`~gateway.memorization.scope.ONGOING`, or a state in the reply: :data:`~gateway.memorization.scope.STATE`, "still bad, 3 months now"). Linear in the texts' length."""
    statement = as_statement(question).strip().rstrip("?？").strip()
    said = f"{statement}, {reply.strip()}"
    if (_ASKS_PAST_EN.search(statement) or _ASKS_MOMENT.search(question)) and not (
            CHANGE.search(said) or TAKEN_ON.search(said) or ONGOING.search(said) or STATE.search(reply)):
        return None
    return durable_type(said)


def _confirmation(job: Job, turn: Turn, reply: str, before: Turn | None, ops: list[Op],
                  by_position: dict[int, int], profile: bool, context_after: bool = True,
                  any_answer: bool = False) -> tuple[Op, int | None] | None:
    """The memory of a user's bare "yes" (``reply``) to the other side's fact-checking
    question and the index in ``ops`` of the question's own memory it replaces (None:
    a new op), or None (see :func:`verbatim_plan`). The question is the previous turn of
    the job when it has one (a user's own earlier turn confirms nothing), else the turn's
    ``context`` (the end of the message before it). ``any_answer``: ``reply`` need not be
    a "yes": any short answer (at most :data:`ANSWER_CHARS`: "twice a week", "两个") to
    the other side's question (not an offer: :func:`~gateway.memorization.salience.proposition`)
    is kept with it ("How old is Pixel? — ten weeks")."""
    if not any_answer and not is_affirmation(reply):
        return None
    if before is not None and before.index == turn.index - 1:
        if before.role == "user":
            return None
        question_text, asker = before.text.strip(), before
    else:
        question_text, asker = turn.context, None
    question = proposition(question_text)
    if question is None:
        return None
    if any_answer and not is_affirmation(reply) and len(reply) > ANSWER_CHARS:
        return None
    kind = None
    if profile:
        kind = confirmed_type(question)
        if kind is None and not is_affirmation(reply):
            kind = answer_type(question, reply)
    stored = by_position.get(asker.index) if asker is not None else None
    base = ops[stored].memory if stored is not None else None
    if base is not None:  # the question's own memory, from this job: keep it whole, add the answer
        said = base.text
    else:
        said = f"{asker.name}: {question}" if asker is not None and asker.name else question
    answer = f"{turn.name}: {reply}" if turn.name else reply
    memory = _memory(job, turn, reply, kind, context_after)
    meta = dict(memory.metadata)
    meta["confirmed"] = {"question": question, "answer": reply, "position": turn.index}
    sources = (list(base.metadata.get("source_messages", [])) if base is not None else []) + \
        list(meta.get("source_messages", []))
    if asker is not None and asker.metadata and base is None:
        sources.insert(0, asker.metadata)
    if sources:
        meta["source_messages"] = sources
    if base is not None:
        meta["position"] = base.metadata.get("position", meta["position"])
    memory = memory.model_copy(update={
        "text": f"{said} — {answer}", "metadata": meta, "keywords": keywords_of(f"{question} {reply}"),
        "context": base.context if base is not None else memory.context,
        "occurred_at": base.occurred_at if base is not None else memory.occurred_at,
    })
    op = Op(kind="add", id=memory_id_for(job.job_id, turn.hash, job.enqueued_ms), memory=memory, reason="verbatim")
    return op, stored
