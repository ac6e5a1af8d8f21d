"""Self-disclosure: which parts of a user's turn are worth remembering, with no model.

Everyday assistant chats are mostly requests ("What should we eat tonight?"), with facts
about the user in passing ("I've been vegetarian since last year, what can I cook with
lentils?"). Storing whole turns stores the requests and serves them back as "what you
remember". This module splits a turn into clauses and keeps the clauses in which the
user tells something about themselves, their people, pets, health, diet, home, work,
plans, possessions, dates or lasting preferences (the kinds of user information seed
000 P3 / seed 002 §5 call the profile), in the user's own words.

Steps (:func:`analyse`), each linear in the text (compiled regular expressions with no
nested quantifiers, one pass over the clauses):

1. **Clauses** (:func:`gateway.memorization.clauses.clauses`): the turn cut into
   sentences and clauses, each remembering whether its sentence asked.
2. **What each clause is** (:func:`gateway.memorization.kinds.clause_kind`,
   :func:`gateway.memorization.kinds.clause_kinds`): ``request``, ``question``,
   ``small_talk``, ``meta``, ``disclosure`` or ``other`` (the words of asks:
   :mod:`gateway.memorization.asks`).
3. **The memory** (:func:`analyse`): the disclosure clauses, and with them the turn's
   ``other`` clauses that are statements (a finite verb: "It felt welcoming; I want to
   study counseling next"), joined in their order with the separator they had. A clause that starts with he / she / they / 他 / 她 / 它 keeps
   the clause before it (its antecedent: "a gift for my wife, she loves gardening").
   A turn's kept clauses are cut into statements (:func:`_groups`): a clause that fills a
   slot starts its own, which the clauses bound to it join (a continuation, a pronoun, a
   clause of result or reason, a feeling about it). The statements are one memory
   (:func:`_one_memory`: a prompt shows the telling whole) that keeps each statement's span
   (:attr:`Formed.statements`), so a later change retires only the statement it changes.
   A vent keeps nothing of the day: when the turn closes its own telling
   (:func:`gateway.memorization.salience.is_closing`: "不想说了", "谢谢你听我念叨", "rant
   over", "just needed to vent") and every memory it would form is an episode, it forms
   none; a turn that talks of the news (:func:`gateway.memorization.kinds.is_news`: 看新闻说,
   "the news about") or closes a telling keeps no statement about something else, and a
   pronoun after the news clause refers into the news, not to the user.
4. **Kind of memory** (seed 002 §3.2: the profile, seen by every friend of the user, is
   what holds about the user, their basic attributes and likes; events are episodes):
   a memory with a disclosure is *durable* (profile) unless it tells an episode
   (:func:`gateway.memorization.scope.is_episode`: a one-off time, a one-off activity or a
   passing feeling, and no state, habit or change, nor a frequency or span that holds
   (:data:`gateway.memorization.scope.ONGOING`: "twice a day", "from next month", 在大阪读修士,
   一紧张就胃疼) or something taken on (:data:`gateway.memorization.scope.TAKEN_ON`: "traded
   the old car in for a minivan", "transferred to the ICU", "turned 8", 提车, 接手)): "I'm
   colorblind", "my son just got braces" and "I moved to Berlin last month" (keeping its
   date) are profile, "I went to a jazz concert yesterday" is an event. A memory that tells only how the user is at the
   moment, a task just finished or a remark about the listener
   (:func:`gateway.memorization.salience.is_passing`: 我这两天心里有点忐忑, 初稿写完了, "just
   clocked off, totally drained", "you're so patient with me": every piece of it is such) is
   an event too, unless it has a slot, names one of the user's people by name, tells a
   plan or is one of the lasting kinds below (a condition, a death, an ending). A statement about something else (no
   disclosure in the turn: :attr:`Analysis.statement`) is durable only when it names a lasting topic
   (:data:`DURABLE_EN` / :data:`DURABLE_ZH`, a frequency: :data:`gateway.memorization.scope.HABIT`,
   or something taken on) and is not anchored to a day unless it says the lasting thing
   changed, was taken on or holds over a span (:data:`gateway.memorization.scope.ONGOING`).
   A lasting condition (:data:`gateway.memorization.scope.CONDITION`: an allergy, an intolerance, a diagnosis) is
   durable even when it was found out in an episode ("ate shrimp last weekend and
   found out I'm allergic").
   A death among the user's people or pets (:data:`gateway.memorization.scope.DEATH`: "we lost Biscuit on
   Saturday", "my grandpa passed away", 外婆去世了) is durable whatever its date: who
   their people and pets are has changed for good. The words these rules read are
   :mod:`gateway.memorization.scope`'s.
5. **Slot** (:func:`gateway.memorization.slots.slot_of`): a statement about where the
   user lives, their work, studies, diet, relationship status, vehicle or commute, work
   shift, a child's school or a pregnancy has a slot (and is durable, whatever its date);
   a later statement in the same slot supersedes the earlier
   (:mod:`gateway.memorization.slots`, :mod:`gateway.memorization.neardup`), and so does a
   statement that something ended (:func:`gateway.memorization.changes.ended_of`), also
   durable whatever its date.

What this cannot do (README "What verbatim cannot catch"): facts stated only in the
third person without "my" ("Maya can't have peanuts" before Maya was introduced),
pronouns across turns, sarcasm and hypotheticals phrased as statements, changes that
name neither the fact's slot nor its words ("that's over now"), and facts that need the assistant's
words to be understood unless the turn answers the assistant's question (kept with it).

The names of the modules the steps live in stay importable from here.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from gateway.memorization.changes import MY_SOMEONE_ZH as _MY_SOMEONE_ZH
from gateway.memorization.changes import PRONOUN_EN as _PRONOUN_EN
from gateway.memorization.changes import PRONOUN_ZH as _PRONOUN_ZH
from gateway.memorization.changes import ended_of
from gateway.memorization.clauses import (
    FIRST_PERSON_ZH,
    LATIN_WORD,
    MAX_CHARS,
    NAMED_PERSON,
    VERB_EN,
    Clause,
    about_someone,
    clauses,
    core_en,
    core_zh,
)
from gateway.memorization.kinds import ClauseKind, clause_kind, clause_kinds, is_news, is_supposed
from gateway.memorization.lexicon import ADMIN_PLACE_ZH, FEELINGS_EN, FEELINGS_TOLD_EN, MONTH_NAMES, OCCUPATIONS_EN, WEEKDAY_EN
from gateway.memorization.lexicon import PEOPLE_ZH as _PEOPLE_ZH
from gateway.memorization.salience import EVENT_TIME, PASSING_STATE, PREFERENCE_CUES, is_closing, is_passing
from gateway.memorization.scope import (
    CHANGE,
    CHRONIC,
    CONDITION,
    DEATH,
    DURABLE_EN,
    DURABLE_ZH,
    HABIT,
    HEALTH,
    MOMENT,
    ONE_OFF_ACTIVITY,
    ONE_OFF_TIME,
    ONGOING,
    PLAN,
    STATE,
    TAKEN_ON,
    is_episode,
    names_chronic_condition,
)
from gateway.memorization.slots import keeps_other_fact, keeps_partner, same_slot, slot_of, slots_of
from gateway.memory.records import MemoryType
from gateway.runtime.text import HAN_RE as _CJK

__all__ = [
    "CHANGE", "CHRONIC", "DURABLE_EN", "DURABLE_ZH", "HEALTH", "MAX_CHARS", "MOMENT", "ONE_OFF_ACTIVITY", "ONE_OFF_TIME", "STATE",
    "STATEMENT_CJK", "STATEMENT_WORDS", "Analysis", "Clause", "ClauseKind", "Formed", "about_someone", "analyse", "clause_kind",
    "clauses", "durable_type", "elided_reply", "is_episode", "keeps_other_fact", "keeps_partner", "same_slot", "slot_of", "slots_of",
    "vents",
]

#: An ``other`` clause of at least this many Latin words (or :data:`STATEMENT_CJK` CJK
#: characters) is a statement worth an episode ("Rex loves the beach"); a shorter one
#: ("twice a week") only makes sense with the question it answers.
STATEMENT_WORDS = 4
STATEMENT_CJK = 8


@dataclass(frozen=True)
class Formed:
    """One memory a turn forms: its text (the user's words), whether it is a lasting
    fact (profile scope), its type (``preference`` / ``semantic`` when lasting, else
    ``episodic``), its supersede slot (:func:`slot_of`) or None, and ``attribute``:
    ``condition`` (:data:`CHRONIC`) or ``health`` (:data:`HEALTH`) for a lasting fact
    about the health of the user or their people with no slot, else None; ``statements``:
    when the memory joins more than one statement of the turn (:func:`_groups`), the
    ``(start, end)`` character span of each in ``text``, in order, the first starting at 0
    and the last ending at ``len(text)`` (a later change retires only the statement it
    changes: :func:`gateway.memorization.neardup.decide`), else empty."""

    text: str
    durable: bool
    type: MemoryType
    slot: str | None
    attribute: str | None = None
    statements: tuple[tuple[int, int], ...] = ()

    @property
    def statement_texts(self) -> tuple[str, ...]:
        """The texts of :attr:`statements`, or the whole text when it is one statement."""
        return tuple(self.text[start:end] for start, end in self.statements) or (self.text,)


@dataclass(frozen=True)
class Analysis:
    """What a user turn yields.

    Attributes:
        memories: the memory formed (one per turn; empty when none): the disclosure
            clauses, cut into statements, one per slot and one for the rest ("我在深圳做后端，
            腰椎间盘突出又犯了": the job and the back pain, so a new job retires only the first).
        kinds: the kind of each clause (:data:`ClauseKind`), in order.
        dropped: why nothing was kept, when ``memories`` is empty (the commonest clause
            kind of the turn: ``request``, ``question``, ``small_talk``, ``meta``, ``other``).
        statement: when ``memories`` is empty, the turn's ``other`` clauses that say enough
            (:data:`STATEMENT_WORDS` Latin words or :data:`STATEMENT_CJK` CJK characters)
            in a turn that asks nothing: a statement about something else ("Ivy was born
            on August 21st"), kept when nothing better (an answer to the other side's
            question) is found.
    """

    memories: tuple[Formed, ...]
    kinds: tuple[ClauseKind, ...]
    dropped: str = ""
    statement: Formed | None = None

    @property
    def text(self) -> str:
        """All formed memories' texts, joined (tests and the inspector)."""
        return " ".join(m.text for m in self.memories)


#: A Chinese clause that names who or what it is about at its start: the speaker, the other
#: side, a pronoun or someone of the user's.
_NAMES_ITS_SUBJECT_ZH = re.compile(r"^(?:我|咱|俺|你|您|他|她|它)|^" + _PEOPLE_ZH)


#: A clause led by "we both" / "both of us" / 我俩: the pair it means was named before it
#: ("first dance song ideas for me and my fiancé sami? we're both obsessed with 90s r&b"), so
#: the clause before is its antecedent, as for a pronoun (Halliday & Hasan 1976, 2.4).
_BOTH = re.compile(r"(?:we|we're|we've|we'd|we\s+are|we\s+have)\s+both\b|(?:both|the\s+two)\s+of\s+us\b|(?:我们|咱们|我|咱|俺)俩",
                   re.IGNORECASE)
#: A Chinese clause that is only someone of the user's telling the user off, with no object
#: but 我 (媳妇老说我, 我妈天天念叨我, 老婆总骂我): what they say it about is the clause before it
#: (血脂高的人能天天吃猪蹄不，媳妇老说我: the user eats them with high blood lipids), kept with it
#: like a pronoun's antecedent.
_NAGGED_ZH = re.compile(r"^(?:我|俺)?(?:的|家)?" + _PEOPLE_ZH + r"(?:也|就|还)?(?:老|总|总是|老是|一直|天天|经常|又)?"
                        r"(?:说|念叨|唠叨|骂|念|管|数落)(?:我|俺)[了呢啊呀吧哈]*$")


def elided_reply(text: str) -> bool:
    """``text`` is a Chinese reply whose first clause that says something (not small talk nor
    talk about the conversation) names no subject of its own ("基本不吃
    或者一个面包", "雅迪的 跑了两年了"): what it is about is what the other side just asked
    ("你平时早饭一般吃什么？"), left out because the question supplies it (a zero pronoun
    takes its referent from the discourse before it, Li & Thompson 1981, ch. 24), so the
    reply needs the question to be understood. Linear in ``len(text)``."""
    found = analyse(text)
    said = [c for c, k in zip(clauses(text), found.kinds, strict=True) if k not in ("small_talk", "meta")]
    if not said or not _CJK.search(said[0].text):
        return False
    core = core_zh(said[0].text) or said[0].text
    return not (_NAMES_ITS_SUBJECT_ZH.search(core) or _MY_SOMEONE_ZH.search(core) or NAMED_PERSON.search(core))


def analyse(text: str, promote: Collection[int] = ()) -> Analysis:
    """The memories a user turn forms (module docstring). Linear in ``len(text)``.
    ``promote``: indices of clauses (:func:`clauses`) to read as disclosures whatever the
    rules say (a learned classifier's picks: :mod:`gateway.memorization.clause_classifier`).
    Memoized (the result is immutable): the classifier's candidates and the memorization
    plan read the same turn."""
    return _analyse(text, frozenset(promote))


def vents(parts: list[Clause], kinds: tuple[ClauseKind, ...]) -> bool:
    """The turn (``parts``, their ``kinds``) talks of the news or closes its own telling: a
    small-talk clause that is news (:func:`gateway.memorization.kinds.is_news`) or a closing
    (:func:`gateway.memorization.salience.is_closing`). Its other clauses are comments on the
    news or the telling closed, kept as no statement (step 3)."""
    return any(k == "small_talk" and (is_news(c.text) or is_closing(c.text)) for c, k in zip(parts, kinds, strict=True))


@lru_cache(maxsize=1024)
def _analyse(text: str, promote: frozenset[int]) -> Analysis:
    parts = clauses(text)
    kinds = clause_kinds(parts, promote)
    kept: list[int] = []
    told = "disclosure" in kinds
    for i, (clause, clause_type) in enumerate(zip(parts, kinds, strict=True)):
        if clause_type == "other" and ((told and _is_statement(clause.text)) or _continues(parts, kept, i)
                                       or _afterthought(parts, kept, i)):
            kept.append(i)  # "It felt welcoming; I want to study counseling next."; "I moved, to Braga"
            continue
        if clause_type != "disclosure":
            continue
        core = core_zh(core_en(clause.text))
        if i > 0 and kinds[i - 1] == "small_talk" and is_news(parts[i - 1].text) and not _USER_AFTER.search(core):
            continue  # "the news about the strike ballot, they never learn": the pronoun's antecedent is the news
        if i > 0 and (_PRONOUN_EN.search(core) or _PRONOUN_ZH.search(core) or _NAGGED_ZH.match(core) or _BOTH.match(core)
                      or _APPOSITIVE_EN.match(core)) and (not kept or kept[-1] != i - 1):
            kept.append(i - 1)  # the antecedent: "a gift for my wife, she loves gardening"; 媳妇老说我: about what
        kept.append(i)
    kept = _with_asks_naming_referents(parts, kinds, kept)
    if kept:  # an "other" clause of a kept clause's sentence belongs to it ("Delivery 4: the courier brought...")
        sentences = {parts[i].sentence for i in kept}
        kept = sorted({*kept, *(i for i, k in enumerate(kinds) if k == "other" and parts[i].sentence in sentences)})
    kept = [i for i in kept if not _label(parts, i)]  # "Quick heads up before my question: ..." announces the fact
    if not kept:
        counted: list[str] = [k for k in kinds if k != "other"] or list(kinds) or ["small_talk"]
        dropped = max(("request", "question", "small_talk", "meta", "other"), key=counted.count)
        said: list[int] = []
        if "request" not in kinds and "question" not in kinds and not vents(parts, kinds):  # else it only sets up the request, or
            # comments on the news or is a telling its teller closes ("今天被 PM 怼了一下午，不想说了")
            for i, k in enumerate(kinds):
                if k == "other" and not is_supposed(parts[i].text) and (_says_enough(parts[i].text) or _continues(parts, said, i)):
                    said.append(i)
            sentences = {parts[i].sentence for i in said}
            said = [i for i, k in enumerate(kinds) if k == "other" and parts[i].sentence in sentences]
        return Analysis((), kinds, dropped, _formed(_joined(parts, said), told=False) if said else None)
    groups = _groups(parts, kinds, kept)
    merged: list[list[int]] = []
    for group in groups:  # a fragment joins the memory after it ("Work's been rough. I'm a barista...")
        if merged and not _says_enough(_joined(parts, merged[-1])):
            merged[-1] = merged[-1] + group
        else:
            merged.append(group)
    if len(merged) > 1 and not _says_enough(_joined(parts, merged[-1])):
        merged[-2:] = [merged[-2] + merged[-1]]
    formed = tuple(_formed(_joined(parts, group)) for group in merged)  # all told with a disclosure
    if all(not m.durable and is_passing(m.text) for m in formed) or _days_report(formed):
        return Analysis((), kinds, "small_talk")  # only how the user is right now: "just clocked off, knackered"
    if all(not m.durable for m in formed) and any(k == "small_talk" and is_closing(c.text) for c, k in zip(parts, kinds, strict=True)):
        return Analysis((), kinds, "small_talk")  # a day's episode its teller closes: "今天被 PM 怼了一下午，不想说了"
    return Analysis((_one_memory(parts, merged, formed),), kinds)


def _one_memory(parts: list[Clause], groups: list[list[int]], formed: tuple[Formed, ...]) -> Formed:
    """The turn's statements ``groups`` (each formed alone as ``formed``) as one memory: the
    text :func:`_joined` makes of all their clauses, with each statement's span
    (:attr:`Formed.statements`, each with its closing mark); lasting when one statement is (its type ``semantic``
    unless every lasting one is a ``preference``), with the first lasting statement's slot,
    else the first health attribute. One turn is one memory: the pieces of one telling
    ("Big news, I sold the house! I'm moving into a senior condo in Hermantown") stay
    together in what a later prompt shows."""
    if len(groups) == 1:
        return formed[0]
    text, spans = _joined_spans(parts, [i for group in groups for i in group])
    bounds: list[tuple[int, int]] = []
    at = 0
    for group in groups:
        bounds.append((spans[at][0], spans[at + len(group) - 1][1]))
        at += len(group)
    bounds = [(start, _closed(text, end)) for start, end in bounds]
    bounds[0] = (0, bounds[0][1])
    bounds[-1] = (bounds[-1][0], len(text))
    lasting = [m for m in formed if m.durable]
    if not lasting:
        return Formed(text, False, MemoryType.EPISODIC, None, None, tuple(bounds))
    kind = MemoryType.PREFERENCE if all(m.type is MemoryType.PREFERENCE for m in lasting) else MemoryType.SEMANTIC
    slot = next((m.slot for m in lasting if m.slot), None)
    attribute = None if slot else next((m.attribute for m in lasting if m.attribute), None)
    return Formed(text, True, kind, slot, attribute, tuple(bounds))


#: The day of the conversation: today, tonight, this morning, 今天, 今晚, 今早.
_TODAY = re.compile(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b|今天|今晚|今早|今儿", re.IGNORECASE)


#: A piece that says who the user is: a Chinese clause ending in the nominalizing 的 (县医院麻醉科的,
#: 跑滴滴的: "one who ...", Li & Thompson 1981, ch. 20 on the 的 nominal as a classifying
#: predicate) or "I'm a / an ..." ("I'm a nurse, today was brutal").
_WHO_I_AM = re.compile(r"[\u4e00-\u9fff]的(?=[，,。.!！\s]|$)|\bi'?m\s+an?\b|\bi\s+am\s+an?\b", re.IGNORECASE)


#: Something attained that day whose result holds after it (an achievement, Vendler 1957;
#: in Chinese a resultative verb compound, Li & Thompson 1981, 3.2: 拿到, 考过, 考上): a test
#: or exam passed, a licence, an offer or a place got, 上岸, 转正, 领证. Such a day is news of
#: what the user now is or has, not only a report of the day.
_ATTAINED = re.compile(
    r"\b(?:passed|aced)\s+(?:my|the|our|both|all|an?)\s+|"
    r"\bgot\s+(?:my|the|an?)\s+(?:\w+\s+){0,2}(?:licen[cs]e|permit|offer|promotion|visa|results?|scholarship|place|"
    r"keys|diploma|degree|certificate|belt)\b|\b(?:got\s+(?:in|into|accepted)|was\s+accepted|landed\s+(?:the|a|an)|won)\b|"
    r"拿到\S{0,4}?(?:证|照|offer|录取|通知书|钥匙|学位|奖)|考过|考上|考下来|过了(?:科目|考试|面试|答辩|试用期)|被录取|录取了|上岸|转正|中标|获奖|得奖|领证|拿了\S{0,6}?(?:证|奖)",
    re.IGNORECASE,
)


def _days_report(formed: tuple[Formed, ...]) -> bool:
    """Every memory of ``formed`` is an episode (none lasting) of the day of the conversation
    (:data:`_TODAY`) told with how the user feels about it right now (:data:`PASSING_STATE`:
    "今天版本上线 人麻了 加班到三点", "legs are toast today lol", 今天好累啊，细胞房待到凌晨两点才出来) and
    names no health complaint (:data:`HEALTH`), who the user is (:data:`_WHO_I_AM`: 县医院麻醉科的，
    今天连轴转了七台) nor something attained (:data:`_ATTAINED`: "passed my driving test today, so
    stoked", 今天拿到驾照了 好激动): a report of the user's day, a one-off state that holds nothing past it.
    Linear in the memories' text."""
    text = " ".join(m.text for m in formed)
    return (all(not m.durable for m in formed) and bool(_TODAY.search(text)) and bool(PASSING_STATE.search(text))
            and not HEALTH.search(text) and not _WHO_I_AM.search(text) and not _ATTAINED.search(text))


def _groups(parts: list[Clause], kinds: tuple[ClauseKind, ...], kept: list[int]) -> list[list[int]]:
    """``kept`` cut into memories: a clause that fills a slot starts its own memory,
    which its continuations (``other`` clauses) and further clauses of the same slot
    join ("I'm not vegetarian anymore, I eat fish now"), and so does a clause without a
    slot led by a pronoun or a Chinese demonstrative (its antecedent is in the group: "my boy
    switched schools, he's at Westdene now", 换了台海豹 原来那台卖了), or led by a conjunction
    of result or reason (:data:`_LINKED`) or ending in "instead" (:data:`_REPLACIVE_EN`), or a Chinese judgement (:func:`_judges_zh`), a
    feeling (:data:`_FEELING`) or a parenthesis right after a clause of the group; a clause after one that ends in a colon is what the colon
    announces ("Big news at work: they made me manager"), one memory with it. The next
    other disclosure starts another."""
    groups: list[list[int]] = []
    current: str | None = None  # the slot of the last group
    for i in kept:
        own = slot_of(parts[i].text) if kinds[i] == "disclosure" else None
        core = core_zh(core_en(parts[i].text))
        anaphor = own is None and bool(_PRONOUN_EN.match(core) or _PRONOUN_ZH.match(core) or _DEMONSTRATIVE_ZH.match(core))
        announced = bool(groups) and groups[-1][-1] == i - 1 and parts[i - 1].sep.strip()[:1] in (":", "：")
        if announced:
            groups[-1].append(i)
            current = own or current
            continue
        after = bool(groups) and groups[-1][-1] == i - 1 and parts[i - 1].sentence == parts[i].sentence
        if after and own is None and (_LINKED.match(parts[i].text.strip()) or _REPLACIVE_EN.search(parts[i].text)
                                      or _judges_zh(core) or _FEELING.search(core)):
            groups[-1].append(i)  # "promoted me to head nurse, so I run the ward now"; 搬到闵行了 离我爸妈家近多了
            continue
        if groups and groups[-1][-1] == i - 1 and kinds[i - 1] in ("request", "question") and \
                (_APPOSITIVE_EN.match(core) or _referent_in_ask(parts, i - 1, i)):
            groups[-1].append(i)  # "what should i ask aisha, my new manager"; "barber near lodi, we moved out here": one fact
            current = own or current
            continue
        if groups and groups[-1][-1] == i - 1 and kinds[i] == "disclosure" and _replaces(parts, groups[-1], i, own):
            groups[-1].append(i)  # "I left the startup. I'm doing clinical data work at Mount Sinai now": one change
            current = own or current
            continue
        if after and (own is None or about_someone(parts[groups[-1][0]].text)) and _zero_subject_zh(parts[i].text, core):
            groups[-1].append(i)  # 车是租的比亚迪秦，一个月租金好几千; 丈母娘过来帮忙坐月子，住一个多月就回去: the same subject
            continue
        if after and _open_parenthesis(parts, groups[-1]):
            groups[-1].append(i)  # "made head of platform (same company, we're 30 now)": an aside to the clause
            continue
        if groups and (own == current or anaphor or (own is None and (current is None or kinds[i] != "disclosure"))):
            groups[-1].append(i)  # same slot, a continuation, or more of the unslotted rest
            continue
        if groups and all(kinds[j] == "other" and parts[j].sentence == parts[i].sentence for j in groups[-1]):
            groups[-1].append(i)  # a lead-in of the clause's own sentence: "some good news, found a flat in Leeds"
            current = own
            continue
        groups.append([i])
        current = own
    return groups


#: A clause that is only a noun phrase of someone of the user's ("my new manager", "our vet"):
#: an appositive of the name the clause before ends with ("what should i ask aisha, my new
#: manager, ..."), which says who that is (Quirk et al. 1985, 17.65 on appositives); kept
#: alone it names nobody.
_APPOSITIVE_EN = re.compile(r"^(?:my|our)\s+(?:(?:new|old|current|former|first|actual)\s+)?(?:[a-z]+\s+)?[a-z]+[\s,.;:]*$",
                            re.IGNORECASE)
#: Where the speaker is, said by the place adverb alone after a verb of being or getting
#: somewhere or a particle of direction ("since we got here", "moved out here", "up here", 这边,
#: 这儿, 搬过来): a deictic whose place is named elsewhere in the turn (Fillmore 1971/1997,
#: *Lectures on Deixis*, on place deixis); not "here's" / "here you go" (presenting), nor "wedding
#: photographer here" (the speaker named), nor 我这边 / 你这边 ("on my end").
_HERE = re.compile(r"\b(?:(?:got|get|gets|getting|moved|move|moving|live|lives|living|lived|came|come|coming|been|stay|stayed|"
                   r"staying|arrived|relocated|settled|based)\s+(?:(?:out|up|down|over|around|back)\s+)?here"
                   r"|(?:out|up|down|over|around)\s+here)\b"
                   r"|(?<![我你他她])这边|这儿|(?<![我你他她])这里|搬过来|搬来这", re.IGNORECASE)
#: A place named in an ask: a word after "in / near / around / outside" (not an article, a
#: possessive, "here" / "town" or a word of an idiom: "in total", "in charge"), a capitalised one
#: after "to" (not an infinitive: "to back up"), or a Chinese name with its
#: administrative suffix (:data:`gateway.memorization.lexicon.ADMIN_PLACE_ZH`, as the slots read it).
_PLACE_NAMED = re.compile(r"\b(?:in|near|around|outside)\s+(?!(?:a|an|the|my|our|your|this|that|these|those|here|there|"
                          r"town|general|case|order|advance|person|time|work|home|school|me|us|it|them|bed|total|fact|"
                          r"love|charge|mind|public|private|bulk|detail|particular|between|line|shape|trouble|pain)\b)[a-z][\w'-]+"
                          r"|\bto\s+(?-i:[A-Z])[\w'-]+"
                          r"|" + ADMIN_PLACE_ZH, re.IGNORECASE)


#: A start with its object left out, the date after it ("i start aug 4", "I begin on Monday",
#: "we start next week"): what starts is the job or course the ask before named (ellipsis,
#: Quirk et al. 1985, 12.31; Halliday & Hasan 1976, ch. 4).
_START_ELIDED_EN = re.compile(r"^(?:and\s+|but\s+|so\s+)?(?:i|we)\s+(?:start|begin|started|began)\s+(?:on\s+)?"
                              r"(?:next|this|tomorrow|in\s+(?:two|three|a|\d)|" + WEEKDAY_EN + r"|(?:" +
                              "|".join(m[:3] for m in MONTH_NAMES) + r")[a-z]*\b|\d)", re.IGNORECASE)
#: What one starts that an ask names: an occupation (:data:`gateway.memorization.lexicon.OCCUPATIONS_EN`),
#: a job, a role, a programme or a course.
_STARTED_THING_EN = re.compile(r"\b(?:" + OCCUPATIONS_EN + r"|job|role|position|internship|apprenticeship|program(?:me)?|"
                               r"course|degree|residency|placement)s?\b", re.IGNORECASE)


def _referent_in_ask(parts: list[Clause], ask: int, here: int) -> bool:
    """Clause ``here`` leaves its referent to the adjacent ask ``ask``: it says where the
    speaker is by a place deictic (:data:`_HERE`) and names no place itself while the ask
    names one (:data:`_PLACE_NAMED`: "any dog groomers in boise? mine's gone full yeti since we
    got here"), or it tells a start with no object (:data:`_START_ELIDED_EN`) and the ask names
    the job or course (:data:`_STARTED_THING_EN`: "what does a junior data analyst at a freight
    company wear?? i start aug 4")."""
    core, asked = parts[here].text, parts[ask].text
    if _START_ELIDED_EN.match(core_en(core)) and _STARTED_THING_EN.search(asked):
        return True
    return bool(_HERE.search(core)) and not _PLACE_NAMED.search(core) and bool(_PLACE_NAMED.search(asked))


def _with_asks_naming_referents(parts: list[Clause], kinds: tuple[ClauseKind, ...], kept: list[int]) -> list[int]:
    """``kept`` with the nearest ask before or after a kept clause that leaves its referent to
    that ask (:func:`_referent_in_ask`: a place said only as "here", a start with no object), with
    only kept clauses between them: the ask names it, so the memory keeps it in the user's words
    ("need a decent barber near lodi, cheaper rent is why we moved out here"; "any dog groomers in
    boise? mine's gone full yeti since we got here"). Linear in the clauses (the nearest clause
    not kept on each side, one pass each way)."""
    have = set(kept)
    before: list[int] = []  # before[i]: the nearest clause left of i that is not kept, or -1
    last = -1
    for i in range(len(parts)):
        before.append(last)
        if i not in have:
            last = i
    after = [len(parts)] * len(parts)
    last = len(parts)
    for i in range(len(parts) - 1, -1, -1):
        after[i] = last
        if i not in have:
            last = i
    extra: set[int] = set()
    for i in kept:
        for j in (before[i], after[i]):
            if 0 <= j < len(parts) and kinds[j] in ("request", "question") and _referent_in_ask(parts, j, i):
                extra.add(j)
                break
    return sorted(have | extra) if extra else kept


#: A clause led by a conjunction of result or reason ("so I run the whole ward now",
#: "because my cholesterol was high", 所以 / 因为 / 因此 / 于是): an adverbial of the clause
#: before it (Quirk et al. 1985, 15.45-15.49 on reason and result clauses; Li & Thompson
#: 1981, ch. 23 on linked clauses), which says why or with what result that clause holds and
#: says nothing without it.
_LINKED = re.compile(r"^(?:so|because|cause|cuz|coz|since|which\s+means|that'?s\s+why)\b|^(?:所以|因为|因此|于是|因而)",
                     re.IGNORECASE)
#: A clause that ends in the replacive "instead" ("I'm doing history now instead"): what it
#: tells replaces what the clause before it named or implied (Quirk et al. 1985, 8.137 on
#: "instead" as a conjunct), so it is the other half of that statement.
_REPLACIVE_EN = re.compile(r"\binstead\W*$", re.IGNORECASE)
#: A Chinese clause led by a demonstrative and a classifier that points back at a thing
#: the clause before named (原来那台卖了, 这家店离我家很近): demonstrative reference
#: (Halliday & Hasan 1976, 2.4), an anaphor as a pronoun is. 个 counts only after 原来 /
#: 以前 / 之前 / 旧 / 老 ("这个周末" is a time, no thing named before).
_DEMONSTRATIVE_ZH = re.compile(r"^(?:原来|以前|之前|旧|老)的?[那这](?:台|辆|个|家|只|套|间|部|款|份|条|位)"
                               r"|^[那这](?:台|辆|家|只|套|间|部|款)(?![周月年天])")
#: A Chinese judgement of the thing the clause before named, with no subject of its own: its
#: distance from somewhere (离公司很近, 离我爸妈家近多了; not 离婚 / 离职 / 离开) or a comparative
#: degree complement (舒服多了, 方便得多: Li & Thompson 1981, ch. 19 on comparison): an
#: adjectival predicate whose zero subject is the topic of the clause before (ch. 24).
_JUDGEMENT_ZH = re.compile(r"^(?:离|距离)(?!婚|职|开|异|世|家出走)[\u4e00-\u9fffA-Za-z0-9]{1,10}?(?:很|挺|特别|非常|比较|更|太|也|都|还|超)*(?:近|远)"
                           r"|(?:多了|得多)[了啊呀啦哈!！~～。\u2600-\u27bf\U0001f300-\U0001faff]*$")


#: A clause that only says how the speaker feels about what the clause before told ("I'm
#: so relieved", 我这当妈的比他还紧张, 一个人带娃快崩了): the evaluation of a narrative
#: (Labov 1972, ch. 9: what the events mean to the teller), which tells nothing without
#: them: the feeling ends the clause, nothing follows it ("I'm nervous about my surgery
#: next week" names its own matter). At most twelve CJK characters in Chinese.
_FEELING = re.compile(
    r"^(?:(?:and|but)\s+)?(?:i'?m|i\s+am|i\s+feel|feeling|i\s+was|i'?ve\s+been)\s+(?:(?:so|really|very|super|pretty|kinda|"
    r"a\s+bit|totally|completely|honestly|just|beyond)\s+)*(?:" + FEELINGS_EN + "|" + FEELINGS_TOLD_EN + ")"
    r"[\s!.~\u2600-\u27bf\U0001f300-\U0001faff]*$"
    r"|^[\u4e00-\u9fff，,]{0,10}?(?:紧张|崩了|崩溃了?|累死了?|累坏了|心累|好累|太累了|烦死了?|头大|压力山大|压力(?:好|很|太|特别|超)?大|"
    r"开心|高兴|难过|郁闷|焦虑|激动)[了啊呀啦哈!！~～。\s\u2600-\u27bf\U0001f300-\U0001faff]*$", re.IGNORECASE)


#: The speaker anywhere in a Chinese clause, also inside it (搬家全靠我一个人, 当过老师的我).
_SPEAKER_ZH = re.compile(r"我|咱|俺")
#: A Chinese clause that brings in a new person or pet, counted (一只 / 两个 ...: 养了一只三岁的
#: 橘猫叫团子, 又添了个女儿): an indefinite noun phrase introduces a new referent (Li & Thompson
#: 1981, 4.1 on the numeral-classifier phrase as indefinite), another fact, not more about the
#: topic before ("接孩子根本来不及", "跟着外婆在县城住" say more about the subject's days).
_NEW_PARTICIPANT_ZH = re.compile(r"[一两俩三四五六七八九十几](?:只|个|条|位|头|匹|窝)[\u4e00-\u9fff\d]{0,8}?" + _PEOPLE_ZH)


def _replaces(parts: list[Clause], group: list[int], i: int, own: str | None) -> bool:
    """The first clause of ``group`` tells that something of the user's ended (:func:`ended_of`;
    its slot, if any, is ``own``, the slot of clause ``i``, or ``own`` is none), and clause ``i``,
    right after the group, is the user's own (not about someone else: :func:`about_someone`) and
    names no condition of health (:data:`HEALTH`): it says what replaced what ended ("网约车我不干了，
    太熬人，现在给一个公司老板当司机", "QUIT THE DAY JOB!! streaming + editing for a youtuber
    full time now"), the other half of one change, which a memory of the ending alone would
    not tell."""
    first, then = parts[group[0]].text, parts[i].text
    if not ended_of(first) or about_someone(first) or about_someone(then) or HEALTH.search(then):
        return False
    slot = slot_of(first)
    return slot is None or own is None or slot == own


def _zero_subject_zh(text: str, core: str) -> bool:
    """``text`` (``core``: without its lead words) is a Chinese clause with no subject of its
    own (:data:`_NAMES_ITS_SUBJECT_ZH`, no 我 / 咱 / 俺 anywhere in it: "当过三十年小学老师的我",
    "搬家全靠我一个人" are the user's; no new participant: :data:`_NEW_PARTICIPANT_ZH`) that names no
    condition of health (:data:`HEALTH`) nor a death: a zero pronoun, whose referent is the
    topic of the clause before it in the sentence (Li & Thompson 1981, ch. 24: 女儿4岁 跟着外婆在县城住,
    车是租的比亚迪秦，一个月租金好几千), so it tells more about that topic and joins its memory.
    A health complaint ("我在深圳做后端，腰椎间盘突出又犯了") stays a memory of its own."""
    return (bool(_CJK.search(core)) and not _NAMES_ITS_SUBJECT_ZH.search(core) and not _SPEAKER_ZH.search(core)
            and not _NEW_PARTICIPANT_ZH.search(core) and not about_someone(text) and not HEALTH.search(text)
            and not DEATH.search(text))


def _judges_zh(core: str) -> bool:
    """``core`` is a Chinese clause with no subject of its own that judges what the clause
    before named (:data:`_JUDGEMENT_ZH`) and names no condition of health (:data:`HEALTH`:
    "膝盖好多了" is the user's knee)."""
    return (bool(_CJK.search(core)) and not _NAMES_ITS_SUBJECT_ZH.search(core) and not _MY_SOMEONE_ZH.match(core)
            and not HEALTH.search(core) and bool(_JUDGEMENT_ZH.search(core)))


#: A label before a colon announcing what follows ("Quick heads up before my question:",
#: "Reminder for later:", "context:", 提醒一下：): a preface (Biber et al. 1999, 14.3.1) that
#: names the kind of message, no topic ("Allergies:", "Update on the car saga:" name one).
#: "Update:" and "change of plans:" are left in: they say that what follows replaces
#: something (:mod:`gateway.memorization.changes` reads "change of plans").
_LABEL = re.compile(r"^(?:(?:also|oh|and|so|btw|ok|okay|ps|one|a|quick|small|little|big|huge|good|bad|sad|fun|some|important|"
                    r"random|another)\s+)*(?:heads[\s-]?up|news|reminder|context|background|fyi|"
                    r"note|psa|confession|info|disclaimer)(?:\s+(?:before|for|first)\b[^:：]*)?$"
                    r"|^(?:跟你)?(?:说个事|说件事|提醒一下|提个醒|补充一下|背景|背景信息|好消息|坏消息|先说一下|先说明一下|交代一下|说明一下)$",
                    re.IGNORECASE)


def _label(parts: list[Clause], i: int) -> bool:
    """Clause ``i`` opens its sentence, ends in a colon and is a label (:data:`_LABEL`)."""
    clause = parts[i]
    opens = i == 0 or parts[i - 1].sentence != clause.sentence
    return opens and clause.sep.strip()[:1] in (":", "：") and bool(_LABEL.match(clause.text.strip()))


def _open_parenthesis(parts: list[Clause], group: list[int]) -> bool:
    """The clauses of ``group`` leave a parenthesis open ("head of platform (same company"):
    the clause after them is inside it, an aside to the clause it interrupts (Quirk et al.
    1985, 15.54 on parenthetical clauses). Linear in the group's text."""
    text = "".join(parts[j].text for j in group)
    return text.count("(") + text.count("（") > text.count(")") + text.count("）")


def durable_type(memory: str, told: bool = True) -> MemoryType | None:
    """The profile type step 4 (and the slot rule of step 5) of the module docstring gives
    ``memory`` (``preference`` or ``semantic``), or None when it is an event; ``told`` as in
    :func:`_durable`. Linear in ``len(memory)``."""
    formed = _formed(memory, told)
    return formed.type if formed.durable else None


def _formed(memory: str, told: bool = True) -> Formed:
    durable = _durable(memory, told)
    slot = slot_of(memory) if durable else None
    kind = MemoryType.EPISODIC
    if durable:
        kind = MemoryType.PREFERENCE if PREFERENCE_CUES.search(memory) and not slot else MemoryType.SEMANTIC
    attribute = None
    if durable and not slot and HEALTH.search(memory):
        attribute = "condition" if CHRONIC.search(memory) else "health"
    return Formed(memory, durable, kind, slot, attribute)


def _joined(parts: list[Clause], kept: list[int]) -> str:
    """The clauses ``kept`` (indices into ``parts``, ascending) as one text: adjacent
    clauses with the separator they had, others as sentences; the last keeps its full
    stop or exclamation mark."""
    return _joined_spans(parts, kept)[0]


#: The closing marks a statement's span takes in (a full stop or exclamation mark after it).
_CLOSING = frozenset(".!。！…")


def _closed(text: str, end: int) -> int:
    """``end`` moved past the closing marks (:data:`_CLOSING`) that follow it in ``text``."""
    while end < len(text) and text[end] in _CLOSING:
        end += 1
    return end


def _joined_spans(parts: list[Clause], kept: list[int]) -> tuple[str, list[tuple[int, int]]]:
    """:func:`_joined`'s text and the ``(start, end)`` span of each kept clause in it."""
    if not kept:
        return "", []
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    for n, i in enumerate(kept):
        pieces.append(parts[i].text)
        spans.append((at, at + len(parts[i].text)))
        at += len(parts[i].text)
        if n + 1 < len(kept):
            pieces.append(_joiner(parts[i], kept[n + 1] == i + 1))
            at += len(pieces[-1])
    end = parts[kept[-1]].sep.strip()
    if end and end[0] in ".!。！" and "?" not in end and "？" not in end:
        pieces.append(end)
    joined = "".join(pieces)
    text = joined.strip()
    lead = len(joined) - len(joined.lstrip())
    return text, [(min(max(s - lead, 0), len(text)), min(max(e - lead, 0), len(text))) for s, e in spans]


def _joiner(clause: Clause, adjacent: bool) -> str:
    sep = clause.sep
    if _CJK.search(clause.text):
        return sep.strip() or "，" if adjacent else "。"
    if adjacent:
        stripped = sep.strip()
        return f"{stripped} " if stripped else " "
    return ". "


def _afterthought(parts: list[Clause], kept: list[int], i: int) -> bool:
    """Clause ``i`` is a verbless fragment of its own sentence right after a kept clause
    ("so dan and I are done. 3 years.", "闺女考上了！南开！"): an afterthought that adds to
    the statement before it (a right-dislocated or appended fragment, Biber et al. 1999,
    3.7 / 14.3.3 on non-clausal units in conversation): at most three Latin words or four
    CJK characters, no verb, no question mark."""
    if not kept or kept[-1] != i - 1 or parts[i].asked or parts[i].sentence != parts[i - 1].sentence + 1:
        return False
    text = parts[i].text
    if _CJK.search(text):
        return len(_CJK.findall(text)) <= 4 and not CHANGE.search(text)
    return 0 < len(LATIN_WORD.findall(text)) <= 3 and not VERB_EN.search(text)


def _continues(parts: list[Clause], kept: list[int], i: int) -> bool:
    """Clause ``i`` continues a kept clause of its sentence ("I moved again, to Braga")."""
    return bool(kept) and parts[kept[-1]].sentence == parts[i].sentence


#: An English clause that tells without a verb of :data:`~gateway.memorization.clauses.VERB_EN`:
#: a measure that moved, its copula and verb dropped as in notes ("LDL down to 131", "rent up
#: to $2,100", "weight now 82 kg": a number after down / up / now).
_TELLS_EN = re.compile(r"\b(?:down|up|now)\s+(?:to\s+)?(?:about\s+|around\s+)?[$£€]?\d", re.IGNORECASE)


def _is_statement(text: str) -> bool:
    """A clause that says something (a finite verb, a measure that moved:
    :data:`_TELLS_EN`, "LDL down to 131"; or four CJK characters),
    not a bare phrase ("Recipe for lentils")."""
    if _CJK.search(text):
        return len(_CJK.findall(text)) >= 4
    return bool(VERB_EN.search(text) or _TELLS_EN.search(text))


def _says_enough(text: str) -> bool:
    if _CJK.search(text):
        return len(_CJK.findall(text)) >= STATEMENT_CJK
    return len(LATIN_WORD.findall(text)) >= STATEMENT_WORDS


#: A memory led by someone the user knows outside the household and kin (a friend, a colleague,
#: a roommate, a cousin, a comrade: "我表哥腰突做了手术", "兄弟想追他们公司前台", "my buddy just
#: got engaged"): what it tells is that person's, not a fact about the user (seed 002 §3.2:
#: the profile is the user's own attributes and likes; "a buddy of mine is moving to Calgary"
#: too). Not a term of address set off by a comma ("兄弟，我在深圳跑美团").
_ACQUAINTANCE_LED = re.compile(
    r"^(?:(?:and|but|so|also)\s+)?(?:my|our)\s+(?:best\s+|old\s+|close\s+|good\s+)?(?:friend|buddy|mate|pal|bestie|bff|"
    r"coworker|co-worker|colleague|neighbou?r|roommate|room\s+mate|flatmate|housemate|classmate|teammate|cousin)s?\b"
    r"|^(?:(?:and|but|so|also)\s+)?(?:a\s+|one\s+)?(?:friend|buddy|mate|pal|coworker|co-worker|colleague|neighbou?r|roommate|"
    r"flatmate|housemate|classmate|teammate|cousin)\s+of\s+(?:mine|ours)\b"
    r"|^(?:我|俺)?(?:的|一个|有个|一位)?(?:好|老|大学|高中|初中|小学)?(?:老铁|兄弟|哥们儿?|闺蜜|同事|邻居|朋友|好友|同学|室友|舍友|"
    r"发小|战友|表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹)(?![，,、:：!！\s])", re.IGNORECASE)
#: The user named after the lead of a memory: I / me / my / we (also "im") or 我 / 咱 / 俺; not
#: "ill", the adjective far more than "I'll" unspelt ("my buddy is ill" is the buddy's news).
_USER_AFTER = re.compile(r"\b(?:i|i'm|im|i'll|i've|ive|i'd|me|my|mine|we|we're|our|us)\b|我|咱|俺", re.IGNORECASE)


def about_an_acquaintance(memory: str) -> bool:
    """``memory`` is led by an acquaintance of the user's (:data:`_ACQUAINTANCE_LED`) and names
    the user nowhere after that lead (:data:`_USER_AFTER`): it tells only about that person.
    Linear in ``len(memory)``."""
    core = core_zh(core_en(memory))
    led = _ACQUAINTANCE_LED.match(core)
    return led is not None and not _USER_AFTER.search(core, led.end())


def _durable(memory: str, told: bool = True) -> bool:
    """Step 4 of the module docstring: ``told``: ``memory`` holds a disclosure (the user
    about themselves or their people), else it is a statement about something else."""
    if about_an_acquaintance(memory):
        return False  # a friend's, a colleague's, a cousin's news: theirs, an event (:data:`_ACQUAINTANCE_LED`)
    if slot_of(memory) or NAMED_PERSON.search(memory) or PLAN.search(memory):
        return True  # where the user lives, works, studies, what they eat, who their people are: lasting whatever the date
    if (CONDITION.search(memory) or names_chronic_condition(memory)) and (told or FIRST_PERSON_ZH.search(core_zh(memory))):
        return True  # an allergy, a diagnosis or a chronic condition holds after the day it was found out
    if DEATH.search(memory):
        return True  # the user's people or pets changed for good (:data:`DEATH`)
    if ended_of(memory):
        return True  # something lasting ended ("I stopped running", "我不喝咖啡了"): lasting whatever the date
    if is_passing(memory):
        return False  # how the user is right now, a task just finished, the listener: 累瘫了, "just clocked off"
    if told:
        return not is_episode(memory)
    topical = bool(DURABLE_EN.search(memory) or DURABLE_ZH.search(memory) or HABIT.search(memory) or TAKEN_ON.search(memory))
    if not topical:
        return False
    return not EVENT_TIME.search(memory) or bool(CHANGE.search(memory) or TAKEN_ON.search(memory) or ONGOING.search(memory))
