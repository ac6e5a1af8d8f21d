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
  ``/pattern/flags`` is a regular expression when it compiles (flags ``i``, ``m``, ``s``),
  else plain. Regex keys run on RE2 (``google-re2``): matching time is linear in the text
  whatever the pattern, so a key such as ``/(a|a)+$/`` cannot stall the gateway. RE2 has
  no lookaround, backreferences or repetition counts over 1000; a key that needs them is
  refused where a client sends it (:func:`regex_key_problem`, a 400). JavaScript's
  ``\\uXXXX`` / ``\\u{X}`` escapes are read as RE2's ``\\x{X}``.
- Sizes a client may store (:func:`book_problem`, checked before anything is written):
  :data:`MAX_ENTRIES` entries per book, :data:`MAX_KEYS_PER_ENTRY` keys (primary and
  secondary together) per entry, :data:`MAX_KEY_CHARS` characters per key,
  :data:`MAX_KEYS_PER_BOOK` keys and :data:`MAX_REGEX_KEYS` regex keys per book.
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
from collections.abc import Iterable
from typing import Annotated, Any, Literal

import re2
import regex
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

__all__ = [
    "ENTRY_TYPES",
    "MAX_ENTRIES",
    "MAX_KEYS_PER_BOOK",
    "MAX_KEYS_PER_ENTRY",
    "MAX_KEY_CHARS",
    "MAX_REGEX_KEYS",
    "POSITIONS",
    "LoreEntry",
    "Lorebook",
    "book_problem",
    "entry_problem",
    "parse_regex_key",
    "regex_key_problem",
]

#: Entries of one book (``python -m bench worldbook`` measures activation at 10,000).
MAX_ENTRIES = 10_000
#: Keys of one entry, primary and secondary together.
MAX_KEYS_PER_ENTRY = 100
#: Characters of one key (plain or ``/regex/``).
MAX_KEY_CHARS = 1000
#: Keys of one book, over all its entries (compiling is linear in them).
MAX_KEYS_PER_BOOK = 50_000
#: Regex keys of one book: each is one linear pass over the scanned text per request, so
#: this bounds a request's regex work at ``MAX_REGEX_KEYS`` x the scanned characters per book.
MAX_REGEX_KEYS = 200

EntryType = Literal["episodic", "semantic", "trait", "goal"]
ENTRY_TYPES: tuple[str, ...] = ("episodic", "semantic", "trait", "goal")
TriggerType = Literal["keyword", "semantic", "temporal", "emotional"]
SelectiveLogic = Literal["and_any", "not_all", "not_any", "and_all"]
Position = Literal["before_char", "after_char", "system", "depth"]
POSITIONS: tuple[str, ...] = ("before_char", "after_char", "system", "depth")
Role = Literal["system", "user", "assistant"]

_REGEX_KEY = re.compile(r"^/(.+)/([a-z]*)$", re.S)


def _re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is the caller's answer, not a log line
    return options


_RE2_OPTIONS = _re2_options()
#: JavaScript escapes RE2 spells otherwise: ``\uXXXX`` and ``\u{X...}`` -> ``\x{...}``;
#: every other escape pair (``\\`` included) is kept as it is.
_JS_ESCAPE = re.compile(r"\\(?:u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|.)", re.S)


def _re2_syntax(body: str) -> str:
    return _JS_ESCAPE.sub(lambda m: "\\x{" + (m.group(1) or m.group(2)) + "}" if m.group(1) or m.group(2)
                          else m.group(0), body)


def _split_regex_key(key: str) -> tuple[str, str] | None:
    """``(pattern, RE2 inline flags)`` of a ``/pattern/flags`` key with known flags, else None."""
    found = _REGEX_KEY.match(key)
    if not found or any(flag not in "imsgu" for flag in found.group(2)):
        return None
    inline = "".join(flag for flag in "ims" if flag in found.group(2))
    return found.group(1), f"(?{inline})" if inline else ""


