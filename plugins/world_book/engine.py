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
9. **Timed effects** (*ST Timed Effects*; the clock is the chat's message count ``t``):
   ``sticky`` N keeps an entry active without its keys until ``t`` exceeds activation +
   N; ``cooldown`` N blocks re-activation for N messages after activation, or after the
   sticky period when there is one; ``delay`` N blocks activation while the chat has fewer
   than N messages.
10. **Seed 001 extras**: ``trigger_type`` temporal entries activate on their ``dates``;
    emotional entries when a cue of one of their ``emotionalContext`` categories is in the
    scanned text (:mod:`plugins.world_book.emotions`); relevance = ``relevanceWeight`` x
    time decay (``exp(-timeDecayFactor x age in days)`` from ``timestamp``) x (1 +
    ``emotionalWeight`` when an emotion of the entry is present); entries below
    ``relevance_threshold`` are dropped (constants kept); ``max_per_type`` caps each type.

Costs: compiling is O(total key length) once per book version; one activation is
O(scanned text + key hits + candidate entries), independent of the number of entries
that do not match (``python -m bench worldbook``).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

import ahocorasick

from gateway.sdk import LoreEntry, is_cjk, parse_regex_key
from plugins.world_book.emotions import EMOTION_WORDS

__all__ = ["Activated", "Activation", "CompiledBook", "EngineSettings", "activate"]

#: ``entry id -> (sticky until, cooldown until)`` in chat-message counts.
TimedState = dict[str, tuple[int, int]]


@dataclass(frozen=True)
class EngineSettings:
    """Engine-wide defaults (the plugin's config). Units: messages and tokens."""

    scan_depth: int = 2  # SillyTavern's default scan depth
    case_sensitive: bool = False  # ST default
    match_whole_words: bool = True  # ST default ("Enabled by default")
    max_recursion: int = 3
    budget_tokens: int = 1024
    relevance_threshold: float = 0.0
    max_per_type: Mapping[str, int] = field(default_factory=dict)
    emotion_words: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: EMOTION_WORDS)


def _is_word(char: str) -> bool:
    return (char.isalnum() or char == "_") and not (char >= "\u2e80" and is_cjk(char))


@dataclass(frozen=True, slots=True)
class _Ref:
    entry: int
    secondary: bool
    key: int
    whole: bool  # whole-word edges to check


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

    def scan(self, text: str, found: Callable[[_Ref], None]) -> None:
        if self.automaton is None or not text:
            return
        last = len(text) - 1
        for end, (length, cjk_start, cjk_end, refs) in self.automaton.iter(text):
            start = end - length + 1
            edges_ok = (
                (start == 0 or cjk_start or not _is_word(text[start - 1]))
                and (end == last or cjk_end or not _is_word(text[end + 1]))
            )
            for ref in refs:
                if edges_ok or not ref.whole:
                    found(ref)


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
        self.index = {e.id: i for i, e in enumerate(self.entries)}
        self._tokens: dict[int, int] = {}  # content tokens, counted on first activation
        self.deepest = max((e.scan_depth or 0 for e in self.entries), default=0)
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
                    ref = _Ref(i, secondary, k, whole and not any(c.isspace() for c in key))
                    if pattern is not None:
                        self.regexes.append((ref, pattern))
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
                cues.setdefault(word.lower(), []).append(_Ref(len(self._cue_names), False, 0, True))
                self._cue_names.append(f"{category}\x1f{word.lower()}")
        self._cues = _Matcher(cues)

    def tokens(self, i: int, count_tokens: Callable[[str], int]) -> int:
        """Tokens of entry ``i``'s content (counted once per compiled book)."""
        found = self._tokens.get(i)
        if found is None:
            found = self._tokens[i] = count_tokens(self.entries[i].content)
        return found

    def hits(self, text: str, regexes: bool = True) -> dict[int, dict[tuple[bool, int], None]]:
        """``entry index -> {(secondary, key index)}`` of plain keys (and regex keys
        unless ``regexes`` is False) found in ``text``."""
        found: dict[int, dict[tuple[bool, int], None]] = {}

        def add(ref: _Ref) -> None:
            found.setdefault(ref.entry, {})[(ref.secondary, ref.key)] = None

        self._cs.scan(text, add)
        self._ci.scan(text.lower(), add)
        if regexes:
            for ref, pattern in self.regexes:
                if pattern.search(text):  # type: ignore[attr-defined]
                    add(ref)
        return found

    def scan_into(self, text: str, distance: int, into: dict[int, dict[tuple[bool, int], int]]) -> None:
        """Record plain keys found in ``text`` at ``distance`` in ``into`` (an existing,
        nearer distance is kept)."""

        def add(ref: _Ref) -> None:
            mine = into.get(ref.entry)
            if mine is None:
                into[ref.entry] = {(ref.secondary, ref.key): distance}
            else:
                mine.setdefault((ref.secondary, ref.key), distance)

        self._cs.scan(text, add)
        self._ci.scan(text.lower(), add)

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
        out: set[str] = set()

        def add(ref: _Ref) -> None:
            category, word = self._cue_names[ref.entry].split("\x1f")
            out.update((category, word))

        self._cues.scan(text.lower(), add)
        return out


@dataclass(frozen=True)
class Activated:
    """One activated entry: why (``constant``, ``sticky``, ``keyword``, ``recursion``,
    ``temporal``, ``emotional``), its relevance score and its tokens."""

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


