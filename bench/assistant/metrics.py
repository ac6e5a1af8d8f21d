"""Scoring a run of the assistant-chat benchmark (pure: no I/O).

Matching a memory text back to the turn it came from (:class:`TurnMatcher`): dates and
times are removed from the memory text (:data:`_DATES`: a memory keeps its date), then both
are cut into terms (lower-cased Latin words minus a few function words, and overlapping
character pairs of CJK runs, a lone CJK character as itself); the score of a turn is the
share of the memory's terms found in the turn's :attr:`~bench.assistant.dataset.Turn.source_text`
(containment: a memory may be a clause of the turn, or carry a date or the assistant's
question). The best turn wins (ties: the larger share of the turn's own terms covered,
then the earlier turn); a memory whose best score is under :data:`MATCH_FLOOR` matches an
assistant reply when one scores at least that (source ``assistant``), else nothing
(``unmatched``: text the gateway wrote itself).

Per probe (:func:`score_probe`):

- **recalled**: every fact in ``needs`` reaches the upstream: for each, the keys of the
  fact or of one of its repeats all occur (case-insensitive substring) in the injected
  text (:attr:`bench.assistant.prompt.Injected.text`: never the probe itself).
- **stale**: the probe lists ``stale`` strings and at least one occurs in the injected
  text (whether or not the current fact is there too); **stale_instead**: stale and not
  recalled.
- **duplicate lines**: items (memory, other and personalization sections) whose text,
  case-folded with whitespace collapsed, equals an earlier item's in the same prompt.
- **same-fact lines**: memory lines holding a fact (``fact_part``) whose source turn states
  only facts (by root: a repeat counts as its fact) an earlier such line already gave in
  the same prompt.

Pooled (:func:`summarize`, per group of probes): ``fact_recall`` = recalled / probes;
``junk_share`` = junk memory lines / all memory lines (sections memory + other), where a
line is junk when its source turn's kind is ``request`` or ``small_talk``, or when it
comes from a fact-bearing turn but holds no key of that turn's facts (the request part
of a ``fact_in_request`` turn kept without the fact: ``fact_turn_lines_without_fact``); ``stale_rate`` = stale probes / probes with
``stale`` strings; ``duplicate_lines`` = sum over probes. What was stored
(:func:`stored_summary`): each live (not retired) memory matched to a turn; per kind, the
turns that formed at least one live memory; a fact is stored when the keys of it or of a
repeat all occur in one live memory's text; a **false supersede** is a current fact (no
update replaced it) whose keys occur in a memory retired as superseded (``superseded_by``,
or a ``retired_reason`` that starts with "superseded") and in no live memory: a change
retired a memory it was not about.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.assistant.dataset import FACT_KINDS, JUNK_KINDS, KINDS, Turn, User
from bench.assistant.prompt import Injected

MATCH_FLOOR = 0.5
#: Dates and times a memory line may carry besides the user's words (``2025-03-02``,
#: ``2025/3/2``, ``2025年3月2日``, ``14:05``), removed before matching it to a turn.
_DATES = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?Z?)?|\d{4}年\d{1,2}月(?:\d{1,2}日)?"
                    r"|\b\d{1,2}:\d{2}\b")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
STOPWORDS = frozenset(
    "a an the to of and or in on at for with is am are was were be been it its i i'm me my we our you your "
    "he she they them his her their this that so just do does did have has had".split()
)


def terms(text: str) -> set[str]:
    """Latin words (minus :data:`STOPWORDS` unless nothing else is left) and CJK bigrams."""
    text = unicodedata.normalize("NFKC", text).casefold()
    words = _WORD.findall(text)
    kept = [w for w in words if w not in STOPWORDS] or words
    out = set(kept)
    for run in _CJK_RUN.findall(text):
        out.update([run] if len(run) == 1 else (run[i:i + 2] for i in range(len(run) - 1)))
    return out


def normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass(frozen=True)
class Source:
    """Where a memory text came from: ``kind`` is a turn kind, ``assistant`` or ``unmatched``."""

    kind: str
    turn: str | None = None
    score: float = 0.0
    roots: frozenset[str] = frozenset()
    #: for a fact-bearing turn: the text holds a key of one of its facts (not only the
    #: request or chatter around them)
    fact_part: bool = False


class TurnMatcher:
    """Maps memory texts of one user back to that user's turns (module docstring)."""

    def __init__(self, user: User) -> None:
        self.user = user
        self._turns: list[tuple[Turn, set[str]]] = [(t, terms(t.source_text)) for t in user.turns]
        self._replies: list[tuple[Turn, set[str]]] = [(t, terms(t.assistant)) for t in user.turns]

    def source(self, text: str) -> Source:
        line = terms(_DATES.sub(" ", text))
        if not line:
            return Source("unmatched")
        best: tuple[float, float, int] | None = None
        chosen: Turn | None = None
        for i, (turn, words) in enumerate(self._turns):
            common = len(line & words)
            rank = (common / len(line), common / max(len(words), 1), -i)
            if best is None or rank > best:
                best, chosen = rank, turn
        if best is not None and chosen is not None and best[0] >= MATCH_FLOOR:
            roots = frozenset(self.user.root(f.id) for f in chosen.facts)
            folded = text.casefold()
            part = any(k.casefold() in folded for f in chosen.facts for k in f.key)
            return Source(chosen.kind, chosen.id, round(best[0], 3), roots, part)
        reply = max((len(line & words) / len(line) for _, words in self._replies), default=0.0)
        if reply >= MATCH_FLOOR:
            return Source("assistant", None, round(reply, 3))
        return Source("unmatched", None, round(best[0] if best else 0.0, 3))


