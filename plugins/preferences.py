"""User preferences from profile memories (seed 000 P3 ``extractUserPreferences``), sans-IO.

Kinds (seed 000 ``UserPreference.type``): ``technical_depth`` (beginner | expert),
``response_length`` (concise | detailed), ``code_style`` (commented | minimal),
``language`` (free text, e.g. 中文, English), plus free-form kinds.

Sources, per memory of type ``preference`` or ``trait``:

1. structured: ``metadata.preference`` = ``{"type": ..., "value": ...}`` or a list of
   them (what an extractor or the REST API can store; any ``type`` allowed: free-form);
2. otherwise rule-based cues in the text, Chinese from seed 000 (新手/初学者, 专家/资深,
   简洁/简短, 详细/完整, 注释/解释代码) plus English equivalents and their negations
   ("不要注释", "no comments" -> minimal, checked before the positive cue).

Conflicts: the newest memory wins (``updated_at``), per kind (:func:`resolve`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.chain.sdk import MemoryRecord
from plugins.prompts import FREE_FORM_LINE, LANGUAGE_LINE, PERSONALIZATION, PERSONALIZATION_HEADER, Language

__all__ = ['CUES', 'KNOWN_ORDER', 'LANGUAGE_PATTERNS', 'Preference', 'cue_preferences', 'extract_preferences', 'render_personalization', 'resolve']

KNOWN_ORDER = ("technical_depth", "response_length", "code_style", "language")

#: (kind, value, cues) in priority order: within a kind the first matching rule wins.
CUES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("technical_depth", "beginner", ("新手", "初学者", "入门", "beginner", "novice", "new to programming", "just started learning")),
    ("technical_depth", "expert", ("专家", "资深", "expert", "senior engineer", "senior developer", "experienced developer", "advanced user")),
    ("response_length", "concise", ("简洁", "简短", "简明", "concise", "brief", "short answers", "to the point", "terse")),
    ("response_length", "detailed", ("详细", "完整", "detailed", "thorough", "in-depth", "in depth", "step by step", "comprehensive")),
    ("code_style", "minimal", ("不要注释", "无需注释", "不需要注释", "no comments", "without comments", "minimal comments")),
    ("code_style", "commented", ("注释", "解释代码", "comments", "commented code", "annotated code")),
)
LANGUAGE_PATTERNS = (
    re.compile(r"(?:answer|reply|respond|write|speak|talk)s?\s+(?:to (?:me|them)\s+)?in\s+([a-z]+)"),
    re.compile(r"用\s*([^\s，。,]{1,6}?)\s*(?:回答|回复|交流|沟通)"),
)


@dataclass(frozen=True)
class Preference:
    """One preference and the memory it came from."""

    type: str
    value: str
    source: str
    updated_at: datetime


def _language(text: str) -> str | None:
    for pattern in LANGUAGE_PATTERNS:
        match = pattern.search(text)
        if match:
            value = match.group(1)
            return value.capitalize() if value.isascii() else value
    return None


def cue_preferences(text: str) -> list[tuple[str, str]]:
    """``[(kind, value)]`` the rule-based cues find in ``text`` (one value per kind)."""
    lowered = text.lower()
    found: dict[str, str] = {}
    for kind, value, cues in CUES:
        if kind not in found and any(cue in lowered for cue in cues):
            found[kind] = value
    language = _language(lowered)
    if language:
        found["language"] = language
    return list(found.items())


def _structured(record: MemoryRecord) -> list[tuple[str, str]]:
    raw = record.metadata.get("preference")
    items = raw if isinstance(raw, list) else [raw]
    return [
        (str(p["type"]), str(p["value"]))
        for p in items
        if isinstance(p, dict) and p.get("type") and p.get("value") is not None
    ]


def extract_preferences(records: Iterable[MemoryRecord]) -> list[Preference]:
    """Every preference the records state (structured first, else cues), in input order."""
    out: list[Preference] = []
    for record in records:
        pairs = _structured(record) or cue_preferences(record.text)
        out.extend(Preference(kind, value, record.id, record.updated_at) for kind, value in pairs)
    return out


def resolve(preferences: Sequence[Preference]) -> dict[str, Preference]:
    """One preference per kind: the newest (``updated_at``; ties: the later in input)."""
    chosen: dict[str, Preference] = {}
    for pref in sorted(preferences, key=lambda p: p.updated_at):
        chosen[pref.type] = pref
    return chosen


def render_personalization(chosen: dict[str, Preference], language: Language) -> str | None:
    """Seed 000 ``getPersonalizationPrompt``: the header and one line per preference that
    has one (``intermediate`` / ``balanced`` have none); None when no line applies."""
    lines = []
    table = PERSONALIZATION[language]
    free = sorted(k for k in chosen if k not in KNOWN_ORDER)
    for kind in (*KNOWN_ORDER, *free):
        pref = chosen.get(kind)
        if pref is None:
            continue
        if kind == "language":
            lines.append(LANGUAGE_LINE[language].format(value=pref.value))
        elif kind in KNOWN_ORDER:
            line = table.get((kind, pref.value))
            if line:
                lines.append(line)
        else:
            lines.append(FREE_FORM_LINE[language].format(type=kind, value=pref.value))
    if not lines:
        return None
    return "\n".join([PERSONALIZATION_HEADER[language], *lines])
