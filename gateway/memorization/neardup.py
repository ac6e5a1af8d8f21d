"""Near-identical verbatim memories are merged, not stored twice.

A user who says "I'm allergic to peanuts" to one friend and "I am allergic to peanuts."
to another, or a client that resends a chunk under a new session id, would otherwise
leave copies that crowd recall. Before a verbatim plan is applied
(:func:`merge_near_duplicates`), each new memory is compared with the memories of the
same user, scope and type nearest to its text (the vector ranking alone, ``top_k`` =
:data:`CANDIDATES`: a duplicate is what is nearest; the keyword ranking's extra
candidates and their record reads cost a profile search most of its time), and with the
plan's earlier memories:

- **duplicate** when the normalised texts are equal (:func:`normalised`: NFKC, case
  folded, English contractions expanded, punctuation, emoji and spaces removed), or
  when the search's cosine similarity is at least :data:`MIN_SIMILARITY` *and* the token
  sets overlap by at least :data:`MIN_OVERLAP` (Jaccard; Latin words and single CJK
  characters: the packaged English embedder maps many Chinese characters to one unknown
  token, so "我喜欢科幻电影" and "我喜欢恐怖电影" have cosine 1.0 there and only the
  tokens tell them apart) *and* both name the same numbers and the same negations
  ("May 3rd" vs "May 4th", "I like" vs "I don't like" stay apart);
- an episodic event is a duplicate only of one that happened the same day (the same
  words on two days are two episodes: "I went running today").

Supersede, when the new memory is a profile statement that fills a slot (its
``metadata.slot``: residence, employer, diet, relationship status;
:func:`gateway.memorization.slots.slot_of`) and is no duplicate: every live profile
memory among the hybrid search's :data:`SLOT_CANDIDATES` best hits (vector and keyword
rankings: the earlier statement may share words more than meaning) that fills the same slot
(its own ``metadata.slot``, or the slot its text names; the new memory may fill more
than one: a transfer by the employer, "公司把我调到重庆了", fills work and residence,
:func:`gateway.memorization.slots.slots_of`) is retired for it (not a memory about
the partner when the relationship goes on and the new statement does not name them:
:func:`gateway.memorization.slots.keeps_partner`): the newest
becomes an op ``update`` (retired with ``superseded_by``, kept for audit, never recalled
again), the others ``delete`` (retired); not one that still holds a fact the new
statement does not change (:func:`gateway.memorization.slots.keeps_other_fact`:
"我在深圳一家电商公司做后端" keeps the city when a new job names none; a promotion keeps
the employer; "搬家全靠我一个人" names no new home), nor one whose value the new statement says
again with no word of change (:func:`gateway.memorization.slots.says_again`: they share a
name, a place, a brand, a number or a Chinese content bigram that is no cue word of the slot,
and the new one says nothing ended, no "from" / 从 / 以前, no "new job" / 新家, no switch and no
move to a place the older does not hold): "Since I'm in Denver" after "We moved to Denver three
weeks ago", "我那台比亚迪充电挺方便的" after "换了台比亚迪汉" are repeats, not changes, and
retiring the older would lose what only it says (when the move was, the model); the new
memory follows the nearest such one (``metadata.follows``, as below) so recall shows both.
"I moved to Berlin" retires "I live in Lisbon";
"I'm not vegetarian anymore" retires "I've been vegetarian since last year".

A memory that tells two facts is read clause by clause (:mod:`gateway.memorization.split`;
only the user's own words, ``metadata.kind`` ``turn``, not a confirmed question): a clause
is changed when it fills one of the new memory's slots and holds no other fact it keeps
(:func:`gateway.memorization.slots.keeps_other_fact` on the clause), or, for an
ending, when it is about the ended thing. When some clauses are changed and the others
form a memory of their own that fills none of those slots, the older memory is retired
(as above) and an op ``split`` stores its unchanged clauses as a new memory
(:func:`gateway.memorization.split.split_memory`: the user's words, the older memory's
times, scope and sources, ``metadata.split_from``; its id fixed by the superseding op
and the older memory, so a replayed job writes it once): "我住张江，我每天开帕萨特去公司"
leaves "我每天开帕萨特去公司" after "搬到前滩了" (a clause with no subject of its own goes
with the changed one before it: :func:`gateway.memorization.split.remainder`). This holds too where the memory's slot is
another one ("I'm a nurse at St Mary's and I live in Leeds", slot work, and "I moved to
York") or where the whole memory would stay for the fact it keeps ("我开出租的，白班，…"
and "换成夜班了": the job stays, the day shift goes); when no clause is changed, or what
is left says nothing on its own, the memory is retired or kept whole as before.
A memory of several statements of one turn (:data:`gateway.memory.records.STATEMENTS`,
:func:`gateway.memorization.disclosure.analyse`) is read statement by statement first,
each as the memory it would have been alone (:func:`_statement_verdict`): the statements
a change leaves whole and the unchanged clauses of the one it changes are the rest
("我们家住沈阳，冬天太冷了，膝盖受不了，一到冬天就疼" leaves "膝盖受不了，一到冬天就疼" after
"我们搬到三亚了"), and a statement that says a value again links the new memory to it.

Supersede, too, when the new memory is a profile statement that says something ended
without a slot word (:func:`gateway.memorization.changes.ended_of`: "I stopped running,
it's swimming now", "我不喝咖啡了"): the search reads :data:`SLOT_CANDIDATES` hits of the
profile *and* the friend's events, and every live one about the ended thing
(:func:`gateway.memorization.changes.is_about`: its head word and half its terms),
said by the same speaker, whose cosine reaches :data:`CHANGE_MIN_SIMILARITY` is retired
the same way; a memory about
someone else of the user's ("My husband loves coffee",
:func:`gateway.memorization.clauses.about_someone`) only by an ending that names that
person ("my husband stopped drinking coffee"); an event only by a plan changed or the
thing called off ("cancelled the trip", 取消了): "Sold the boat" leaves "Taking the boat
down the Madison this weekend" true. A change that names neither its slot nor
the ended thing's word ("that's over now"; "I gave up on the clay" after a pottery
class) is not caught.

Follow-up link, when a new memory is kept (no duplicate, nothing superseded, no repeat of a
slot's value, which follows the statement it repeats): the nearest
older live profile memory among its search's hits (:func:`follows_of`: the same speaker;
cosine at least :data:`FOLLOW_MIN_SIMILARITY`, or, for two mostly Chinese texts, whose
cosine the default Chinese embedder compresses into 0.85-0.95 whatever they say, a shared
content term, :func:`gateway.memorization.changes.terms`, or, for two English texts under
that cosine, one thing of the user's both name, :data:`LINK_TOPICS`: "Transferred up to the
ICU" after "I'm an ER nurse", "closed on a 38ft dragger" after "saving to get my own boat")
is written to the new memory's ``metadata.follows``. Nothing is retired: most later statements on the same thing that
name no slot and no ended thing ("traded the ol pete in for a kenworth" after "I run a
peterbilt"; "they turned 7 last week" after "my twins are 6") are changes, but as many
nearest pairs are a second fact on the same thing ("a second dog", "a trip to Paris"
while living in Lisbon), and a false retirement loses a true memory. Recall shows the
newer memory whenever it shows the one it follows (the recall plugin), each
line with its date, so the model reads which statement is the latest. An event memory
is searched for this (one vector search of the profile, :data:`CANDIDATES` hits) even
where events are not compared for duplicates, unless its plan adds more than
:data:`MAX_LINKED_EVENTS` events (an ingested transcript).

Merge, not skip: the new memory becomes an op ``merge`` onto the existing one
(:func:`gateway.memorization.apply.apply_plan`): the existing record keeps its text and
id and gains the new turn's ``metadata.source_messages`` and a ``metadata.merged`` entry
(turn hash, conversation, position, time, and the text when it differs), so nothing the
caller sent is lost and a replay adds nothing twice. A hit that is the op's own record
(a replayed job whose first attempt wrote it) is not a duplicate. Two jobs racing with
the same new text can still both add it (no lock; the next one merges).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Literal

from gateway.memorization.changes import Ended, ended_of, is_about, terms
from gateway.memorization.clauses import about_someone, clauses
from gateway.memorization.disclosure import analyse
from gateway.memorization.kinds import is_ask
from gateway.memorization.lexicon import ADVISOR_EN, BOATS_EN, CAR_MAKES_EN, OCCUPATIONS_EN, TRUCK_MAKES_EN, VEHICLES_EN
from gateway.memorization.plan import Op, Plan, memory_id_for
from gateway.memorization.slots import keeps_other_fact, keeps_partner, same_slot, says_again, slot_of, slots_of
from gateway.memorization.split import rejoin, remainder, split_memory
from gateway.memory.embeddings.base import embed_one
from gateway.memory.records import FOLLOWS, MemoryRecord, MemoryType, NewMemory, Scope, Tenant, statement_spans
from gateway.runtime.text import CJK_CLASS, HAN_CLASS

__all__ = ["CANDIDATES", "FOLLOW_MIN_SIMILARITY", "LINK_TOPICS", "MAX_LINKED_EVENTS", "MIN_OVERLAP", "MIN_SIMILARITY", "ZH_MIN_CONTAINMENT", "decide", "follows_of", "is_near_duplicate",
           "link_topics", "merge_near_duplicates", "mostly_chinese", "normalised", "searches_of"]

#: Existing memories compared per new one (the search's best hits).
CANDIDATES = 5
#: Existing profile memories compared per new one that fills a slot (residence, employer,
#: diet, relationship: :func:`gateway.memorization.slots.slot_of`): the earlier
#: statement of the slot shares few words with the new one ("I live in Lisbon" / "I moved
#: to Berlin"), so more of the profile is read.
SLOT_CANDIDATES = 20
#: Cosine similarity (the store's ``similarity``) a near-duplicate must reach besides the
#: token overlap: "I really love hiking in the mountains." / "I love hiking in the
#: mountains!" score 0.973 with all-MiniLM-L6-v2, a different place ("Vancouver" /
#: "Victoria") 0.71.
MIN_SIMILARITY = 0.9
#: Jaccard overlap of the two token sets a near-duplicate must reach (the hiking pair
#: above: 6/7).
MIN_OVERLAP = 0.8
#: Cosine similarity (the store's ``similarity``: the new memory's text against the older
#: record's vector, which also holds the assistant's words around it) an older memory
#: must reach to be retired by a change said without a slot word
#: (:mod:`gateway.memorization.changes`), besides holding the ended thing's terms. A
#: safety net, not the test: with all-MiniLM-L6-v2 the same-thing pairs measured 0.39
#: ("I stopped running." / "I run 5k every morning before work.") to 0.63 (Chinese),
#: and the pairs sharing the word by chance 0.14 ("I quit smoking." / "Smoked salmon is
#: my favourite breakfast.") to 0.63 ("I stopped playing tennis." / "I watch tennis on
#: TV every Sunday.", which is retired: a known limit), so only the pun-like pairs fall
#: below it.
CHANGE_MIN_SIMILARITY = 0.2
#: Cosine similarity (the store's ``similarity``, as for :data:`CHANGE_MIN_SIMILARITY`) the
#: nearest older profile memory must reach to be the one a new memory follows
#: (``metadata.follows``, :func:`follows_of`). With the packaged English embedder, over the
#: read splits of ``python -m bench assistant`` (text against text), a later statement that
#: changes an earlier one scores 0.25-0.76 with it (median 0.41), and the nearest memory of
#: a statement that changes nothing scores under 0.3 in two cases of three; 0.3 keeps
#: three quarters of the changes. A link only adds a line to recall, it retires nothing.
FOLLOW_MIN_SIMILARITY = 0.3
#: Most event adds of one plan searched for their link when events are not compared for
#: duplicates (:func:`searches_of`): a chat turn forms a few; an ingested transcript forms
#: hundreds, whose episodes would double its searches, and are not linked.
MAX_LINKED_EVENTS = 8
#: Share of the new memory's character bigrams (:func:`_bigrams`) the older one must hold
#: for a Chinese near-duplicate, whatever the cosine (all-MiniLM-L6-v2, the default
#: embedder, is trained on English: Chinese restatements score anywhere from 0.5 to 0.95):
#: the new statement then says next to nothing the older does not ("我对花生过敏" /
#: "我对花生过敏的" 1.0; "我女儿上初二" / "我女儿今年上初二了" 4/5; a different fact sharing
#: its frame, "我每天喝两杯咖啡" / "我每天喝两杯绿茶", 4/6 = 0.67 stays apart; numbers and
#: negations must match as for English).
ZH_MIN_CONTAINMENT = 0.8

_CONTRACTIONS = ((re.compile(r"n't\b"), " not"), (re.compile(r"'m\b"), " am"), (re.compile(r"'re\b"), " are"),
                 (re.compile(r"'ve\b"), " have"), (re.compile(r"'ll\b"), " will"), (re.compile(r"'d\b"), " would"))
_STRIP = re.compile(r"[\W_]+", re.UNICODE)
_TOKEN = re.compile(rf"[{CJK_CLASS}]|[^\W_]+", re.UNICODE)
#: Numbers two statements must share to be duplicates; a lone 一 before a measure word is
#: the article "a" ("一家公司": a company), no number.
_NUMBER = re.compile(r"\d+|(?!一[个家只条位件次种点些下份辆台本张间所门句回趟])[零一二三四五六七八九十百千万两]+")
_CJK_CHAR = re.compile(rf"[{HAN_CLASS}]")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|without)\b|[不没别无未非]")

#: :func:`gateway.memorization.changes.ended_of`, memoized: :func:`searches_of` and
#: :func:`decide` both read it for each new profile memory (its result is an immutable
#: tuple of frozen values; as many texts as :func:`gateway.memorization.disclosure.analyse` keeps).
_ended = functools.lru_cache(maxsize=1024)(ended_of)


@functools.lru_cache(maxsize=1024)
def told(text: str) -> str:
    """``text`` less its clauses that ask (:func:`gateway.memorization.kinds.is_ask`: a
    request or a question, whatever fact of the user's it carries), their texts joined by a
    space; "" when every clause asks. What a memory asserts: only this may supersede an
    older memory (an ask presupposes what it says of the user and tells no change: "Can you
    give me a plant-based version of a Sunday roast" leaves "I've gone vegan" as it was).
    Linear in ``len(text)``; memoized."""
    parts = clauses(text)
    said = [part.text for part in parts if not is_ask(part)]
    return text if len(said) == len(parts) else " ".join(said)


def _expanded(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    for pattern, full in _CONTRACTIONS:
        text = pattern.sub(full, text)
    return text


def normalised(text: str) -> str:
    """The comparison key of ``text``: NFKC, case folded, contractions expanded, every
    non-word character removed. ``normalised("I'm allergic to peanuts") ==
    normalised("i am allergic to peanuts.")``. Linear in ``len(text)``."""
    return _STRIP.sub("", _expanded(text))


def _tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(_expanded(text)))


def _bigrams(text: str) -> set[str]:
    """The overlapping character pairs of ``text`` normalised (:func:`normalised`: no
    punctuation or spaces), so "我对花生过敏" gives 我对 对花 花生 生过 过敏."""
    key = _STRIP.sub("", text)
    return {key[i:i + 2] for i in range(len(key) - 1)} or ({key} if key else set())


def _mostly_cjk(text: str) -> bool:
    letters = _STRIP.sub("", text)
    return bool(letters) and 2 * len(_CJK_CHAR.findall(letters)) >= len(letters)


def mostly_chinese(text: str) -> bool:
    """At least half of ``text``'s letters and digits (case folded, contractions expanded)
    are Han ideographs: :func:`is_near_duplicate` compares two such texts by character
    bigrams, not by cosine. Linear in ``len(text)``."""
    return _mostly_cjk(_expanded(text))


def is_near_duplicate(new: str, old: str, similarity: float) -> bool:
    """True when ``new`` and ``old`` say the same thing (module docstring);
    ``similarity``: their cosine as the store reports it. Two mostly Chinese texts are
    compared by characters instead of the cosine: at least :data:`ZH_MIN_CONTAINMENT` of
    the new one's character bigrams occur in the old one. Linear in the texts' length."""
    a, b = _expanded(new), _expanded(old)
    if _STRIP.sub("", a) == _STRIP.sub("", b):
        return True
    if _NUMBER.findall(a) != _NUMBER.findall(b) or sorted(_NEGATION.findall(a)) != sorted(_NEGATION.findall(b)):
        return False
    if _mostly_cjk(a) and _mostly_cjk(b):
        pairs = _bigrams(a)
        return bool(pairs) and len(pairs & _bigrams(b)) / len(pairs) >= ZH_MIN_CONTAINMENT
    if similarity < MIN_SIMILARITY:
        return False
    ta, tb = set(_TOKEN.findall(a)), set(_TOKEN.findall(b))
    return bool(ta | tb) and len(ta & tb) / len(ta | tb) >= MIN_OVERLAP


def _same_episode(new: NewMemory, old_type: MemoryType, old_at: Any) -> bool:
    if new.type is not MemoryType.EPISODIC and old_type is not MemoryType.EPISODIC:
        return True
    if new.occurred_at is None or old_at is None:
        return False
    return new.occurred_at.date() == old_at.date()


def _merge(op: Op, target: str, why: str) -> Op:
    return Op(kind="merge", id=op.id, target=target, memory=op.memory, reason=f"near-duplicate of {target} ({why})")


def _same_speaker(new: NewMemory, old: MemoryRecord) -> bool:
    """The two memories may have been said by the same one (``metadata.role`` and
    ``metadata.speaker`` equal where both have them; a memory stored through the API has
    neither): in a stored transcript, one speaker's "I stopped running" ends nothing of
    the other's."""
    for key in ("role", "speaker"):
        a, b = new.metadata.get(key), old.metadata.get(key)
        if a is not None and b is not None and a != b:
            return False
    return True


def _ends(ended: tuple[Ended, ...], older: str, similarity: float, episode: bool = False) -> bool:
    """An older memory's text ``older`` (cosine ``similarity`` to the new one) is about a
    thing the new memory says ended (:func:`gateway.memorization.changes.is_about`) and
    reaches :data:`CHANGE_MIN_SIMILARITY`; an older memory about someone else of the
    user's ("My husband loves coffee") is retired only by an ending that names that
    person ("my sister moved out"); an ``episode`` (an event memory: "Taking the boat down
    the Madison this weekend") only by a plan changed or the thing called off (``plan``,
    ``cancel``: "cancelled the Madison trip"): a possession sold or a habit stopped
    leaves what happened with it true."""
    if similarity < CHANGE_MIN_SIMILARITY:
        return False
    other = about_someone(older)
    return any(is_about(e, older) and (bool(e.who) or not other) and (not episode or e.plan or e.cancel) for e in ended)


def _splittable(record: MemoryRecord) -> bool:
    """``record`` may be kept in part: a memory of the user's words (not a confirmed
    question with its answer, whose clauses are two speakers')."""
    return record.metadata.get("kind") == "turn" and not record.metadata.get("confirmed")


def _fills(clause: str, slots: tuple[str, ...]) -> bool:
    """``clause`` states a value of one of ``slots`` (its first slot, school stages
    included, or any other: :func:`gateway.memorization.slots.slots_of`)."""
    filled = {slot_of(clause), *slots_of(clause)}
    return any(same_slot(have, new) for have in filled for new in slots)


def _unchanged_of_slot(new: str, slots: tuple[str, ...], text: str, splittable: bool) -> str | None:
    """The clauses of an older memory's ``text`` (or of one statement of it) a statement
    ``new`` filling ``slots`` leaves true (:func:`gateway.memorization.split.remainder`): a
    clause is changed when it fills one of the slots (:func:`_fills`) and holds no other fact
    ``new`` keeps (:func:`gateway.memorization.slots.keeps_other_fact`, about the partner:
    :func:`gateway.memorization.slots.keeps_partner`); None unless the memory is
    ``splittable`` (:func:`_splittable`), some clause is changed and every other one fills
    none of the slots (the rest is about something else)."""
    if not splittable:
        return None

    def changed(clause: str) -> bool:
        if not _fills(clause, slots):
            return False
        if "relationship" in slots and about_someone(clause) and keeps_partner(new, clause):
            return False
        return not keeps_other_fact(new, slots, clause)

    return remainder(text, changed, keep=lambda clause: not _fills(clause, slots))


def _unchanged_of_ended(ended: tuple[Ended, ...], similarity: float, text: str, splittable: bool, episode: bool) -> str | None:
    """The clauses of an older memory's ``text`` (or of one statement of it) not about a
    thing the new statement says ended (:func:`_ends` read clause by clause); None unless
    the memory is ``splittable``, some clause is about it and another is not."""
    if not splittable:
        return None
    return remainder(text, lambda clause: _ends(ended, clause, similarity, episode=episode))


#: What a new statement does to an older one (:func:`_verdict`): says its value again, or
#: retires it (keeping its unchanged clauses when some are).
Verdict = Literal["again", "replace"]


def _verdict(memory: NewMemory, slot: str | None, slots: tuple[str, ...], ended: tuple[Ended, ...], record: MemoryRecord,
             text: str, record_slot: str | None, similarity: float) -> tuple[Verdict | None, str | None]:
    """What the new ``memory`` (filling ``slot`` and ``slots``, ending ``ended``) does to
    ``text``, the older ``record``'s text or one of its statements (``record_slot``: its slot
    as stored, None to read it from ``text``): ``("again", None)`` when it says the same
    value again (:func:`gateway.memorization.slots.says_again`), ``("replace", rest)`` when
    it changes the slot or ends the thing ``text`` tells (``rest``: the clauses it leaves
    true, or None), else ``(None, None)``. The rules of the module docstring."""
    splittable = _splittable(record)
    if slot and record.scope is Scope.PROFILE:
        whole = any(same_slot(record_slot or slot_of(text), new) for new in slots) and \
            not (slot == "relationship" and about_someone(text) and keeps_partner(memory.text, text))
        filled = whole or any(same_slot(have, new) for have in slots_of(text) for new in slots)
        if filled and _same_speaker(memory, record) and says_again(memory.text, slots, text):
            return "again", None  # the same value said again: it follows, retires nothing
        if whole and not keeps_other_fact(memory.text, slots, text):
            return "replace", _unchanged_of_slot(memory.text, slots, text, splittable)
        if filled:
            rest = _unchanged_of_slot(memory.text, slots, text, splittable)  # the changed clause goes, the other fact stays
            if rest is not None:
                return "replace", rest
    episode = record.scope is not Scope.PROFILE
    if ended and _same_speaker(memory, record) and _ends(ended, text, similarity, episode=episode):
        return "replace", _unchanged_of_ended(ended, similarity, text, splittable, episode)
    return None, None


#: A coordinating conjunction a statement may start with ("and the grandkids are visiting"):
#: dropped when the statement before it went and it starts what is kept.
_LEADING_AND = re.compile(r"(?:and|but|also)\s+", re.IGNORECASE)


def _statement_verdict(memory: NewMemory, slot: str | None, slots: tuple[str, ...], ended: tuple[Ended, ...],
                       record: MemoryRecord, spans: list[tuple[int, int]],
                       similarity: float) -> tuple[Verdict | None, str | None, list[tuple[int, int]]]:
    """:func:`_verdict` for a memory of several statements (``spans``:
    :func:`gateway.memory.records.statement_spans`), each read as the memory it was formed
    from: ``replace`` when one statement is changed, with the rest the statements left
    whole and the unchanged clauses of the changed ones (in order, each run of adjacent
    ones with the characters between them, a run joined to the next by the separator that
    followed it; None when nothing is left or what is left forms no memory alone) and the
    statements' spans in that rest (:func:`gateway.memorization.split.rejoin`; each statement's
    span holds its closing mark); else ``again`` when one says the same value again."""
    verdicts = [_verdict(memory, slot, slots, ended, record, record.text[start:end], None, similarity)
                for start, end in spans]
    if not any(verdict == "replace" for verdict, _rest in verdicts):
        return ("again" if any(verdict == "again" for verdict, _rest in verdicts) else None), None, []
    kept: list[tuple[int, str]] = []  # (statement index, its text in the rest)
    for n, ((start, end), (verdict, rest)) in enumerate(zip(spans, verdicts, strict=True)):
        if verdict != "replace":
            kept.append((n, record.text[start:end]))
        elif rest:
            kept.append((n, rest))
    if not kept:
        return "replace", None, []
    first, piece = kept[0]
    if first > 0 and _LEADING_AND.match(piece):  # the statement before it went: "and the grandkids..."
        kept[0] = (first, _LEADING_AND.sub("", piece, count=1))
    out, out_spans = rejoin(record.text, spans, kept)
    out = out.strip()
    if not out or not analyse(out).memories:
        return "replace", None, []
    return "replace", out, out_spans if len(out_spans) > 1 and out_spans[-1][1] == len(out) else []


def _split(new_id: str, record: MemoryRecord, rest: str, reason: str, statements: list[tuple[int, int]] | None = None) -> Op:
    """The op that retires ``record`` (if the plan's update has not) and stores its
    unchanged clauses ``rest`` (:func:`gateway.memorization.split.split_memory`, with the
    spans of the ``statements`` it keeps) as a memory of its own, with an id fixed by the
    superseding op's id and ``record`` (a replayed job writes the same record:
    :func:`gateway.memorization.plan.memory_id_for`)."""
    memory = split_memory(record, rest, statements or [])
    at_ms = int(record.created_at.timestamp() * 1000)
    return Op(kind="split", id=memory_id_for(f"{new_id}\x1fsplit", record.id, at_ms), target=record.id,
              memory=memory, reason=reason)


#: What an English statement is about, by the words of an attribute the user has one of at a
#: time (:func:`link_topics`): the vehicle (car and truck makes), a boat by its kind, the
#: work (a job title, a hospital unit, a transfer), the degree's supervisor (an attribute of
#: its own, seed 002 §3.2, as in :mod:`gateway.memorization.slots`). Over the read splits of
#: ``python -m bench assistant`` (dev, heldout..heldout5, heldout11, updates), the 5 links
#: this makes under :data:`FOLLOW_MIN_SIMILARITY` are all changes of that thing
#: ("Transferred up to the ICU" after "I'm an ER nurse"; "closed on a 38ft dragger" after
#: "saving to get my own boat"); a shared content word alone is no such tie (a name,
#: "kids", "trip": 25 of its 32 links there were no change), so there is no such rule.
LINK_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("vehicle", re.compile(r"\b(?:" + VEHICLES_EN + "|" + CAR_MAKES_EN + "|" + TRUCK_MAKES_EN + r")\b", re.IGNORECASE)),
    ("boat", re.compile(r"\b" + BOATS_EN + r"\b", re.IGNORECASE)),
    ("work", re.compile(r"\b(?:" + OCCUPATIONS_EN + r"|transfer(?:red)?|ward|icu|nicu|picu|(?-i:ER|ED|A&E))\b", re.IGNORECASE)),
    ("advisor", re.compile(r"\b(?:" + ADVISOR_EN + r"|supervisor)\b", re.IGNORECASE)),
)


def link_topics(text: str) -> frozenset[str]:
    """The :data:`LINK_TOPICS` ``text`` names. Linear in ``len(text)``."""
    return frozenset(name for name, pattern in LINK_TOPICS if pattern.search(text))


def follows_of(memory: NewMemory, own_id: str, hits: list[Any]) -> str | None:
    """The id of the older memory ``memory`` follows (module docstring): of ``hits``
    (``ScoredMemory``, any order), the live profile record (not ``own_id``, not a gist)
    said by the same speaker (:func:`_same_speaker`) with the highest cosine that reaches
    :data:`FOLLOW_MIN_SIMILARITY`, or, when both texts are mostly Chinese
    (:func:`mostly_chinese`), that shares a content term with it
    (:func:`gateway.memorization.changes.terms`); when no hit is one, of two English texts
    the nearest that names a thing of :data:`LINK_TOPICS` with it (:func:`_tied`); None
    when there is none. Linear in the hits' text."""
    chinese = mostly_chinese(memory.text)
    mine = terms(memory.text) if chinese else frozenset()
    best: tuple[float, str] | None = None
    nearby: list[tuple[float, MemoryRecord]] = []  # English ones under the cosine: tied by a topic
    for hit in hits:
        record: MemoryRecord = hit.record
        if record.id == own_id or record.retired or record.scope is not Scope.PROFILE or \
                record.metadata.get("kind") == "gist" or not _same_speaker(memory, record):
            continue
        if chinese and mostly_chinese(record.text):
            if not mine & terms(record.text):
                continue
        elif hit.similarity < FOLLOW_MIN_SIMILARITY:
            if not chinese and not mostly_chinese(record.text):
                nearby.append((hit.similarity, record))
            continue
        if best is None or hit.similarity > best[0]:
            best = (hit.similarity, record.id)
    if best is None and nearby:
        best = _tied(memory.text, nearby)
    return best[1] if best else None


def _tied(text: str, nearby: list[tuple[float, MemoryRecord]]) -> tuple[float, str] | None:
    """Of English ``nearby`` candidates ``(cosine, record)`` under :data:`FOLLOW_MIN_SIMILARITY`,
    the nearest that names one of the :data:`LINK_TOPICS` of ``text``, both about the user
    or both about someone of theirs (:func:`gateway.memorization.clauses.about_someone`: "My
    boyfriend's a paramedic" is not the user's work)."""
    topics = link_topics(text)
    if not topics:
        return None
    someone = about_someone(text)
    best: tuple[float, str] | None = None
    for similarity, record in nearby:
        if topics & link_topics(record.text) and about_someone(record.text) == someone and \
                (best is None or similarity > best[0]):
            best = (similarity, record.id)
    return best


#: One search a plan's add needs: ``(index of the op in plan.ops, query text, search
#: keyword arguments)`` (:func:`searches_of`); ``hybrid`` among the arguments: whether the
#: keyword ranking takes part (for a slot-filling memory or one that says something ended).
Search = tuple[int, str, dict[str, Any]]


def searches_of(plan: Plan, events: bool = True) -> list[Search]:
    """The store searches :func:`decide` may read for ``plan``: one per ``add``, its text
    as the query. A profile memory: top :data:`SLOT_CANDIDATES` of its scope when it fills
    a slot, else top :data:`CANDIDATES` of its scope and type by the vector ranking alone;
    a profile memory that says something ended (:func:`gateway.memorization.changes.ended_of`)
    searches as a slot-filling one does, over both scopes (the ended thing may be an
    episode). An event: with ``events``, top 2 x :data:`CANDIDATES` of the event and profile
    scopes (its duplicates and the profile memory it follows); without, top
    :data:`CANDIDATES` of the profile by the vector ranking alone (the profile memory it
    follows only: :func:`follows_of`), when the plan adds at most
    :data:`MAX_LINKED_EVENTS` events. (An add whose text an earlier add of the plan
    already says needs none; it is searched anyway, so the searches can all run at once.)"""
    out: list[Search] = []
    link_events = events or sum(op.kind == "add" and op.memory is not None and op.memory.scope is not Scope.PROFILE
                                for op in plan.ops) <= MAX_LINKED_EVENTS
    for index, op in enumerate(plan.ops):
        memory = op.memory
        if op.kind != "add" or memory is None or not op.id:
            continue
        if memory.scope is not Scope.PROFILE:
            if not link_events:
                continue
            scopes = [memory.scope.value, Scope.PROFILE.value] if events else [Scope.PROFILE.value]
            out.append((index, memory.text, {"top_k": CANDIDATES * len(scopes), "scopes": scopes, "types": None,
                                             "hybrid": False}))
            continue
        slot = memory.metadata.get("slot") if memory.scope is Scope.PROFILE else None
        ended = memory.scope is Scope.PROFILE and bool(_ended(memory.text))
        wide = bool(slot) or ended
        scopes = [Scope.PROFILE.value, Scope.EVENT.value] if ended else [memory.scope.value]
        out.append((index, memory.text, {"top_k": SLOT_CANDIDATES if wide else CANDIDATES, "scopes": scopes,
                                         "types": None if wide else [memory.type.value], "hybrid": wide}))
    return out


async def merge_near_duplicates(store: Any, tenant: Tenant, plan: Plan, events: bool = True,
                                known: Mapping[str, Any] | None = None) -> Plan:
    """``plan`` with each ``add`` whose memory duplicates an existing live memory of
    ``tenant`` (same scope and type) or an earlier add of the plan turned into a
    ``merge`` onto it (module docstring). One ``store.search`` per add (:func:`searches_of`);
    ``events`` False: per profile add only (an event is then compared with the plan's
    earlier adds only; ``verbatim_merge_duplicates: profile``, the default: a search
    costs about as much as storing the memory, and the duplicates that matter are facts
    repeated to several friends). The memorization worker runs the searches of a whole
    read batch at once instead (:func:`searches_of`, :func:`decide`). ``known``: vectors of
    texts embedded already (an add's text as a stored text), used instead of embedding again.

    Raises:
        gateway.runtime.errors.MemoryUnavailable: the store is down (the worker retries the job).
    """
    vectors = known or {}
    hits = {index: await search(store, tenant, text, options, vectors.get(text))
            for index, text, options in searches_of(plan, events)}
    return decide(plan, hits)


async def search(store: Any, tenant: Tenant, text: str, options: dict[str, Any],
                 vector: Any = None) -> list[Any]:
    """One search of :func:`searches_of`: ``store.search_by_vector`` with ``vector``, the
    text's vector *as a stored text* (embedded here when None): a new statement is compared
    with stored statements, and its memory's first view is that same text, so an asymmetric
    model (E5, whose search texts are marked ``query: ``) embeds it once for both (the
    embedding cache or the worker's batch has it); hybrid (``query_text``) only when
    ``options["hybrid"]``."""
    fields = {k: v for k, v in options.items() if k != "hybrid"}
    if vector is None:
        vector = await embed_one(store.embedder, text)
    return list(await store.search_by_vector(tenant, vector, query_text=text if options["hybrid"] else None, **fields))


def decide(plan: Plan, hits: dict[int, list[Any]]) -> Plan:
    """``plan`` with near-duplicate adds turned into merges and slot-filling ones into
    supersedes, an older memory that keeps a fact besides retired with an op ``split``
    after the update, a repeat of a slot's value linked to the statement it repeats (module
    docstring), given the store's ``hits`` (``ScoredMemory`` list) for
    the adds :func:`searches_of` named, by op index; an add without hits is compared with
    the plan's earlier adds only. Pure: no I/O."""
    ops: list[Op] = []
    # earlier adds of the plan by (scope, type, normalised text): each text is normalised
    # once, so the plan is checked in time linear in its text (not adds x earlier adds)
    earlier: dict[tuple[Scope, MemoryType, str], list[Op]] = {}
    merged = superseded = linked = split = 0
    for index, op in enumerate(plan.ops):
        memory = op.memory
        if op.kind != "add" or memory is None or not op.id:
            ops.append(op)
            continue
        key = (memory.scope, memory.type, normalised(memory.text))
        target = next((e.id for e in earlier.get(key, ()) if e.memory is not None
                       and _same_episode(memory, e.memory.type, e.memory.occurred_at)), None)
        why = "same text in this job"
        replaced: list[tuple[MemoryRecord, str | None]] = []  # each with its unchanged clauses (None: all changed)
        rest_spans: dict[str, list[tuple[int, int]]] = {}  # by older memory id: the statements its rest keeps
        ended: tuple[Ended, ...] = ()
        again: tuple[float, str] | None = None  # the nearest older statement whose value this one says again
        if target is None and index in hits:
            said = told(memory.text)  # an ask supersedes nothing
            slot = memory.metadata.get("slot") if memory.scope is Scope.PROFILE and said else None
            if slot and said != memory.text and not slot_of(said):
                slot = None  # the slot was in the ask: "I'm off to the shops, can you give me a vegan roast"
            slots = (slot, *slots_of(said)) if slot else ()  # a transfer fills work and residence
            ended = _ended(said) if memory.scope is Scope.PROFILE and said else ()
            for hit in hits[index]:
                record: MemoryRecord = hit.record
                if record.id == op.id or record.retired or record.metadata.get("kind") == "gist":
                    continue
                if target is None and record.type is memory.type and record.scope is memory.scope and \
                        _same_episode(memory, record.type, record.occurred_at) and \
                        is_near_duplicate(memory.text, record.text, hit.similarity):
                    target, why = record.id, f"similarity {hit.similarity:.3f}"
                spans = statement_spans(record.text, record.metadata) if _splittable(record) else []
                if spans:
                    verdict, rest, kept_spans = _statement_verdict(memory, slot, slots, ended, record, spans, hit.similarity)
                    if kept_spans:
                        rest_spans[record.id] = kept_spans
                else:
                    verdict, rest = _verdict(memory, slot, slots, ended, record, record.text, record.metadata.get("slot"),
                                             hit.similarity)
                if verdict == "again":
                    if again is None or hit.similarity > again[0]:
                        again = (hit.similarity, record.id)  # the same value said again: it follows, retires nothing
                elif verdict == "replace":
                    replaced.append((record, rest))
        if target is None and again is not None:  # linked to the statement it repeats, whatever else it retires
            memory = memory.model_copy(update={"metadata": {**memory.metadata, FOLLOWS: again[1]}})
        if target is None and replaced:  # same slot, or the thing a change ended: the newer supersedes the older
            replaced.sort(key=lambda pair: pair[0].updated_at, reverse=True)
            about = memory.metadata.get("slot") or "thing ended"
            why = f"same {about} as {replaced[0][0].id}"
            ops.append(Op(kind="update", id=op.id, target=replaced[0][0].id, memory=memory, reason=f"supersedes: {why}"))
            for n, (record, rest) in enumerate(replaced):
                if rest is not None:  # retired (by the update for the newest) and its unchanged clauses stored anew
                    ops.append(_split(op.id, record, rest, f"superseded by {op.id} ({why}); unchanged clauses kept",
                                      rest_spans.get(record.id)))
                    split += 1
                elif n:
                    ops.append(Op(kind="delete", target=record.id, reason=f"superseded by {op.id} ({why})"))
            earlier.setdefault(key, []).append(op)
            superseded += 1
            continue
        if target is None:
            follows = follows_of(memory, op.id, hits[index]) if index in hits and again is None else None
            if follows is not None:
                memory = memory.model_copy(update={"metadata": {**memory.metadata, FOLLOWS: follows}})
            if follows is not None or again is not None:
                op = op.model_copy(update={"memory": memory})
                linked += 1
            ops.append(op)
            earlier.setdefault(key, []).append(op)
        else:
            ops.append(_merge(op, target, why))
            merged += 1
    if not merged and not superseded and not linked:
        return plan
    note = f", {merged} merged into near-duplicates" if merged else ""
    note += f", {superseded} superseding an earlier statement of the same slot" if superseded else ""
    note += f", {split} older memory(ies) kept in part (their unchanged clauses)" if split else ""
    return plan.model_copy(update={"ops": tuple(ops), "decision": f"{plan.decision}{note}"})
