"""SillyTavern World Info interop: import and export lorebooks.

Accepted input (:func:`import_lorebook`):

- a **world file** (SillyTavern's ``worlds/<name>.json``): ``{"entries": {"<uid>": {...}}}``
  with the fields of ``newWorldInfoEntryDefinition`` in SillyTavern's
  ``public/scripts/world-info.js``;
- a **Character Card V2** (``spec: chara_card_v2``) or **V3** (``chara_card_v3``) JSON, or
  its bare ``character_book`` (``{"entries": [...]}``; the character-card-spec-v2 /
  -v3 fields, with SillyTavern's own settings under each entry's ``extensions``);
- a **PNG** character card: the base64 JSON of its ``ccv3`` (preferred) or ``chara``
  ``tEXt`` chunk.

Every field the engine supports is mapped (:class:`~gateway.lorebook.model.LoreEntry`);
the others are counted in :attr:`Imported.ignored` (``field -> entries``), and positions
the gateway cannot honour (Author's Note, example messages, outlets) are mapped to
``after_char`` and listed in :attr:`Imported.notes`. SillyTavern's ``vectorized`` flag
(a world-file entry's ``vectorized``, a card entry's ``extensions.vectorized``: the entry
is matched by its Vector Storage extension) is seed 001's ``triggerType`` ``semantic``,
both ways. Seed 001 fields SillyTavern lacks
(``type``, ``triggerType``, weights, topics, dates...) travel in each exported entry's
``memgate`` object, which this importer reads back: export then import is lossless for
every field the engine uses.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from gateway.lorebook.model import Lorebook, LoreEntry

__all__ = ["Imported", "LorebookFormatError", "export_world_info", "import_lorebook", "parse_upload"]

#: SillyTavern ``world_info_logic``: AND_ANY 0, NOT_ALL 1, NOT_ANY 2, AND_ALL 3.
LOGIC = ("and_any", "not_all", "not_any", "and_all")
#: SillyTavern ``world_info_position``: 0 before, 1 after, 2/3 Author's Note top/bottom,
#: 4 at depth, 5/6 example messages top/bottom, 7 outlet.
POSITION_NAMES = {2: "Author's Note top", 3: "Author's Note bottom", 5: "example messages top",
                  6: "example messages bottom", 7: "outlet"}
ROLES = ("system", "user", "assistant")
#: The world-file fields mapped onto the model.
WORLD_FIELDS = frozenset({
    "uid", "key", "keysecondary", "comment", "content", "constant", "selectiveLogic", "order",
    "position", "disable", "excludeRecursion", "preventRecursion", "delayUntilRecursion",
    "probability", "useProbability", "depth", "group", "groupOverride", "groupWeight", "scanDepth",
    "caseSensitive", "matchWholeWords", "role", "sticky", "cooldown", "delay", "memgate", "vectorized",
})
#: Character-book entry fields (spec v2/v3) mapped onto the model.
CARD_FIELDS = frozenset({
    "id", "keys", "secondary_keys", "comment", "content", "constant", "insertion_order", "enabled",
    "case_sensitive", "position", "extensions", "use_regex", "name",
})
#: SillyTavern's settings under a character-book entry's ``extensions`` (snake_case).
CARD_EXTENSIONS = frozenset({
    "position", "exclude_recursion", "prevent_recursion", "delay_until_recursion", "probability",
    "useProbability", "depth", "selectiveLogic", "group", "group_override", "group_weight",
    "scan_depth", "case_sensitive", "match_whole_words", "role", "sticky", "cooldown", "delay", "memgate",
    "vectorized",
})
SEED_FIELDS = ("type", "trigger_type", "relevance_weight", "emotional_weight", "time_decay_factor",
               "related_topics", "emotional_context", "dates", "timestamp")


class LorebookFormatError(ValueError):
    """The input is not a lorebook this module reads (message says why)."""


@dataclass
class Imported:
    """A parsed lorebook: its ``name``, the entries, ignored fields and notes."""

    name: str
    entries: list[LoreEntry]
    ignored: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Where each entry is in the input (``entries.<uid>`` / ``entries.<n>``), for errors.
    places: list[str] = field(default_factory=list)


def parse_upload(raw: bytes) -> Any:
    """The JSON document in ``raw``: JSON text, or a PNG card's ``ccv3``/``chara`` chunk.

    Raises:
        LorebookFormatError: neither JSON nor a PNG with a card chunk.
    """
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return json.loads(_png_card(raw))
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LorebookFormatError(f"not JSON: {exc}") from None


def _png_card(raw: bytes) -> bytes:
    chunks: dict[bytes, bytes] = {}
    at = 8
    while at + 8 <= len(raw):
        (length,) = struct.unpack(">I", raw[at:at + 4])
        kind = raw[at + 4:at + 8]
        data = raw[at + 8:at + 8 + length]
        if kind == b"tEXt":
            keyword, _, text = data.partition(b"\x00")
            chunks[keyword.lower()] = text
        if kind == b"IEND":
            break
        at += 12 + length
    card = chunks.get(b"ccv3") or chunks.get(b"chara")
    if card is None:
        raise LorebookFormatError("PNG without a ccv3 or chara character-card chunk")
    try:
        return base64.b64decode(card, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise LorebookFormatError(f"PNG card chunk is not base64: {exc}") from None


def import_lorebook(document: Any) -> Imported:
    """Entries of a world file, a V2/V3 card or a ``character_book`` (module docstring).

    Raises:
        LorebookFormatError: not one of those shapes, or an entry is invalid (the
            message names the entry and the field).
    """
    if not isinstance(document, dict):
        raise LorebookFormatError("expected a JSON object")
    name = str(document.get("name") or "")
    if document.get("spec") in ("chara_card_v2", "chara_card_v3"):
        data = document.get("data") or {}
        book = data.get("character_book")
        if not isinstance(book, dict):
            raise LorebookFormatError("the character card has no character_book")
        return _card_book(book, str(book.get("name") or data.get("name") or ""))
    entries = document.get("entries")
    if isinstance(entries, list):
        return _card_book(document, name)
    if isinstance(entries, dict):
        imported = Imported(name, [])
        counts: Counter[str] = Counter()
        for uid, raw in entries.items():
            if not isinstance(raw, dict):
                raise LorebookFormatError(f"entries.{uid}: expected an object")
            imported.entries.append(_entry(f"entries.{uid}", _world_fields(raw, uid, imported.notes)))
            imported.places.append(f"entries.{uid}")
            counts.update(k for k in raw if k not in WORLD_FIELDS)
        imported.ignored = dict(sorted(counts.items()))
        return imported
    raise LorebookFormatError("no entries: expected a world file, a character card or a character_book")


def _entry(where: str, fields: dict[str, Any]) -> LoreEntry:
    try:
        return LoreEntry.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = ".".join(str(p) for p in first["loc"])
        raise LorebookFormatError(f"{where}.{path}: {first['msg']}") from None


def _position(value: Any, where: str, notes: list[str]) -> str:
    if value in (0, "before_char"):
        return "before_char"
    if value == 4:
        return "depth"
    if value in POSITION_NAMES:
        notes.append(f"{where}: position {POSITION_NAMES[value]} is not supported; injected after_char")
    return "after_char"


def _common(raw: dict[str, Any], get: Any, fields: dict[str, Any]) -> None:
    logic = get("selectiveLogic")
    if isinstance(logic, int) and 0 <= logic < len(LOGIC):
        fields["selective_logic"] = LOGIC[logic]
    use_probability = get("useProbability")
    probability = get("probability")
    if probability is not None and use_probability is not False:
        fields["probability"] = probability
    role = get("role")
    if isinstance(role, int) and 0 <= role < len(ROLES):
        fields["role"] = ROLES[role]
    for name in ("sticky", "cooldown", "delay"):
        value = get(name)
        fields[name] = int(value or 0)
    if get("vectorized") is True:
        fields["trigger_type"] = "semantic"
    memgate = raw.get("memgate") or get("memgate")
    if isinstance(memgate, dict):
        for name in SEED_FIELDS:
            if memgate.get(name) is not None:
                fields[name] = memgate[name]


def _world_fields(raw: dict[str, Any], uid: str, notes: list[str]) -> dict[str, Any]:
    where = f"entries.{uid}"
    fields: dict[str, Any] = {
        "id": str(raw.get("uid") if raw.get("uid") not in (None, "") else uid)[:200] or "e",
        "content": raw.get("content") or "",
        "keywords": raw.get("key") or [],
        "secondary_keys": raw.get("keysecondary") or [],
        "comment": raw.get("comment") or "",
        "is_constant": bool(raw.get("constant")),
        "priority": int(raw.get("order", 100) or 0),
        "position": _position(raw.get("position", 0), where, notes),
        "enabled": not raw.get("disable", False),
        "exclude_recursion": bool(raw.get("excludeRecursion")),
        "prevent_recursion": bool(raw.get("preventRecursion")),
        "delay_until_recursion": bool(raw.get("delayUntilRecursion")),
        "group": raw.get("group") or "",
        "group_override": bool(raw.get("groupOverride")),
        "group_weight": raw.get("groupWeight") or 100,
        "scan_depth": raw.get("scanDepth"),
        "case_sensitive": raw.get("caseSensitive"),
        "match_whole_words": raw.get("matchWholeWords"),
    }
    if raw.get("depth") is not None:
        fields["depth"] = raw["depth"]
    _common(raw, raw.get, fields)
    return fields


def _card_book(book: dict[str, Any], name: str) -> Imported:
    imported = Imported(name, [])
    counts: Counter[str] = Counter()
    for n, raw in enumerate(book.get("entries") or []):
        if not isinstance(raw, dict):
            raise LorebookFormatError(f"entries.{n}: expected an object")
        found = raw.get("extensions")
        ext: dict[str, Any] = found if isinstance(found, dict) else {}
        where = f"entries.{n}"
        keys = list(raw.get("keys") or [])
        secondary = list(raw.get("secondary_keys") or [])
        if raw.get("use_regex"):
            keys = [k if k.startswith("/") else f"/{k}/" for k in keys]
            secondary = [k if k.startswith("/") else f"/{k}/" for k in secondary]
        position = ext["position"] if "position" in ext else raw.get("position", "before_char")
        fields: dict[str, Any] = {
            "id": str(raw.get("id") if raw.get("id") not in (None, "") else n)[:200],
            "content": raw.get("content") or "",
            "keywords": keys,
            "secondary_keys": secondary,
            "comment": raw.get("comment") or raw.get("name") or "",
            "is_constant": bool(raw.get("constant")),
            "priority": int(raw.get("insertion_order", 100) or 0),
            "enabled": raw.get("enabled", True) is not False,
            "position": _position(position, where, imported.notes),
            "exclude_recursion": bool(ext.get("exclude_recursion")),
            "prevent_recursion": bool(ext.get("prevent_recursion")),
            "delay_until_recursion": bool(ext.get("delay_until_recursion")),
            "group": ext.get("group") or "",
            "group_override": bool(ext.get("group_override")),
            "group_weight": ext.get("group_weight") or 100,
            "scan_depth": ext.get("scan_depth"),
            "case_sensitive": ext.get("case_sensitive", raw.get("case_sensitive")),
            "match_whole_words": ext.get("match_whole_words"),
        }
        if ext.get("depth") is not None:
            fields["depth"] = ext["depth"]
        _common(raw, ext.get, fields)
        imported.entries.append(_entry(where, fields))
        imported.places.append(where)
        counts.update(k for k in raw if k not in CARD_FIELDS)
        counts.update(f"extensions.{k}" for k in ext if k not in CARD_EXTENSIONS)
    imported.ignored = dict(sorted(counts.items()))
    return imported


def export_world_info(book: Lorebook) -> dict[str, Any]:
    """``book`` as a SillyTavern world file (``{"entries": {"<uid>": {...}}}``), seed 001
    fields in each entry's ``memgate`` object (module docstring)."""
    entries: dict[str, Any] = {}
    for n, entry in enumerate(book.entries):
        uid: Any = int(entry.id) if entry.id.isdigit() else entry.id
        entries[str(uid)] = {
            "uid": uid,
            "key": list(entry.keywords),
            "keysecondary": list(entry.secondary_keys),
            "comment": entry.comment,
            "content": entry.content,
            "constant": entry.is_constant,
            "selective": bool(entry.secondary_keys),
            "selectiveLogic": LOGIC.index(entry.selective_logic),
            "order": entry.priority,
            "position": {"before_char": 0, "after_char": 1, "system": 1, "depth": 4}[entry.position],
            "disable": not entry.enabled,
            "excludeRecursion": entry.exclude_recursion,
            "preventRecursion": entry.prevent_recursion,
            "delayUntilRecursion": entry.delay_until_recursion,
            "probability": entry.probability,
            "useProbability": True,
            "depth": entry.depth,
            "group": entry.group,
            "groupOverride": entry.group_override,
            "groupWeight": entry.group_weight,
            "scanDepth": entry.scan_depth,
            "caseSensitive": entry.case_sensitive,
            "matchWholeWords": entry.match_whole_words,
            "role": ROLES.index(entry.role),
            "sticky": entry.sticky or None,
            "cooldown": entry.cooldown or None,
            "delay": entry.delay or None,
            "vectorized": entry.trigger_type == "semantic",
            "displayIndex": n,
            "memgate": {name: getattr(entry, name) for name in SEED_FIELDS},
        }
    return {"name": book.name, "entries": entries} if book.name else {"entries": entries}