def parse_regex_key(key: str) -> Any | None:
    """The compiled RE2 pattern of a ``/pattern/flags`` key (``.search(text)`` gives a
    match with ``.start()`` in characters), None for a plain key.

    As in SillyTavern (*World Info > Regular Expression as Keys*: "If a defined key is a
    valid regex ... it will be treated as such"), a key that looks like a regex but does
    not compile, or has a flag other than ``i``, ``m``, ``s``, ``g``, ``u`` (``g``/``u``
    are no-ops here), is a plain key. A stored key RE2 cannot run (written before keys
    were checked, :func:`regex_key_problem`) is plain too: it never runs backtracking.
    """
    parts = _split_regex_key(key)
    if parts is None:
        return None
    body, inline = parts
    try:
        return re2.compile(inline + _re2_syntax(body), _RE2_OPTIONS)
    except (re2.error, ValueError, TypeError, OverflowError):
        return None


def regex_key_problem(key: str) -> str | None:
    """Why a client may not store ``key``: a ``/pattern/flags`` key that is a valid
    regular expression (Python ``regex``, the JavaScript subset lorebooks use) but that
    RE2 cannot run (lookaround, backreference, a repetition count over 1000, an
    unsupported escape); None when RE2 runs it or it is a plain key."""
    parts = _split_regex_key(key)
    if parts is None or parse_regex_key(key) is not None:
        return None
    body, inline = parts
    try:
        regex.compile(inline + body, regex.V0)
    except (regex.error, re.error, ValueError, OverflowError, RecursionError):
        return None  # not a regex at all: a plain key, as SillyTavern reads it
    try:
        re2.compile(inline + _re2_syntax(body), _RE2_OPTIONS)
    except (re2.error, ValueError, TypeError, OverflowError) as exc:
        detail = str(exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc)
    else:  # pragma: no cover - parse_regex_key compiled it
        return None
    return (f"regex key {key[:80]!r} uses a feature the linear-time regex engine (RE2) lacks ({detail}); "
            "lookaround, backreferences and repetition counts over 1000 are not supported")


def entry_problem(entry: LoreEntry, where: str) -> tuple[str, str] | None:
    """``(field, message)`` for the first limit ``entry`` breaks (module docstring), the
    field named from ``where`` (e.g. ``entries.7``; empty: the entry is the whole body, as
    in ``PUT .../entries/{id}``); None when it is within them."""
    def at(name: str) -> str:
        return f"{where}.{name}" if where else name

    keys = len(entry.keywords) + len(entry.secondary_keys)
    if keys > MAX_KEYS_PER_ENTRY:
        return (at("keywords"), f"{where or 'the entry'} has {keys} keys (primary and secondary); the limit is "
                f"{MAX_KEYS_PER_ENTRY}")
    for name, values in (("keywords", entry.keywords), ("secondaryKeys", entry.secondary_keys)):
        for i, key in enumerate(values):
            if len(key) > MAX_KEY_CHARS:
                return at(f"{name}.{i}"), f"{at(f'{name}.{i}')} has {len(key)} characters; the limit is {MAX_KEY_CHARS}"
            problem = regex_key_problem(key)
            if problem is not None:
                return at(f"{name}.{i}"), f"{at(f'{name}.{i}')}: {problem}"
    return None


def book_problem(entries: Iterable[tuple[str, LoreEntry]]) -> tuple[str, str] | None:
    """``(field, message)`` for the first limit a book of ``entries`` (``(where, entry)``
    pairs, ``where`` naming the entry in the client's document) breaks; None when none.
    Linear in the keys; stops at the first problem."""
    count = keys = regexes = 0
    for where, entry in entries:
        count += 1
        if count > MAX_ENTRIES:
            return "entries", f"the book has more than {MAX_ENTRIES} entries; the limit is {MAX_ENTRIES}"
        problem = entry_problem(entry, where)
        if problem is not None:
            return problem
        keys += len(entry.keywords) + len(entry.secondary_keys)
        if keys > MAX_KEYS_PER_BOOK:
            return "entries", f"the book has more than {MAX_KEYS_PER_BOOK} keys; the limit is {MAX_KEYS_PER_BOOK}"
        regexes += sum(1 for key in (*entry.keywords, *entry.secondary_keys) if _REGEX_KEY.match(key))
        if regexes > MAX_REGEX_KEYS:
            return (f"{where}.keywords", f"the book has more than {MAX_REGEX_KEYS} regex keys (at {where}); "
                    f"the limit is {MAX_REGEX_KEYS}")
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