def fact_reached(user: User, fact_id: str, text: str) -> bool:
    """The keys of ``fact_id`` or of one of its repeats all occur in ``text``."""
    folded = text.casefold()
    return any(all(k.casefold() in folded for k in f.key) for f in user.statements(fact_id))


@dataclass
class ProbeResult:
    user: str
    lang: str
    split: str
    probe: str
    ask: str
    needs: list[str]
    recalled: bool
    missing: list[str]
    stale_keys: list[str]
    stale_hit: list[str]
    lines: list[dict[str, Any]] = field(default_factory=list)
    duplicate_lines: int = 0
    same_fact_lines: int = 0
    degraded: str | None = None

    @property
    def memory_lines(self) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["section"] != "personalization"]


def score_probe(user: User, probe_id: str, injected: Injected, matcher: TurnMatcher | None = None,
                degraded: str | None = None) -> ProbeResult:
    """One probe's figures from what was injected (module docstring)."""
    probe = next(p for p in user.probes if p.id == probe_id)
    matcher = matcher or TurnMatcher(user)
    missing = [n for n in probe.needs if not fact_reached(user, n, injected.text)]
    folded = injected.text.casefold()
    stale_hit = [s for s in probe.stale if s.casefold() in folded]
    lines: list[dict[str, Any]] = []
    seen_text: set[str] = set()
    seen_roots: set[str] = set()
    duplicates = same_fact = 0
    for line in injected.lines:
        key = normalize(line.text)
        if key in seen_text:
            duplicates += 1
        seen_text.add(key)
        row: dict[str, Any] = {"text": line.text, "section": line.section}
        if line.section != "personalization":
            src = matcher.source(line.text)
            row.update(kind=src.kind, turn=src.turn, match=src.score, fact_part=src.fact_part)
            if src.fact_part:
                if src.roots <= seen_roots:
                    same_fact += 1
                seen_roots |= src.roots
        lines.append(row)
    return ProbeResult(user.user, user.lang, user.split, probe.id, probe.ask, list(probe.needs), not missing, missing,
                       list(probe.stale), stale_hit, lines, duplicates, same_fact, degraded)


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