def activate(
    book: CompiledBook,
    messages: Sequence[str],
    *,
    clock: int,
    timed: Mapping[str, tuple[int, int]],
    rng: random.Random,
    count_tokens: Callable[[str], int],
    today: date,
    now_ms: int,
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
    """
    settings = book.settings
    entries = book.entries
    deepest = max(settings.scan_depth, book.deepest)
    window = list(messages[max(0, len(messages) - deepest):]) if deepest else []
    # per distance from the end (1 = last message): key hits
    chat_hits: dict[int, dict[tuple[bool, int], int]] = {}
    newest_first = window[::-1]
    for distance, text in enumerate(newest_first, start=1):
        book.scan_into(text, distance, chat_hits)
    for ref, distance in book.regex_hits(newest_first):
        chat_hits.setdefault(ref.entry, {}).setdefault((ref.secondary, ref.key), distance)
    emotions = book.emotions("\n".join(window[max(0, len(window) - settings.scan_depth):])) if settings.scan_depth else set()

    def keyword_ok(i: int, hits: Mapping[tuple[bool, int], int]) -> bool:
        entry = entries[i]
        depth = settings.scan_depth if entry.scan_depth is None else entry.scan_depth
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

    def blocked(entry: LoreEntry) -> bool:
        if clock < entry.delay:
            return True
        sticky_until, cooldown_until = timed.get(entry.id, (0, 0))
        if not cooldown_until:
            return False
        began = sticky_until or cooldown_until - entry.cooldown  # a resent turn is not blocked
        return began < clock <= cooldown_until

    sticky_now = {
        book.index[key] for key, (until, _) in timed.items() if key in book.index and until >= clock
    }
    emotional_hits = {i for cue in emotions for i in book.emotional.get(cue, ())}

    taken: list[Activated] = []
    taken_ix: set[int] = set()
    considered: set[int] = set()
    groups_done: set[str] = set()
    per_type: dict[str, int] = {}
    used = 0
    overflow = False
    new_timed: TimedState = {}

    def candidates_first_pass() -> dict[int, str]:
        found: dict[int, str] = {}
        for i in sticky_now:
            found[i] = "sticky"
        for i in book.constants:
            found.setdefault(i, "constant")
        for i, hits in chat_hits.items():
            if not entries[i].delay_until_recursion and keyword_ok(i, hits):
                found.setdefault(i, "keyword")
        for i in book.dated:
            if _date_matches(entries[i].dates, today):
                found.setdefault(i, "temporal")
        for i in emotional_hits:
            if entries[i].trigger_type == "emotional":
                found.setdefault(i, "emotional")
        return found

    found = candidates_first_pass()
    for step in range(settings.max_recursion + 1):
        fresh = {i: why for i, why in found.items() if i not in considered}
        considered.update(fresh)
        pool: list[tuple[int, str, float]] = []
        for i, why in fresh.items():
            entry = entries[i]
            if why != "sticky":
                if blocked(entry) or not rng.random() * 100 < entry.probability:
                    continue
            score = _relevance(entry, now_ms, i in emotional_hits)
            if why not in ("constant", "sticky") and score < settings.relevance_threshold:
                continue
            pool.append((i, why, score))
        pool = _groups(pool, entries, groups_done, rng)
        pool.sort(key=lambda p: (p[1] not in ("constant", "sticky"), -entries[p[0]].priority, -p[2], p[0]))
        added: list[int] = []
        for i, why, score in pool:
            if overflow:
                break
            entry = entries[i]
            cap = settings.max_per_type.get(entry.type)
            if cap is not None and per_type.get(entry.type, 0) >= cap:
                continue
            tokens = book.tokens(i, count_tokens)
            if used + tokens > settings.budget_tokens:
                overflow = True
                break
            used += tokens
            per_type[entry.type] = per_type.get(entry.type, 0) + 1
            taken.append(Activated(entry, why, score, tokens))
            taken_ix.add(i)
            added.append(i)
            if entry.group:
                groups_done.add(entry.group)
            if why != "sticky" and (entry.sticky or entry.cooldown):
                until = clock + entry.sticky if entry.sticky else 0
                new_timed[entry.id] = (until, (until or clock) + entry.cooldown if entry.cooldown else 0)
        if overflow or step == settings.max_recursion:
            break
        text = "\n".join(entries[i].content for i in added if not entries[i].prevent_recursion)
        if not text:
            break
        found = {}
        for i, keys in book.hits(text).items():
            if i in considered or entries[i].exclude_recursion:
                continue
            merged = {k: 0 for k in keys}
            for k, d in chat_hits.get(i, {}).items():
                merged.setdefault(k, d)
            if keyword_ok(i, merged):
                found[i] = "recursion"
        if not found:
            break

    expired = tuple(
        key for key, (sticky_until, cooldown_until) in timed.items()
        if key not in new_timed and max(sticky_until, cooldown_until) < clock
    )
    ordered = tuple(sorted(taken, key=lambda a: a.entry.priority))
    return Activation(ordered, new_timed, expired, overflow)


def _groups(
    pool: list[tuple[int, str, float]], entries: Sequence[LoreEntry], done: set[str], rng: random.Random
) -> list[tuple[int, str, float]]:
    """Keep one entry per inclusion group (module docstring, rule 8)."""
    grouped: dict[str, list[tuple[int, str, float]]] = {}
    out = []
    for item in pool:
        group = entries[item[0]].group
        if not group:
            out.append(item)
        elif group not in done:
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
