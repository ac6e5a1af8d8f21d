"""A world-book entry: seed 001's ``MemoryTriggerEntry`` plus SillyTavern World Info fields.

Field names follow seed 001's ``MemoryTriggerEntry`` where it has the field (``keywords``,
``triggerType``, ``priority``, ``isConstant``, ``relevanceWeight``, ``emotionalWeight``,
``timeDecayFactor``, ``relatedTopics``, ``emotionalContext``, ``timestamp``; JSON uses the
seed's camelCase, Python the snake_case name), and SillyTavern's World Info entry for
the rest (``secondaryKeys``, ``selectiveLogic``, ``caseSensitive``, ``matchWholeWords``,
``probability``, ``group``/``groupWeight``/``groupOverride``, ``sticky``/``cooldown``/
``delay``, ``position``/``depth``/``role``, recursion flags). Source of each rule:
SillyTavern's documentation, "World Info" (docs.sillytavern.app/usage/core-concepts/worldinfo).

- ``keywords`` are the primary keys: any one matching activates the entry; a key written
  ``/pattern/flags`` is a regular expression when it compiles (flags ``i``, ``m``, ``s``;
  Python ``re`` syntax, which covers the JavaScript subset lorebooks use), else plain.
- ``secondaryKeys`` with ``selectiveLogic`` (the "Optional Filter"): ``and_any`` (a
  primary and any secondary), ``and_all`` (a primary and all secondaries), ``not_any``
  (a primary and no secondary), ``not_all`` (not when all secondaries match). Empty:
  ignored.
- ``priority`` is SillyTavern's ``order`` (insertion order): higher goes later in the
  prompt (closer to the end: more impact) and wins budget and inclusion-group ties.
- ``sticky`` / ``cooldown`` / ``delay`` count chat messages (0: off).
- ``dates`` (temporal trigger): ``MM-DD`` (every year) or ``YYYY-MM-DD``.
- ``caseSensitive`` / ``matchWholeWords`` / ``scanDepth``: None uses the plugin's
  default.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

__all__ = [
    "ENTRY_TYPES",
    "POSITIONS",
    "LoreEntry",
    "Lorebook",
    "parse_regex_key",
]

EntryType = Literal["episodic", "semantic", "trait", "goal"]
ENTRY_TYPES: tuple[str, ...] = ("episodic", "semantic", "trait", "goal")
TriggerType = Literal["keyword", "semantic", "temporal", "emotional"]
SelectiveLogic = Literal["and_any", "not_all", "not_any", "and_all"]
Position = Literal["before_char", "after_char", "system", "depth"]
POSITIONS: tuple[str, ...] = ("before_char", "after_char", "system", "depth")
Role = Literal["system", "user", "assistant"]

_REGEX_KEY = re.compile(r"^/(.+)/([a-z]*)$", re.S)


def parse_regex_key(key: str) -> regex.Pattern[str] | None:
    """The compiled pattern of a ``/pattern/flags`` key, None for a plain key.

    As in SillyTavern (*World Info > Regular Expression as Keys*: "If a defined key is a
    valid regex ... it will be treated as such"), a key that looks like a regex but does
    not compile, or has a flag other than ``i``, ``m``, ``s``, ``g``, ``u`` (``g``/``u``
    are no-ops here), is a plain key.

    Compiled with the ``regex`` package in its ``re``-compatible mode (V0): the same
    syntax and matches as ``re``, but a case-insensitive pattern keeps the literal-prefix
    search (``/dragons?/i`` over 3,000 characters: 3 us instead of ``re``'s 75 us).
    """
    found = _REGEX_KEY.match(key)
    if not found:
        return None
    flags = regex.V0
    for flag in found.group(2):
        if flag not in "imsgu":
            return None
        flags |= {"i": regex.I, "m": regex.M, "s": regex.S}.get(flag, 0)
    try:
        return regex.compile(found.group(1), flags)
    except (regex.error, re.error, ValueError, OverflowError):
        return None


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class LoreEntry(_Model):
    """One entry (module docstring for the rules)."""

    id: str = Field(min_length=1, max_length=200)
    content: str = Field(max_length=100_000)
    type: EntryType = "semantic"
    keywords: tuple[str, ...] = ()
    secondary_keys: tuple[str, ...] = ()
    selective_logic: SelectiveLogic = "and_any"
    trigger_type: TriggerType = "keyword"
    is_constant: bool = False
    priority: int = 100
    probability: int = Field(100, ge=0, le=100)
    enabled: bool = True
    case_sensitive: bool | None = None
    match_whole_words: bool | None = None
    scan_depth: int | None = Field(None, ge=0, le=1000)
    group: str = ""
    group_weight: int = Field(100, ge=1)
    group_override: bool = False
    sticky: int = Field(0, ge=0)
    cooldown: int = Field(0, ge=0)
    delay: int = Field(0, ge=0)
    exclude_recursion: bool = False
    prevent_recursion: bool = False
    delay_until_recursion: bool = False
    position: Position = "after_char"
    depth: int = Field(4, ge=0, le=10_000)
    role: Role = "system"
    relevance_weight: float = Field(1.0, ge=0)
    emotional_weight: float = Field(0.0, ge=0)
    time_decay_factor: float = Field(0.0, ge=0)
    related_topics: tuple[str, ...] = ()
    emotional_context: tuple[str, ...] = ()
    dates: tuple[Annotated[str, Field(pattern=r"^(\d{4}-)?\d{2}-\d{2}$")], ...] = Field(
        (), description="Temporal trigger dates: MM-DD (every year) or YYYY-MM-DD.")
    timestamp: int | None = Field(None, description="Creation time, ms since the epoch (seed 001).")
    comment: str = ""

    @field_validator("keywords", "secondary_keys")
    @classmethod
    def _keys(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(k for k in keys if k.strip())



class Lorebook(_Model):
    """A named set of entries owned by a role (``friend_id``) and, when ``user_id`` is
    set, by one user only (else every user of the role sees it)."""

    id: str = Field(min_length=1, max_length=200)
    name: str = ""
    friend_id: str = Field(min_length=1, max_length=200)
    user_id: str | None = None
    entries: tuple[LoreEntry, ...] = ()
