"""The world-book activation engine, sans-IO: entries and chat text in, activated entries
and timed-effect changes out (seed 001 ``MemoryTriggerEngine``, SillyTavern World Info
semantics). No Redis, no clock, no global randomness: the caller passes the chat, the
conversation's timed state, today's date and a seeded :class:`random.Random`.

Rules, each from SillyTavern's documentation "World Info"
(docs.sillytavern.app/usage/core-concepts/worldinfo, cited as *ST §section*):

1. **Scan depth** (*ST Activation Settings > Scan Depth*): keys are looked for in the last
   ``scan_depth`` messages; 0 scans none (only constant and recursed entries), 1 the last
   message. An entry's ``scanDepth`` overrides it for that entry.
2. **Keys** (*ST Key*, *Optional Filter*): any primary key activates; secondary keys
   apply ``selectiveLogic``. Case-insensitive unless ``caseSensitive`` (*ST Case-sensitive
   keys*). **Whole words** (*ST Match whole words*, on by default): a key without
   whitespace matches only as a whole word; Chinese has no word boundaries, so the check
   applies only at a key edge whose character is not CJK and against a neighbour that is
   not CJK (``猫`` matches in ``我的猫咪``; ``king`` does not match ``liking``).
   Plain keys are matched with one Aho-Corasick automaton per case mode (pyahocorasick):
   one pass over the text whatever the number of keys. ``/regex/flags`` keys run alone.
3. **Constant** (*ST Status*, blue circle): always activated (still subject to
   probability, groups and budget). Disabled entries never are.
4. **Order** (*ST Insertion Order*, *Context % / Budget*): constants are taken first, then
   higher ``priority`` first; entries found directly in the chat before recursed ones. The
   result lists entries by ascending ``priority`` (higher order = closer to the end).
5. **Budget** (*ST Context % / Budget*): entry contents are counted in tokens; once the
   next entry does not fit, no more entries are activated (``overflow``).
6. **Recursion** (*ST Recursive scanning*): activated entries' contents are scanned for
   other entries' keys, up to ``max_recursion`` further passes; ``excludeRecursion``
   entries are never activated by recursion, ``preventRecursion`` entries' contents are
   not scanned, ``delayUntilRecursion`` entries activate only in a recursion pass.
7. **Probability** (*ST Probability*): an activated entry is kept with ``probability`` %
   (100 always, 0 never); a sticky entry is not re-rolled.
8. **Inclusion groups** (*ST Inclusion Group*, *Prioritize Inclusion*): of the entries of
   one group activated together only one is kept: a sticky one, else the highest
   ``priority`` among ``groupOverride`` ones, else one drawn by ``groupWeight``. A group
   that already has an entry from an earlier pass takes no more.
9. **Timed effects** (*ST Timed Effects*; the clock is the chat's message count, user
   and assistant messages alike, so it advances once per message, generated or not).
   Counted exactly as SillyTavern's ``WorldInfoTimedEffects``
   (``public/scripts/world-info.js``): an entry activated at chat length ``t`` with
   ``sticky`` N stays active without its keys while the length is below ``t + N``; with
   ``cooldown`` N it cannot activate again while the length is below ``t + N``, or, after
   a sticky period, for N messages from the length at which the period was seen to end;
   ``delay`` N blocks activation while the chat has fewer than N messages. Effects are
   recorded when the prompt is built, with the length then, and an effect whose start is
   not below the current length is dropped before the scan ("chat not advanced": the
   reply failed or is being regenerated, and the same turn comes again), so such a turn
   is evaluated afresh.
10. **Seed 001 extras**: ``trigger_type`` temporal entries activate on their ``dates``;
    emotional entries when a cue of one of their ``emotionalContext`` categories is in the
    scanned text (:mod:`plugins.world_book.emotions`); relevance = ``relevanceWeight`` x
    time decay (``exp(-timeDecayFactor x age in days)`` from ``timestamp``) x (1 +
    ``emotionalWeight`` when an emotion of the entry is present); entries below
    ``relevance_threshold`` are dropped (constants kept); ``max_per_type`` caps each type.
11. **Semantic** (seed 001 ``triggerType`` semantic; SillyTavern's "vectorized" entries,
    Vector Storage extension, ``activateWorldInfo``): the caller passes the cosine
    similarity of the scan window to each semantic entry's content; the
    ``semantic_max_entries`` (5) most similar at or above ``semantic_threshold`` (0.25)
    activate, as SillyTavern's ``max_entries`` / ``score_threshold`` defaults. Their
    relevance is also multiplied by the similarity. Semantic entries still activate by
    their keys too (SillyTavern scans a vectorized entry's keys as any other's).

Costs: compiling is O(total key length) once per book version; one activation is
O(scanned text + key hits + candidate entries), independent of the number of entries
that do not match: the scanned messages are joined and cross each automaton once
(``python -m bench worldbook``).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import NamedTuple

import ahocorasick
import regex

from gateway.chain.sdk import LoreEntry, is_cjk, parse_regex_key
from plugins.world_book.emotions import EMOTION_WORDS

__all__ = ["Activated", "Activation", "CompiledBook", "EngineSettings", "activate"]

#: ``entry id -> (sticky start, sticky end, cooldown start, cooldown end, protected)`` in
#: chat-message counts (end 0: no such effect; protected 1: a cooldown that followed a
#: sticky period), SillyTavern's ``chat_metadata.timedWorldInfo``.
TimedState = dict[str, tuple[int, int, int, int, int]]

#: Joins the scanned messages into one text: not a word character (whole-word edges hold
#: at message ends) and in no plain key, so no key matches across two messages.
_SEP = "\x00"


@dataclass(frozen=True)
class EngineSettings:
    """Engine-wide defaults (the plugin's config). Units: messages and tokens.

    ``semantic_threshold`` / ``semantic_max_entries``: SillyTavern's Vector Storage
    defaults for vectorized World Info entries (``score_threshold`` 0.25, ``max_entries``
    5; ``public/scripts/extensions/vectors/index.js``).
    """

    scan_depth: int = 2  # SillyTavern's default scan depth
    case_sensitive: bool = False  # ST default
    match_whole_words: bool = True  # ST default ("Enabled by default")
    max_recursion: int = 3
    budget_tokens: int = 1024
    relevance_threshold: float = 0.0
    max_per_type: Mapping[str, int] = field(default_factory=dict)
    emotion_words: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: EMOTION_WORDS)
    semantic_threshold: float = 0.25
    semantic_max_entries: int = 5


def _is_word(char: str) -> bool:
    return (char.isalnum() or char == "_") and not (char >= "\u2e80" and is_cjk(char))


#: One key of one entry in an automaton: ``(entry index, (secondary, key index), whole)``.
_Ref = tuple[int, tuple[bool, int], bool]
#: Key hits of the entries: ``entry index -> {(secondary, key index): distance}``.
Hits = dict[int, dict[tuple[bool, int], int]]


class _Matcher:
    """Plain keys of one case mode in one automaton (``text`` already case-folded)."""

    def __init__(self, keys: Mapping[str, list[_Ref]]) -> None:
        self.automaton: ahocorasick.Automaton | None = None
        if keys:
            automaton = ahocorasick.Automaton()
            for key, refs in keys.items():
                automaton.add_word(key, (len(key), is_cjk(key[0]), is_cjk(key[-1]), tuple(refs)))
            automaton.make_automaton()
            self.automaton = automaton

    def scan_into(self, text: str, starts: Sequence[int] | None, into: Hits) -> None:
        """Record the keys found in ``text`` in ``into``: distance ``bisect(starts,
        position)`` (the message the hit is in, 1 = first) or 0 without ``starts``; a
        key already recorded keeps its distance (``text`` lists the nearest first)."""
        automaton = self.automaton
        if automaton is None or not text:
            return
        last = len(text) - 1
        for end, (length, cjk_start, cjk_end, refs) in automaton.iter(text):
            start = end - length + 1
            edges_ok = (
                (start == 0 or cjk_start or not _is_word(text[start - 1]))
                and (end == last or cjk_end or not _is_word(text[end + 1]))
            )
            distance = bisect.bisect_right(starts, start) if starts is not None else 0
            for entry, key, whole in refs:
                if edges_ok or not whole:
                    mine = into.get(entry)
                    if mine is None:
                        into[entry] = {key: distance}
                    elif key not in mine:
                        mine[key] = distance


def _joined(messages: Sequence[str]) -> tuple[str, list[int]]:
    starts = []
    at = 0
    for message in messages:
        starts.append(at)
        at += len(message) + 1
    return _SEP.join(messages), starts


class CompiledBook:
    """Entries compiled for activation (build once per book version; immutable)."""

    def __init__(self, entries: Sequence[LoreEntry], settings: EngineSettings) -> None:
        self.entries = tuple(e for e in entries if e.enabled)
        self.settings = settings
        ci: dict[str, list[_Ref]] = {}
        cs: dict[str, list[_Ref]] = {}
        self.regexes: list[tuple[_Ref, object]] = []
        self.constants: list[int] = []
        self.dated: list[int] = []
        self.emotional: dict[str, list[int]] = {}
        #: Entries activated by similarity (``triggerType`` semantic, with content).
        self.semantic: tuple[int, ...] = tuple(
            i for i, e in enumerate(self.entries) if e.trigger_type == "semantic" and e.content.strip()
        )
        self.index = {e.id: i for i, e in enumerate(self.entries)}
        self._tokens: dict[int, int] = {}  # content tokens, counted on first activation
        self._content_hits: dict[int, Hits] = {}  # plain keys in a content, found on first use
        self.deepest = max((e.scan_depth or 0 for e in self.entries), default=0)
        #: Entries whose keys are all primary and that use the default scan depth.
        self.simple = [not e.secondary_keys and e.scan_depth is None for e in self.entries]
        #: Entries with no delay, no probability roll and no time decay: their relevance
        #: is their weight, checked here once against the threshold (None: below it).
        self.plain: list[float | None] = [
            (e.relevance_weight if e.relevance_weight >= settings.relevance_threshold else None)
            if not e.delay and e.probability >= 100 and not e.time_decay_factor else -1.0
            for e in self.entries
        ]
        self.neg_priority = [-e.priority for e in self.entries]
        #: Simple entries a key in the chat activates directly (not delayed until recursion).
        self.direct = [simple and not e.delay_until_recursion for simple, e in zip(self.simple, self.entries, strict=True)]
        self.groups = [e.group for e in self.entries]
        for i, entry in enumerate(self.entries):
            if entry.is_constant:
                self.constants.append(i)
            if entry.dates:
                self.dated.append(i)
            if entry.trigger_type == "emotional" or entry.emotional_weight > 0:
                for cue in entry.emotional_context:
                    self.emotional.setdefault(cue.lower(), []).append(i)
            sensitive = settings.case_sensitive if entry.case_sensitive is None else entry.case_sensitive
            whole = settings.match_whole_words if entry.match_whole_words is None else entry.match_whole_words
            for secondary, keys in ((False, entry.keywords), (True, entry.secondary_keys)):
                for k, key in enumerate(keys):
                    pattern = parse_regex_key(key)
                    ref = (i, (secondary, k), whole and not any(c.isspace() for c in key))
                    if pattern is None and "\n" in key:  # may span two contents: searched whole
                        pattern = regex.compile(regex.escape(key), regex.V0 if sensitive else regex.V0 | regex.I)
                    if pattern is not None:
                        self.regexes.append((ref, pattern))
                    elif _SEP in key:
                        continue  # cannot occur in chat text joined by it
                    elif sensitive:
                        cs.setdefault(key, []).append(ref)
                    else:
                        ci.setdefault(key.lower(), []).append(ref)
        self._ci = _Matcher(ci)
        self._cs = _Matcher(cs)
        cues: dict[str, list[_Ref]] = {}
        self._cue_names: list[str] = []
        for category, words in settings.emotion_words.items():
            for word in words:
                cues.setdefault(word.lower(), []).append((len(self._cue_names), (False, 0), True))
                self._cue_names.append(f"{category}\x1f{word.lower()}")
        self._cues = _Matcher(cues)

    def tokens(self, i: int, count_tokens: Callable[[str], int]) -> int:
        """Tokens of entry ``i``'s content (counted once per compiled book)."""
        found = self._tokens.get(i)
        if found is None:
            found = self._tokens[i] = count_tokens(self.entries[i].content)
        return found

    def hits(self, text: str, regexes: bool = True) -> dict[int, dict[tuple[bool, int], int]]:
        """``entry index -> {(secondary, key index): 0}`` of plain keys (and regex keys
        unless ``regexes`` is False) found in ``text``."""
        found: Hits = {}
        self._cs.scan_into(text, None, found)
        self._ci.scan_into(text.lower(), None, found)
        if regexes:
            for (entry, key, _), pattern in self.regexes:
                if pattern.search(text):  # type: ignore[attr-defined]
                    found.setdefault(entry, {})[key] = 0
        return found

    def content_hits(self, i: int) -> Hits:
        """Plain keys found in entry ``i``'s content (distance 0), found once per compiled
        book. The recursion text is the activated contents joined by a newline, and no
        plain key in an automaton holds a newline (those are searched as regexes), so the
        keys found in the joined text are exactly the union of the contents' own."""
        found = self._content_hits.get(i)
        if found is None:
            found = self._content_hits[i] = self.hits(self.entries[i].content, regexes=False)
        return found

    def recursion_hits(self, added: Sequence[int]) -> Hits:
        """Keys found in the contents of ``added`` joined by a newline (rule 6): cached
        plain-key hits per content, regex keys searched in the joined text."""
        found: Hits = {}  # values may be the cached dicts: never changed in place
        for i in added:
            for entry, keys in self.content_hits(i).items():
                mine = found.get(entry)
                found[entry] = keys if mine is None else {**mine, **keys}
        if self.regexes:
            text = "\n".join(self.entries[i].content for i in added)
            for (entry, key, _), pattern in self.regexes:
                if pattern.search(text):  # type: ignore[attr-defined]
                    found[entry] = {**found.get(entry, {}), key: 0}
        return found

    def scan_messages(self, newest_first: Sequence[str]) -> Hits:
        """Keys found in the messages (newest first): ``entry index -> {(secondary, key
        index): distance}``, distance 1 = newest message, the nearest kept. One automaton
        pass per case mode over the messages joined, one search per regex key."""
        found: Hits = {}
        if not newest_first:
            return found
        if self._cs.automaton is not None:
            text, starts = _joined(newest_first)
            self._cs.scan_into(text, starts, found)
        if self._ci.automaton is not None:
            text, starts = _joined([m.lower() for m in newest_first])
            self._ci.scan_into(text, starts, found)
        for (entry, key, _), distance in self.regex_hits(newest_first):
            found.setdefault(entry, {}).setdefault(key, distance)
        return found

    def regex_hits(self, newest_first: Sequence[str]) -> list[tuple[_Ref, int]]:
        """``(regex key, distance)`` for each regex key found in the messages (newest
        first, distance 1 = newest): one search per key over the messages joined by a
        blank line, so a key costs one pass whatever the number of messages."""
        if not self.regexes or not newest_first:
            return []
        text = "\n\n".join(newest_first)
        starts = []
        at = 0
        for message in newest_first:
            starts.append(at)
            at += len(message) + 2
        out = []
        for ref, pattern in self.regexes:
            found = pattern.search(text)  # type: ignore[attr-defined]
            if found:
                out.append((ref, bisect.bisect_right(starts, found.start())))
        return out

    def emotions(self, text: str) -> set[str]:
        """Emotion categories and cue words present in ``text`` (lower case)."""
        found: Hits = {}
        self._cues.scan_into(text.lower(), None, found)
        out: set[str] = set()
        for cue in found:
            out.update(self._cue_names[cue].split("\x1f"))
        return out


class Activated(NamedTuple):
    """One activated entry: why (``constant``, ``sticky``, ``keyword``, ``recursion``,
    ``temporal``, ``emotional``, ``semantic``), its relevance score and its tokens."""

    entry: LoreEntry
    reason: str
    score: float
    tokens: int


@dataclass(frozen=True)
class Activation:
    """The engine's answer: ``entries`` by ascending priority (insertion order);
    ``timed``: timed-state entries to write; ``expired``: ids to drop from the state;
    ``overflow``: the budget stopped activation."""

    entries: tuple[Activated, ...]
    timed: TimedState
    expired: tuple[str, ...]
    overflow: bool


def _date_matches(dates: Sequence[str], today: date) -> bool:
    iso = today.isoformat()
    return any(d == iso or d == iso[5:] for d in dates)


def _relevance(entry: LoreEntry, now_ms: int, emotional: bool) -> float:
    score = entry.relevance_weight
    if entry.time_decay_factor and entry.timestamp is not None:
        age_days = max(0.0, (now_ms - entry.timestamp) / 86_400_000)
        score *= math.exp(-entry.time_decay_factor * age_days)
    if emotional:
        score *= 1 + entry.emotional_weight
    return score


def semantic_matches(book: CompiledBook, similarity: Mapping[int, float]) -> dict[int, float]:
    """The semantic entries ``similarity`` activates (rule 11): ``entry index ->
    similarity`` for the ``semantic_max_entries`` most similar at or above
    ``semantic_threshold``."""
    settings = book.settings
    above = [(s, i) for i, s in similarity.items() if s >= settings.semantic_threshold]
    above.sort(key=lambda p: (-p[0], p[1]))
    return {i: s for s, i in above[: settings.semantic_max_entries]}


def activate(
    book: CompiledBook,
    messages: Sequence[str],
    *,
    clock: int,
    timed: Mapping[str, tuple[int, int, int, int, int]],
    rng: random.Random,
    count_tokens: Callable[[str], int],
    today: date,
    now_ms: int,
    similarity: Mapping[int, float] | None = None,
) -> Activation:
    """Activate ``book``'s entries for a chat (module docstring for every rule).

    Args:
        messages: the chat's message texts, oldest first (only the last ``scan_depth``,
            or an entry's own, are scanned).
        clock: the chat's length in messages (timed effects' clock).
        timed: the conversation's timed state before this turn.
        rng: the random source of probability and group draws.
        count_tokens: tokens of one entry's content.
        today: the date temporal entries are checked against.
        now_ms: the time relevance decay is computed at (ms since the epoch).
        similarity: cosine similarity of the scan window to semantic entries (``entry
            index -> similarity``, :attr:`CompiledBook.semantic`); None or empty: no
            semantic activation (rule 11).
    """
    settings = book.settings
    entries = book.entries
    simple = book.simple
    default_depth = settings.scan_depth
    deepest = max(default_depth, book.deepest)
    window = list(messages[max(0, len(messages) - deepest):]) if deepest else []
    # every hit of the window is within the default depth: simple entries need no check
    shallow = len(window) <= default_depth
    chat_hits = book.scan_messages(window[::-1])
    emotions = (
        book.emotions("\n".join(window[max(0, len(window) - default_depth):]))
        if default_depth and book.emotional else set()
    )
    similar = semantic_matches(book, similarity) if similarity else {}

    def keyword_ok(i: int, hits: Mapping[tuple[bool, int], int]) -> bool:
        if simple[i]:
            return shallow or min(hits.values()) <= default_depth
        entry = entries[i]
        depth = default_depth if entry.scan_depth is None else entry.scan_depth
        seen = {k for k, d in hits.items() if d <= depth}
        if not any(not secondary for secondary, _ in seen):
            return False
        total = len(entry.secondary_keys)
        if not total:
            return True
        matched = sum(1 for secondary, _ in seen if secondary)
        logic = entry.selective_logic
        return {
            "and_any": matched > 0, "and_all": matched == total,
            "not_any": matched == 0, "not_all": matched < total,
        }[logic]

    sticky_now, cooling, effects = _check_timed(book, timed, clock)

    def blocked(i: int) -> bool:
        return clock < entries[i].delay or (i in cooling and i not in sticky_now)

    emotional_hits = {i for cue in emotions for i in book.emotional.get(cue, ())}
    timed_ix = sticky_now | cooling
    plain = book.plain
    neg_priority = book.neg_priority
    direct = book.direct
    token_counts = book._tokens

    taken: list[Activated] = []
    considered: set[int] = set()
    groups_done: set[str] = set()
    per_type: dict[str, int] = {}
    max_per_type = settings.max_per_type
    used = 0
    overflow = False

    found: dict[int, str] = {}
    for i in sticky_now:
        found[i] = "sticky"
    for i in book.constants:
        found.setdefault(i, "constant")
    for i, hits in chat_hits.items():
        if (shallow and direct[i]) or (not entries[i].delay_until_recursion and keyword_ok(i, hits)):
            found.setdefault(i, "keyword")
    for i in book.dated:
        if _date_matches(entries[i].dates, today):
            found.setdefault(i, "temporal")
    for i in emotional_hits:
        if entries[i].trigger_type == "emotional":
            found.setdefault(i, "emotional")
    for i in similar:
        found.setdefault(i, "semantic")

    for step in range(settings.max_recursion + 1):
        pool: list[tuple[int, str, float]] = []
        for i, why in found.items():
            if i in considered:
                continue
            considered.add(i)
            static = plain[i]
            if static is not None and static >= 0 and i not in timed_ix and i not in emotional_hits and i not in similar:
                pool.append((i, why, static))  # the common case, decided at compile time
                continue
            entry = entries[i]
            if why != "sticky":
                if (entry.delay or i in timed_ix) and blocked(i):
                    continue
                if entry.probability < 100 and not rng.random() * 100 < entry.probability:
                    continue
            if entry.time_decay_factor or i in emotional_hits:
                score = _relevance(entry, now_ms, i in emotional_hits)
            else:
                score = entry.relevance_weight
            if i in similar:
                score *= similar[i]
            if why not in ("constant", "sticky") and score < settings.relevance_threshold:
                continue
            pool.append((i, why, score))
        pool = _groups(pool, book.groups, entries, groups_done, rng)
        pool.sort(key=lambda p: (p[1] not in ("constant", "sticky"), neg_priority[p[0]], -p[2], p[0]))
        added: list[int] = []
        for i, why, score in pool:
            entry = entries[i]
            if max_per_type:
                cap = max_per_type.get(entry.type)
                if cap is not None and per_type.get(entry.type, 0) >= cap:
                    continue
            tokens = token_counts.get(i)
            if tokens is None:
                tokens = book.tokens(i, count_tokens)
            if used + tokens > settings.budget_tokens:
                overflow = True
                break
            used += tokens
            per_type[entry.type] = per_type.get(entry.type, 0) + 1
            taken.append(Activated(entry, why, score, tokens))
            added.append(i)
            if entry.group:
                groups_done.add(entry.group)
            if entry.sticky or entry.cooldown:  # ST setTimedEffects: only where none is running
                ss, se, cs, ce, protected = effects.get(entry.id, _NO_EFFECT)
                if entry.sticky and not se:
                    ss, se = clock, clock + entry.sticky
                if entry.cooldown and not ce:
                    cs, ce, protected = clock, clock + entry.cooldown, 0
                effects[entry.id] = (ss, se, cs, ce, protected)
        if overflow or step == settings.max_recursion:
            break
        scanned = [i for i in added if not entries[i].prevent_recursion and entries[i].content]
        if not scanned:
            break
        found = {}
        for i, keys in book.recursion_hits(scanned).items():
            if i in considered or entries[i].exclude_recursion:
                continue
            if simple[i]:  # any key found (distance 0) activates it
                found[i] = "recursion"
                continue
            merged = dict(keys)
            for k, d in chat_hits.get(i, {}).items():
                merged.setdefault(k, d)
            if keyword_ok(i, merged):
                found[i] = "recursion"
        if not found:
            break

    changed = {key: state for key, state in effects.items() if timed.get(key) != state}
    expired = tuple(key for key in timed if key not in effects)
    ordered = tuple(sorted(taken, key=lambda a: a.entry.priority))
    return Activation(ordered, changed, expired, overflow)


_NO_EFFECT = (0, 0, 0, 0, 0)


def _check_timed(
    book: CompiledBook, timed: Mapping[str, tuple[int, int, int, int, int]], clock: int
) -> tuple[set[int], set[int], dict[str, tuple[int, int, int, int, int]]]:
    """SillyTavern's ``WorldInfoTimedEffects.checkTimedEffects`` (rule 9): the entries
    sticky now, the entries cooling down now, and the effects still running (ended or
    void ones removed, a sticky period that ended replaced by its protected cooldown).

    For each effect, in this order: not advanced (``clock <= start``, not protected) ->
    removed; its entry gone from the book -> removed once ``clock >= end``; its entry no
    longer has the effect -> removed; ended (``clock >= end``) -> removed, and an ended
    sticky period starts the entry's cooldown now (``clock`` .. ``clock + cooldown``,
    protected); else running."""
    index = book.index
    entries = book.entries
    sticky_now: set[int] = set()
    cooling: set[int] = set()
    effects: dict[str, tuple[int, int, int, int, int]] = {}
    for key, (ss, se, cs, ce, protected) in timed.items():
        i = index.get(key)
        entry = entries[i] if i is not None else None
        if se:
            if clock <= ss or (entry is None and clock >= se) or (entry is not None and not entry.sticky):
                ss = se = 0
            elif entry is not None and clock >= se:
                ss = se = 0
                if entry.cooldown:
                    cs, ce, protected = clock, clock + entry.cooldown, 1
            elif i is not None:
                sticky_now.add(i)
        if ce:
            if (clock <= cs and not protected) or clock >= ce or (entry is not None and not entry.cooldown):
                cs = ce = protected = 0
            elif i is not None:
                cooling.add(i)
        if se or ce:
            effects[key] = (ss, se, cs, ce, protected)
    return sticky_now, cooling, effects


def _groups(
    pool: list[tuple[int, str, float]], groups: Sequence[str], entries: Sequence[LoreEntry], done: set[str],
    rng: random.Random,
) -> list[tuple[int, str, float]]:
    """Keep one entry per inclusion group (module docstring, rule 8); ``groups``: each
    entry's group."""
    grouped: dict[str, list[tuple[int, str, float]]] = {}
    out = [item for item in pool if not groups[item[0]]]
    if len(out) == len(pool):
        return out
    for item in pool:
        group = groups[item[0]]
        if group and group not in done:
            grouped.setdefault(group, []).append(item)
    for group in sorted(grouped):
        members = grouped[group]
        sticky = [m for m in members if m[1] == "sticky"]
        override = [m for m in members if entries[m[0]].group_override]
        if sticky:
            out.append(sticky[0])
        elif override:
            out.append(max(override, key=lambda m: (entries[m[0]].priority, -m[0])))
        else:
            weights = [entries[m[0]].group_weight for m in members]
            out.append(rng.choices(members, weights=weights)[0])
    return out
