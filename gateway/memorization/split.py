"""What a change leaves true of an older memory: its clauses the change does not touch.

A verbatim memory keeps a turn's words, and one memory often tells two facts: a clause
with no subject of its own stays with its sentence's memory ("我住张江，每天开帕萨特去公司":
home and car; "im a wedding photographer, solo, based in bristol": job and home), and
a coordinated clause with a subject of its own does too ("I'm a nurse at St Mary's and
I live in Leeds"). When a later statement changes one of them ("搬到前滩了", "we finally
moved into the flat in bath"), retiring the whole memory loses the other fact, and
keeping it leaves the old home live. :mod:`gateway.memorization.neardup` then retires
the older memory as before (``superseded_by``, kept for audit) and stores its unchanged
clauses as a memory of their own (:func:`remainder`, :func:`split_memory`): the clause
text as the user said it, with the older memory's date, scope, type and sources, and
``metadata.split_from`` naming it (and, for a memory split off in turn, those it continued). Nothing is invented: the new text is the older
memory's characters from the first kept clause to the last, less the changed clauses
(and the separator before each). A clause that hangs on a changed one goes with it, and
the rest must be readable alone (:func:`remainder`); otherwise the older memory is
retired or kept whole, as without this module.

The clauses are :func:`gateway.memorization.clauses.clauses` (sentence marks,
commas, 、, the Chinese conjunctions), each cut once more before "and" / "but" leading
a clause with a subject of its own (:data:`_COORDINATED`: "and I live in Leeds", "and
the team dietitian wants me at 130g"; Quirk et al. 1985, 13.9 on clausal coordination:
each conjoin is a clause of its own, so each states its own fact). Linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from gateway.memorization.changes import PEOPLE_ZH
from gateway.memorization.clauses import MAX_CHARS, clauses
from gateway.memorization.disclosure import analyse
from gateway.memorization.keywords import keywords_of
from gateway.memorization.scope import CHRONIC, HEALTH
from gateway.memorization.slots import slot_of
from gateway.memory.records import (
    FOLLOWED_BY,
    MAX_SPLIT_DEPTH,
    SPLIT_FROM,
    STATEMENTS,
    MemoryRecord,
    NewMemory,
    Scope,
    split_sources,
)

__all__ = ["SPLIT_FROM", "pieces", "rejoin", "remainder", "split_memory"]

#: "and" / "but" before a clause with a subject of its own (I, we, my, our, the + noun):
#: a coordinated clause, a fact of its own.
_COORDINATED = re.compile(r"\s+(?:and|but)\s+(?=(?:i|i'm|im|i've|ive|i'd|we|we're|we've|my|our|the)\s)", re.IGNORECASE)
#: A clause that hangs on the clause before it: led by a conjunction of result or reason
#: (so, because, 所以, 因为: Quirk et al. 1985, 15.45-15.49) or by a pronoun or
#: demonstrative whose antecedent is there (he, she, it, 他, 她, 这; Halliday & Hasan 1976,
#: 2.4), by an additive adverb (also, 也, 还: "她不吃香菜，也吃不了辣"; or after its subject: "我妈也希望我
#: 学医", :data:`_ADDITIVE_AFTER_SUBJECT`), by a workplace relation that bridges to a job told
#: before (:data:`_BRIDGED`: "老板天天催", "my boss ...") or a Chinese comment
#: on it (算是, 就是: "羽毛球，算是唯一的运动了"). So does a clause that names no subject of
#: its own (:data:`_OWN_SUBJECT`): its zero subject is the topic of the clause before
#: (Li & Thompson 1981, ch. 24 on zero anaphora): "我在一家外贸公司做业务员，天天加班到很晚",
#: "最近在自学日语，每天背五十个单词", "im a photographer, based in bristol". It goes with
#: that clause when the change takes it.
_DEPENDENT = re.compile(r"(?:so|because|cause|cuz|since|which|that's\s+why|he|she|they|it|he's|she's|they're|it's|"
                        r"his|her|their|its|him|them|this|that|these|those|also|too)\b|所以|因为|因此|于是|因而|他|她|它|这|那|算是|也|还|而且|就是",
                        re.IGNORECASE)
#: A clause whose subject is followed by an additive adverb (我妈也巨希望我学医, 我也是, "my wife
#: also runs"): the additive presupposes a parallel proposition, the clause before it (Karttunen
#: & Peters 1979 and Heim 1992 on the presupposition of "too" / "also"), so it hangs on it.
_ADDITIVE_AFTER_SUBJECT = re.compile(r"(?:我|咱|俺)?(?:的|家)?(?:" + PEOPLE_ZH + r")?(?:也|也是)"
                                     r"|(?:i|we|he|she|they|(?:my|our)\s+\w+)\s+(?:also|too)\b", re.IGNORECASE)
#: A clause led by a workplace relation, bare or the user's (老板 领导 上司 主管 同事, 我领导, "boss", "the
#: manager", "my boss"): a definite noun whose anchor is the job told before it (bridging reference,
#: Clark 1975, "Bridging"): "我在滨江做运营，……，老板天天催" is that job's boss, and goes with it.
_BRIDGED = re.compile(r"(?:我的?|我们)?(?:老板|领导|上司|主管|经理|同事们?)(?!娘)"
                      r"|(?:(?:the|my|our)\s+)?(?:boss|manager|supervisor|coworkers?|colleagues?)\b", re.IGNORECASE)
#: A clause that names its own subject at its start: the user (I, we, my, our, 我, 咱, 俺),
#: someone of theirs (:data:`gateway.memorization.changes.PEOPLE_ZH`: 老公, 室友), a noun
#: phrase (the, a, an) or a name.
_OWN_SUBJECT = re.compile(r"(?:i|i'm|im|i've|ive|i'd|we|we're|we've|my|our|the|a|an)\b|(?-i:[A-Z][a-z]+)\s|我|咱|俺|"
                          + PEOPLE_ZH, re.IGNORECASE)
#: A third-person pronoun (he, she, they, 他, 她, 它): in a remainder that names no one
#: (:data:`_SOMEONE`), its antecedent was in a changed clause ("闺女高三了，…，我这当爹的比她
#: 还紧张"), and the rest cannot be read alone.
_PRONOUN = re.compile(r"\b(?:he|she|him|his|her|hers|they|them|their|theirs)\b|[他她它]", re.IGNORECASE)
_SOMEONE = re.compile(r"\b(?:my|our)\s+\w+|(?<=\w\s)(?-i:[A-Z][a-z]+)\b|" + PEOPLE_ZH, re.IGNORECASE)
#: A memory's closing mark, kept on its remainder.
_END_MARK = re.compile(r"[.!。！]+$")
#: Metadata of the older memory that describes its whole text, not the remainder: its
#: slot and health attribute (recomputed), its near-duplicate merges (texts of the whole);
#: and the store's own list of its followers (the new memory names the older ones in
#: :data:`gateway.memory.records.SPLIT_FROM`, and recall reads their lists).
_WHOLE_ONLY = frozenset({"slot", "attribute", "merged", "mentions", FOLLOWED_BY, STATEMENTS})


def pieces(text: str) -> list[tuple[int, int]]:
    """The clauses of ``text`` as ``(start, end)`` character offsets, in order (module
    docstring); empty when ``text`` is longer than the clause reader reads
    (:data:`gateway.memorization.clauses.MAX_CHARS`). Linear in ``len(text)``."""
    return [(start, end) for start, end, _clause in _pieces(text)]


def _pieces(text: str) -> list[tuple[int, int, int]]:
    """:func:`pieces`, each with the index of its clause in
    :func:`gateway.memorization.clauses.clauses`."""
    if len(text) > MAX_CHARS:
        return []
    spans: list[tuple[int, int, int]] = []
    position = 0
    for number, clause in enumerate(clauses(text)):
        start = text.find(clause.text, position)
        if start < 0:  # a clause is always a substring of the text, in order
            return []
        end = position = start + len(clause.text)
        for cut in _COORDINATED.finditer(text, start, end):
            spans.append((start, cut.start(), number))
            start = cut.end()
        spans.append((start, end, number))
    return spans


def remainder(text: str, changed: Callable[[str], bool], keep: Callable[[str], bool] | None = None) -> str | None:
    """``text`` without its clauses (:func:`pieces`) that ``changed`` says the new statement
    changes: the kept clauses as said, each run of adjacent ones with the characters
    between them, a run joined to the next by the separator that followed it, and the
    text's closing full stop or exclamation mark. A kept clause that hangs on a changed one
    before it goes too (:data:`_DEPENDENT`). None when no clause or every clause is
    changed, when no kept clause is a disclosure of its own in ``text``
    (:func:`gateway.memorization.disclosure.analyse`'s clause kinds: what is left only
    continues the changed clause), when what is left does not start with a subject of its
    own (:data:`_OWN_SUBJECT`) where a changed clause came before it, or holds a pronoun and
    names no one (:data:`_PRONOUN`): it could not be read without the clause that went (a
    zero subject takes its antecedent from the clauses before it, Li & Thompson 1981, ch. 24,
    so a remainder that starts the memory reads as the memory did: "体检查出尿酸高，痛风犯过一回"
    once "我每天晚上得整两瓶啤酒" goes), or when what is left forms no memory on its own
    (:func:`gateway.memorization.disclosure.analyse`: "near the river" alone says nothing
    of the user), or when a kept clause fails ``keep`` (a test on each kept clause).
    Linear in ``len(text)`` times the cost of the tests."""
    numbered = _pieces(text)
    if len(numbered) < 2:
        return None
    spans = [(start, end) for start, end, _n in numbered]
    flags = [changed(text[s:e]) for s, e in spans]
    if not any(flags):
        return None
    for n in range(1, len(spans)):  # "so our schedules are opposite", "he sleeps on the shelf": of the clause before
        if flags[n - 1] and not flags[n] and _hangs(text[spans[n][0]:spans[n][1]]):
            flags[n] = True
    if all(flags):
        return None
    kinds = analyse(text).kinds
    kept = [(s, e, number) for (s, e, number), flag in zip(numbered, flags, strict=True) if not flag]
    if not any(kinds[number] == "disclosure" for _s, _e, number in kept):
        return None  # only continuations of a changed clause ("算是唯一的运动了")
    if keep is not None and not all(keep(text[s:e]) for s, e, _n in kept):
        return None
    if kept[0][0] != spans[0][0] and not _OWN_SUBJECT.match(text, kept[0][0]):
        return None  # "车是自己的", "bit of a rough month tbh": it says what of whom only with the clause that went
    rest, _spans = rejoin(text, spans, [(n, text[start:end]) for n, (start, end) in enumerate(spans) if not flags[n]])
    if mark := _END_MARK.search(text):  # no clause holds the text's closing mark
        rest += mark.group()
    rest = rest.strip()
    if _PRONOUN.search(rest) and not _SOMEONE.search(rest):
        return None
    return rest if rest and analyse(rest).memories else None


def rejoin(text: str, spans: Sequence[tuple[int, int]], kept: Sequence[tuple[int, str]]) -> tuple[str, list[tuple[int, int]]]:
    """The pieces ``kept`` of ``text`` joined as they were said: ``(n, piece)`` in order, ``n`` the
    index in ``spans`` of the piece's place in ``text`` and ``piece`` its text (the span's
    characters, or what is left of them); each piece after the first follows the characters
    that came after the kept piece before it in ``text`` (so adjacent pieces keep what was
    between them). Returns the text and each piece's ``(start, end)`` in it. Linear."""
    out: list[str] = []
    placed: list[tuple[int, int]] = []
    at = 0
    for k, (_n, piece) in enumerate(kept):
        if k:
            previous = kept[k - 1][0]
            out.append(text[spans[previous][1]:spans[previous + 1][0]])
            at += len(out[-1])
        placed.append((at, at + len(piece)))
        out.append(piece)
        at += len(piece)
    return "".join(out), placed


