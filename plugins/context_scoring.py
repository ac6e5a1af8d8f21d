"""Relevance-scored context for group chats, sans-IO (seed 004 §3.1-3.3).

Seed 004's ``MessageAnalyzer`` + ``RelevanceScorer`` + ``EnhancedContextService`` without
the I/O: given the turns of a chat (oldest first) and the index of the target turn (the
message being answered), :func:`select_context` scores every earlier turn inside the time
window and returns the indices to keep, in their original order.

Each candidate's score is the seed's weighted sum (§3.2), capped at 1:

==================  ======  ==========================================================
signal              weight  value in [0, 1]
==================  ======  ==========================================================
reply_chain         0.4     strength of the best path from the target to the candidate
                            in the reply graph (below): 1 for an explicit reply link
user_continuity     0.15    1 when the candidate's speaker is the target's speaker,
                            unless the candidate addresses a third person and the
                            reply graph does not reach it (their other conversation)
time_decay          0.25    ``0.5 ** (age / half_life)``: age in seconds when both turns
                            have times, else in turns (positions)
mention_relation    0.15    1 when the target mentions the candidate's speaker or the
                            candidate mentions the target's speaker
keyword_overlap     0.1     IDF-weighted share of the target's terms found in the
                            candidate (words; character bigrams for CJK text)
==================  ======  ==========================================================

Candidates scoring at least ``threshold`` (seed: 0.3; default 0.33, :class:`Params`) are kept, best first, up to
``max_messages`` (seed: 20), then put back in their original order.

The reply graph (the seed's "reply chain", §3.1 ``_extract_reply_info``: quote and
mention replies): each turn gets links to the turns it answers, in this order of
evidence: an explicit ``reply_to`` id (strength 1.0); each speaker it *addresses*
(``@nick`` anywhere, ``nick:`` / ``nick,`` at the start, CJK punctuation included) ->
that speaker's latest earlier turn addressed to this speaker or to nobody, else their
latest turn (0.9; a turn they addressed to a third person belongs to that
conversation), and also the latest turn by someone else that merely *mentioned* that
speaker, when it is more recent (0.5: a request on their behalf, ``!cmd | nick`` to a
bot); with neither, the latest turn that addressed
this speaker since their own last turn (0.9, "an answer to whoever spoke to me"), this
speaker's own previous turn (0.8, continuity) and, when the turn addresses nobody, a
guess among the 5 turns before it by someone else: the one sharing the most *topic* words
with it (0.55, topical; a word's weight is its IDF over the chat minus
:data:`TOPIC_IDF_FLOOR`, so only words in fewer than ~22% of the turns count, and the
shared weight must reach :data:`TOPIC_MIN`; for the last :data:`TOPIC_SPAN` turns),
else the nearest addressed to this speaker or to nobody (0.5, adjacency); the target
also links to the turn just before it, whoever it was addressed to; an assistant turn
links to the turn just before it, 0.9. Every signal is optional and independent: ids
only resolve ``reply_to``, and these inferred links are computed whether or not the
client sends ids or reply links (most replies in a busy group are sent without the
platform's reply button: a missing ``reply_to`` says nothing). Links under 0.6 are
guesses: a topical guess may end a path but never continue one, an adjacency or mention
guess is taken from the target only (a path of one link), so a guess never bridges two
threads; the one exception is the target's own topical guess, which may be continued:
it picks the thread the target is in. Links are walked in both directions (siblings in a thread share an ancestor) and
path strength is the product of link strengths (a best path search, O(E log V)); a path
through an unaddressed turn is no weaker than its links.

Mentions are parsed only for names that are speakers of the chat (case-insensitive), so
"Note: ..." is not a mention unless someone is called Note; names may contain CJK
characters (``@小明``, ``小明：`` / ``小明，``); a name at the start may be shortened to an
unambiguous prefix of 3+ characters (``action:`` for ``actionparsnip``). Explicit
mentions (``Turn.mentions``) count as addressed.

Cost: every step is linear in the total text (bounded per turn by
:data:`MAX_TEXT_CHARS`) and the number of turns, except the path search (n log n).
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from gateway.chain.sdk import CJK_CLASS

__all__ = [
    "MAX_TEXT_CHARS",
    "Params",
    "Selection",
    "Turn",
    "Weights",
    "addressed_names",
    "select_context",
    "terms",
]

#: Characters of a turn's text looked at for mentions and keywords (4,096: longer text is
#: usually pasted data; keeps the cost per turn bounded).
MAX_TEXT_CHARS = 4096

#: Longest speaker name matched in text, in characters.
MAX_NAME_CHARS = 64
#: ``@`` marks looked at per turn (each looks up to MAX_NAME_CHARS ahead): bounds the work
#: a text full of ``@`` costs.
MAX_AT_MENTIONS = 16

_WORD_RE = re.compile(f"[^\\W_{CJK_CLASS}]{{2,}}")
_CJK_RUNS_RE = re.compile(f"[{CJK_CLASS}]+")
# the mark after a name that addresses someone at the start of a turn
_ADDRESS_RE = re.compile("[:,：，、]")

# Link strengths of the reply graph (module docstring).
EXPLICIT_LINK = 1.0
ADDRESS_LINK = 0.9
ANSWER_LINK = 0.9
CONTINUITY_LINK = 0.8
ASSISTANT_LINK = 0.9
ADJACENT_LINK = 0.5
TOPICAL_LINK = 0.55
#: A word's topic weight is ``ln(turns / turns with it) - TOPIC_IDF_FLOOR`` (at least 0):
#: words in more than ~22% (1/e^1.5) of the turns weigh nothing.
TOPIC_IDF_FLOOR = 1.5
#: Least shared topic weight for a topical guess (about one word in at most ~8% of turns).
TOPIC_MIN = 1.0
#: Turns before the target whose adjacency guess looks at topic words (older ones take the
#: nearest open turn, as before): bounds the extra work; their links rarely decide what is
#: kept (at most 20 turns, time-decayed).
TOPIC_SPAN = 100
MENTION_LINK = 0.5
#: Links below this strength are guesses: they end a path, never continue it.
WEAK_BELOW = 0.6
#: Turns looked back for an adjacency guess's partner.
ADJACENT_LOOKBACK = 5


@dataclass(frozen=True, slots=True)
class Turn:
    """One message as the scorer sees it.

    Attributes:
        speaker: who said it (the message's ``name``; the role when it has none), None if
            unknown.
        text: the message text.
        role: ``user``, ``assistant``...
        id: the client's message id (``memgate.id``), for reply links.
        reply_to: id of the message this one replies to (``memgate.reply_to``).
        ts: seconds since the epoch (``memgate.ts``), None when not given.
        mentions: speakers this message mentions explicitly (``memgate.mentions``).
    """

    speaker: str | None
    text: str
    role: str = "user"
    id: str | None = None
    reply_to: str | None = None
    ts: float | None = None
    mentions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Weights:
    """Signal weights; defaults from seed 004 §3.2 (``RelevanceScorer.weights``) but
    ``time_decay`` 0.25 (seed 0.2), tuned leave-one-channel-out on the IRC dev channels
    (``python -m bench context --loco``)."""

    reply_chain: float = 0.4
    user_continuity: float = 0.15
    time_decay: float = 0.25
    mention_relation: float = 0.15
    keyword_overlap: float = 0.1


@dataclass(frozen=True, slots=True)
class Params:
    """Selection parameters (defaults: seed 004 §6.1 ``MemoryConfig`` where it has one).

    Attributes:
        weights: signal weights.
        threshold: least score kept (seed ``relevance_threshold`` 0.3; 0.33 tuned with
            ``time_decay`` 0.25 and ``half_life_s`` 1200 on the IRC dev channels).
        max_messages: most candidates kept (seed: ``max_context_messages`` 20).
        window_s: candidates older than this before the target are not considered
            (seed: ``time_window_hours`` 24); only applies when both turns have times.
        half_life_s: time decay half-life, seconds (not in the seed; tuned as above).
        half_life_turns: decay half-life in turns when times are missing (not in the seed;
            60 tuned leave-one-channel-out on the IRC dev channels sent without times).
    """

    weights: Weights = field(default_factory=Weights)
    threshold: float = 0.33
    max_messages: int = 20
    window_s: float = 24 * 3600.0
    half_life_s: float = 1200.0
    half_life_turns: float = 60.0


@dataclass(frozen=True, slots=True)
class Selection:
    """What :func:`select_context` chose.

    Attributes:
        kept: indices of the kept candidates, ascending (the target is not included).
        scores: score of every candidate considered, by index.
        candidates: how many turns were considered (inside the window).
    """

    kept: tuple[int, ...]
    scores: dict[int, float]
    candidates: int

    @property
    def mean_score(self) -> float:
        """Mean score of the kept turns (0.0 when none)."""
        return sum(self.scores[i] for i in self.kept) / len(self.kept) if self.kept else 0.0


def _key(name: str) -> str:
    return name.strip().casefold()


def addressed_names(text: str, names: dict[str, str], longest: int) -> tuple[list[str], list[str]]:
    """``(addressed, inline)`` speaker keys found in ``text`` (see :func:`analyze`)."""
    addressed, inline, _ = analyze(text, names, longest)
    return addressed, inline


def name_prefixes(names: dict[str, str], shortest: int = 3) -> dict[str, str]:
    """Unambiguous prefixes (``shortest`` characters or more) of the known names -> the
    name: people address a long nick by its start (``action:`` for ``actionparsnip``).
    Linear in the total length of the names."""
    seen: dict[str, str | None] = {}
    for name in names:
        for end in range(shortest, min(len(name), MAX_NAME_CHARS)):
            prefix = name[:end]
            seen[prefix] = name if prefix not in seen else None
    return {p: n for p, n in seen.items() if n is not None and p not in names}


def analyze(text: str, names: dict[str, str], longest: int, prefixes: dict[str, str] | None = None,
            sizes: Sequence[int] | None = None) -> tuple[list[str], list[str], set[str]]:
    """``(addressed, inline, terms)`` of ``text``, from its first :data:`MAX_TEXT_CHARS`
    characters.

    ``names`` maps a casefolded name to itself (the known speakers); ``longest`` is the
    longest name's length; ``prefixes`` (:func:`name_prefixes`) the shortened names;
    ``sizes`` the distinct name lengths, longest first (computed when None). Addressed: ``@name`` anywhere (the longest known name right
    after the ``@``: CJK names need no delimiter), or a known name at the start followed by
    ``:`` / ``,`` / ``：`` / ``，`` / ``、`` (or the whole text being a name). Inline: a known
    name as a whole word elsewhere (names of 3+ characters). Terms: casefolded words of 2+
    letters or digits, and character bigrams of CJK runs (a lone CJK character stands
    alone; Chinese has no spaces). Linear in the text (at most :data:`MAX_AT_MENTIONS` ``@``
    marks, each trying each distinct name length once).
    """
    low = text[:MAX_TEXT_CHARS].casefold().replace("＠", "@")
    addressed: list[str] = []
    longest = min(longest, MAX_NAME_CHARS)
    if sizes is None:
        sizes = sorted({len(n) for n in names if len(n) <= longest}, reverse=True)
    start = low.lstrip()
    mark = _ADDRESS_RE.search(start, 0, longest + 2)
    head = start[:mark.start()].rstrip() if mark else start.rstrip()
    if head in names:
        addressed.append(head)
    elif mark and prefixes and head in prefixes:
        addressed.append(prefixes[head])
    at = low.find("@")
    for _ in range(MAX_AT_MENTIONS):
        if at < 0:
            break
        for size in sizes:
            if low[at + 1:at + 1 + size] in names:
                addressed.append(low[at + 1:at + 1 + size])
                break
        at = low.find("@", at + 1)
    found = set(_WORD_RE.findall(low))
    inline = [w for w in found.intersection(names) if len(w) >= 3 and w not in addressed]
    for run in _CJK_RUNS_RE.findall(low):
        if len(run) == 1:
            found.add(run)
        else:
            found.update(run[i:i + 2] for i in range(len(run) - 1))
    return addressed, inline, found


def terms(text: str) -> set[str]:
    """Keyword terms of ``text`` (see :func:`analyze`)."""
    return analyze(text, {}, 0)[2]


def _links(turns: Sequence[Turn], first: int, last: int, speakers: list[str | None],
           addressed: list[list[str]], mentions: list[set[str]], bags: list[set[str]],
           counts: Counter[str], rare: float) -> list[list[tuple[int, float]]]:
    """Undirected reply graph over ``turns[first:last + 1]`` (module docstring); ``bags``
    are the turns' terms, ``counts`` how many turns have each, ``rare`` the count under
    which a term is a topic word."""
    weight: dict[str, float] = {}  # topic weights, computed when first needed
    by_id: dict[str, int] = {}
    latest: dict[str, int] = {}
    addressed_me: dict[str, int] = {}
    latest_to: dict[tuple[str, str], int] = {}
    latest_open: dict[str, int] = {}
    talked_about: dict[str, int] = {}
    adjacency: list[list[tuple[int, float]]] = [[] for _ in turns]
    for i in range(first, last + 1):
        turn = turns[i]
        speaker = speakers[i]
        parents: list[tuple[int, float]] = []
        if turn.reply_to is not None and turn.reply_to in by_id:
            parents.append((by_id[turn.reply_to], EXPLICIT_LINK))
        for name in addressed[i]:
            if name == speaker:
                continue
            j = latest.get(name)
            if j is not None:
                # their latest turn to me or to nobody: not one to a third person
                to_me = latest_to.get((name, speaker)) if speaker is not None else None
                options = [k for k in (to_me, latest_open.get(name)) if k is not None]
                if options:
                    j = max(options)
            if j is not None:
                parents.append((j, ADDRESS_LINK))
            m = talked_about.get(name)
            if m is not None and (j is None or m > j) and speakers[m] != speaker:
                parents.append((m, MENTION_LINK))
        own = latest.get(speaker) if speaker is not None else None
        if not parents:
            asked = addressed_me.get(speaker) if speaker is not None else None
            if asked is not None and (own is None or asked > own):
                parents.append((asked, ANSWER_LINK))
            if own is not None:
                parents.append((own, CONTINUITY_LINK))
            if i > first and not addressed[i]:
                prev = i - 1
                link = ASSISTANT_LINK
                if turn.role != "assistant":
                    # the turn by someone else sharing the most topic words, else the nearest
                    # one to me or to nobody (a turn to a third person belongs to their
                    # conversation); a few turns back at most
                    link = ADJACENT_LINK
                    nearest = topical = None
                    best = TOPIC_MIN
                    mine = bags[i] if last - i < TOPIC_SPAN else None
                    for k in range(i - 1, max(first, i - 1 - ADJACENT_LOOKBACK) - 1, -1):
                        if speakers[k] == speaker:
                            continue
                        if nearest is None and (not addressed[k] or speaker in addressed[k]):
                            nearest = k
                            if mine is None:
                                break
                        common = mine & bags[k] if mine else None
                        if common:
                            shared = 0.0
                            for term in common:
                                w = weight.get(term)
                                if w is None:
                                    c = counts[term]
                                    w = weight[term] = math.log(rare / c) if c < rare else 0.0
                                shared += w
                            if shared >= best:
                                topical, best = k, shared + 1e-9  # ties: the nearest
                    if topical is not None:
                        prev, link = topical, TOPICAL_LINK
                    elif nearest is not None:
                        prev = nearest
                if prev not in (own, asked):
                    parents.append((prev, link))
                if i == last and prev != i - 1 and i - 1 not in (own, asked):
                    parents.append((i - 1, ADJACENT_LINK))
        for j, strength in parents:
            adjacency[i].append((j, strength))
            adjacency[j].append((i, strength))
        if turn.id is not None:
            by_id[turn.id] = i
        if speaker is not None:
            latest[speaker] = i
            for name in addressed[i]:
                addressed_me[name] = i
                latest_to[(speaker, name)] = i
            if not addressed[i]:
                latest_open[speaker] = i
            for name in mentions[i].difference(addressed[i]):
                talked_about[name] = i
    return adjacency


def _chain(adjacency: list[list[tuple[int, float]]], source: int) -> dict[int, float]:
    """Best path strength (product of link strengths) from ``source`` to each reachable
    turn: Dijkstra on ``-log(strength)``. A link weaker than :data:`WEAK_BELOW` is a
    guess: it may end a path but never continues one, so a guess never bridges two
    threads (IRC dev channels: precision 0.42 -> 0.47); an adjacency or mention guess
    (no shared topic words) is taken from ``source`` only, a path of one link: it does
    not add the neighbour of every thread member the graph reached (precision 0.510 ->
    0.546 at -0.014 thread recall, the threshold then lowered to spend it). The source's
    own topical guess (:data:`TOPICAL_LINK`) may be continued: it picks the source's
    thread."""
    best: dict[int, float] = {source: 1.0}  # any path
    strong: dict[int, float] = {source: 1.0}  # paths that may go on
    heap: list[tuple[float, int]] = [(-1.0, source)]
    while heap:
        negative, node = heapq.heappop(heap)
        strength = -negative
        if strength < strong[node]:
            continue
        for nxt, link in adjacency[node]:
            if link < WEAK_BELOW and node != source and link != TOPICAL_LINK:
                continue
            value = strength * link
            if value > best.get(nxt, 0.0):
                best[nxt] = value
            goes_on = link >= WEAK_BELOW or (node == source and link >= TOPICAL_LINK)
            if goes_on and value > strong.get(nxt, 0.0):
                strong[nxt] = value
                heapq.heappush(heap, (-value, nxt))
    return best


def select_context(turns: Sequence[Turn], target: int, params: Params | None = None) -> Selection:
    """Score ``turns[:target]`` against ``turns[target]`` and choose what to keep
    (module docstring).

    Args:
        turns: the chat, oldest first (no system messages: the caller keeps those).
        target: index of the message being answered.
        params: weights and limits (seed defaults when None).

    Returns:
        The kept indices (ascending) with every considered candidate's score.

    Raises:
        IndexError: ``target`` is not an index of ``turns``.
    """
    params = params or Params()
    weights = params.weights
    goal = turns[target]
    first = 0
    if goal.ts is not None:
        while first < target and turns[first].ts is not None and goal.ts - turns[first].ts > params.window_s:  # type: ignore[operator]
            first += 1
    speakers: list[str | None] = [None] * len(turns)
    names: dict[str, str] = {}
    for i in range(first, target + 1):
        speaker = turns[i].speaker
        if speaker:
            key = speakers[i] = _key(speaker)
            names[key] = key
    longest = max((len(k) for k in names), default=0)
    prefixes = name_prefixes(names)
    sizes = sorted({len(n) for n in names if len(n) <= MAX_NAME_CHARS}, reverse=True)
    addressed: list[list[str]] = [[] for _ in turns]
    mentions: list[set[str]] = [set() for _ in turns]
    bags: list[set[str]] = [set() for _ in turns]
    for i in range(first, target + 1):
        turn = turns[i]
        found, inline, bags[i] = analyze(turn.text, names, longest, prefixes, sizes)
        found.extend(_key(m) for m in turn.mentions)
        addressed[i] = found
        mentions[i] = {*found, *inline}
    counts: Counter[str] = Counter()  # turns with each term (the target included)
    for i in range(first, target + 1):
        counts.update(bags[i])
    rare = (target - first + 1) / math.exp(TOPIC_IDF_FLOOR)  # words in fewer turns weigh > 0
    chain = _chain(_links(turns, first, target, speakers, addressed, mentions, bags, counts, rare), target)

    goal_speaker = speakers[target]
    goal_terms = bags[target]
    addressed_by_goal = set(addressed[target])
    count = target - first + 1
    idf = {t: math.log((count + 1) / (counts[t] - 1 + 0.5)) for t in goal_terms}  # df: earlier turns
    idf_total = sum(idf.values()) or 1.0

    scores: dict[int, float] = {}
    for i in range(first, target):
        turn = turns[i]
        speaker = speakers[i]
        if goal.ts is not None and turn.ts is not None:
            decay = 0.5 ** (max(goal.ts - turn.ts, 0.0) / params.half_life_s)
        else:
            decay = 0.5 ** ((target - i - 1) / params.half_life_turns)
        same = speaker is not None and speaker == goal_speaker
        if same and i not in chain and addressed[i] and goal_speaker not in addressed[i] \
                and not addressed_by_goal.intersection(addressed[i]):
            same = False  # the speaker's turn in another conversation (to a third person)
        mentioned = speaker is not None and not same and (
            speaker in mentions[target] or (goal_speaker is not None and goal_speaker in mentions[i]))
        overlap = sum(idf[t] for t in bags[i] & goal_terms) / idf_total if goal_terms else 0.0
        score = (
            weights.reply_chain * chain.get(i, 0.0)
            + weights.user_continuity * (1.0 if same else 0.0)
            + weights.time_decay * decay
            + weights.mention_relation * (1.0 if mentioned else 0.0)
            + weights.keyword_overlap * overlap
        )
        scores[i] = min(score, 1.0)
    ranked = sorted((i for i, s in scores.items() if s >= params.threshold), key=lambda i: (-scores[i], -i))
    kept = tuple(sorted(ranked[:params.max_messages]))
    return Selection(kept, scores, target - first)