def summarize(results: Sequence[ProbeResult]) -> dict[str, Any]:
    """Pooled figures of ``results`` (module docstring)."""
    memory = [line for r in results for line in r.memory_lines]
    kinds = Counter(line["kind"] for line in memory)
    bare = sum(1 for line in memory if line["kind"] in FACT_KINDS and not line.get("fact_part"))
    junk = sum(kinds[k] for k in JUNK_KINDS) + bare
    with_stale = [r for r in results if r.stale_keys]
    stale = [r for r in with_stale if r.stale_hit]
    return {
        "users": len({r.user for r in results}),
        "probes": len(results),
        "fact_recall": _ratio(sum(r.recalled for r in results), len(results)),
        "recalled": sum(r.recalled for r in results),
        "probes_with_memory": sum(bool(r.memory_lines) for r in results),
        "memory_lines": len(memory),
        "junk_share": _ratio(junk, len(memory)),
        "junk_lines": junk,
        "fact_turn_lines_without_fact": bare,
        "lines_by_kind": dict(sorted(kinds.items())),
        "personalization_lines": sum(len(r.lines) - len(r.memory_lines) for r in results),
        "stale_probes": len(with_stale),
        "stale_rate": _ratio(len(stale), len(with_stale)),
        "stale_instead": _ratio(sum(not r.recalled for r in stale), len(with_stale)),
        "duplicate_lines": sum(r.duplicate_lines for r in results),
        "probes_with_duplicates": sum(r.duplicate_lines > 0 for r in results),
        "same_fact_lines": sum(r.same_fact_lines for r in results),
        "degraded_probes": sum(r.degraded is not None for r in results),
    }


def stored_summary(user: User, memories: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What one user's store holds (module docstring). ``memories``: records as the admin
    API lists them (``text``, ``scope``, ``type``, ``retired``, ``retired_reason``,
    ``superseded_by``)."""
    matcher = TurnMatcher(user)
    live = [m for m in memories if not m.get("retired")]
    retired = sum(1 for m in memories if m.get("retired"))
    formed: dict[str, set[str]] = {k: set() for k in KINDS}
    by_source: Counter[str] = Counter()
    profile_facts = fact_memories = 0
    for memory in live:
        src = matcher.source(str(memory.get("text", "")))
        by_source[src.kind] += 1
        if src.turn is not None:
            formed[src.kind].add(src.turn)
        if src.kind in FACT_KINDS:
            fact_memories += 1
            profile_facts += memory.get("scope") == "profile"
    turns = Counter(t.kind for t in user.turns)
    texts = [str(m.get("text", "")) for m in live]
    superseded = user.superseded()
    roots = {user.root(f) for f in user.facts}
    current = [r for r in roots if r not in superseded]
    replaced = [str(m.get("text", "")) for m in memories if m.get("retired") and (
        m.get("superseded_by") or str(m.get("retired_reason") or "").startswith("superseded"))]
    false_superseded = sum(any(fact_reached(user, r, t) for t in replaced) and not any(fact_reached(user, r, t) for t in texts)
                           for r in current)
    return {
        "memories": len(live), "retired": retired,
        "false_superseded": false_superseded,
        "memories_by_source": {k: by_source[k] for k in (*KINDS, "assistant", "unmatched") if by_source[k]},
        "turns": {k: turns[k] for k in KINDS if turns[k]},
        "turns_with_memory": {k: len(formed[k]) for k in KINDS if turns[k]},
        "facts": len(current),
        "facts_stored": sum(any(fact_reached(user, r, t) for t in texts) for r in current),
        "superseded_facts": len(superseded),
        "superseded_live": sum(any(fact_reached(user, r, t) for t in texts) for r in superseded),
        "fact_memories": fact_memories, "fact_memories_profile": profile_facts,
    }


def memory_rows(user: User, memories: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each memory (admin API record) with the turn it was matched to: ``id``, ``text``, ``scope``,
    ``type``, ``retired``, ``retired_reason``, ``superseded_by``, ``kind`` (turn kind, ``assistant`` or ``unmatched``), ``turn``."""
    matcher = TurnMatcher(user)
    rows = []
    for memory in memories:
        src = matcher.source(str(memory.get("text", "")))
        rows.append({"id": memory.get("id"), "text": memory.get("text"), "scope": memory.get("scope"), "type": memory.get("type"),
                     "retired": bool(memory.get("retired")), "retired_reason": memory.get("retired_reason"),
                     "superseded_by": memory.get("superseded_by"), "kind": src.kind, "turn": src.turn})
    return rows


def pool_stored(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Sums of :func:`stored_summary` rows (nested counters summed key by key)."""
    out: dict[str, Any] = {}
    for row in rows:
        for name, value in row.items():
            if isinstance(value, dict):
                into = out.setdefault(name, {})
                for k, v in value.items():
                    into[k] = into.get(k, 0) + v
            else:
                out[name] = out.get(name, 0) + value
    return out