def _hangs(clause: str) -> bool:
    """``clause`` hangs on the clause before it (:data:`_DEPENDENT`): led by a dependent
    word, by no subject of its own, by a subject and an additive adverb
    (:data:`_ADDITIVE_AFTER_SUBJECT`) or by a workplace relation (:data:`_BRIDGED`)."""
    return bool(_DEPENDENT.match(clause) or _ADDITIVE_AFTER_SUBJECT.match(clause) or _BRIDGED.match(clause)) \
        or not _OWN_SUBJECT.match(clause)


def split_memory(record: MemoryRecord, text: str, statements: Sequence[tuple[int, int]] = ()) -> NewMemory:
    """The memory made of ``record``'s unchanged clauses ``text`` (:func:`remainder`):
    ``record``'s scope, type, contexts, importance, time (``occurred_at``; the apply step
    keeps its ``created_at`` and ``updated_at`` too), source and metadata, with
    ``metadata.split_from`` = ``record.id`` then the ids ``record`` continued itself, newest
    first, at most :data:`~gateway.memory.records.MAX_SPLIT_DEPTH` (:data:`gateway.memory.records.SPLIT_FROM`:
    recall takes what followed any of them as following this memory), the slot and health attribute of ``text``
    (:func:`gateway.memorization.slots.slot_of`; the attribute only while ``text``
    still names a condition), keywords of ``text`` and, when it keeps more than one
    statement of ``record``, their spans in ``text`` (``statements``:
    :data:`gateway.memory.records.STATEMENTS`)."""
    meta: dict[str, Any] = {k: v for k, v in record.metadata.items() if k not in _WHOLE_ONLY}
    meta[SPLIT_FROM] = [record.id, *split_sources(record.metadata)][:MAX_SPLIT_DEPTH]
    if len(statements) > 1:
        meta[STATEMENTS] = [[start, end] for start, end in statements]
    slot = slot_of(text) if record.scope is Scope.PROFILE else None
    if slot:
        meta["slot"] = slot
    elif record.metadata.get("attribute") and HEALTH.search(text):
        meta["attribute"] = "condition" if CHRONIC.search(text) else "health"
    speaker = record.metadata.get("speaker")
    said = text[len(speaker) + 2:] if isinstance(speaker, str) and text.startswith(f"{speaker}: ") else text
    return NewMemory(scope=record.scope, type=record.type, text=text, context=record.context,
                     context_after=record.context_after, keywords=keywords_of(said), importance=record.importance,
                     emotion=record.emotion, occurred_at=record.occurred_at, source=record.source,
                     confidence=record.confidence, based_on=list(record.based_on), metadata=meta)
