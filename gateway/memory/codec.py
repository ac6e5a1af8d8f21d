"""Record <-> Redis hash fields, shared by both backends (sans-IO).

Model fields are stored one per hash field (lists and dicts as JSON, datetimes as ISO 8601,
booleans as ``0``/``1``); ``None`` fields are absent. Extra *index fields* serve filtering:

- ``tu``: escaped user id and ``tp``: partition (``profile`` / ``event:<escaped friend>``),
  TAG fields of the search backend. Escaped values never contain the TAG separator ``,``.
- ``occurred_ts`` / ``created_ts``: Unix seconds (float), NUMERIC fields.
- ``live``: ``1`` unless retired, NUMERIC field.

One more field belongs to the store, not to the writer: ``followed_by``, the JSON list of
the ids of the records that follow this one (:data:`~gateway.memory.records.FOLLOWED_BY`),
added only by :meth:`gateway.memory.scripts.Batch.follow`. :func:`record_to_hash` leaves
``metadata.followed_by`` out (a rewrite neither writes nor erases the field) and
:func:`record_from_hash` puts the field into ``metadata``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence

from gateway.memory.ids import is_memory_id
from gateway.memory.keys import KeySpace, Partition, escape_key_part
from gateway.memory.records import FOLLOWED_BY, STORED, MemoryRecord

__all__ = [
    'MEMO_MAX_BYTES', 'OPTIONAL_FIELDS', 'PACK_FUNCTION', 'absent_fields', 'record_from_hash', 'record_from_packed',
    'record_from_reply', 'record_to_hash', 'unpack_fields',
]

_JSON_FIELDS = frozenset({"keywords", "based_on", "metadata"})
#: Every model field that may be absent (None) in a hash; a rewrite HDELs the absent ones.
OPTIONAL_FIELDS = tuple(
    name for name, info in MemoryRecord.model_fields.items() if not info.is_required()
)


def record_to_hash(record: MemoryRecord, keys: KeySpace) -> dict[str, str]:
    """Hash fields of ``record`` (see module docstring); None fields are left out, and so
    is ``metadata.followed_by`` (the store's own field)."""
    out: dict[str, str] = {}
    for name, value in record.model_dump(mode="json").items():
        if value is None:
            continue
        if name == "metadata" and FOLLOWED_BY in value:
            value = {k: v for k, v in value.items() if k != FOLLOWED_BY}
        if name in _JSON_FIELDS:
            out[name] = json.dumps(value, ensure_ascii=False)
        elif isinstance(value, bool):
            out[name] = "1" if value else "0"
        else:
            out[name] = str(value)
    out["tu"] = escape_key_part(record.user_id)
    out["tp"] = keys.partition_tag(Partition.of(record))
    out["occurred_ts"] = repr(record.occurred_at.timestamp())
    out["created_ts"] = repr(record.created_at.timestamp())
    out["live"] = "0" if record.retired else "1"
    return out


def absent_fields(fields: Mapping[str, str]) -> list[str]:
    """Optional model fields missing from ``fields``: HDEL them when rewriting a hash."""
    return [name for name in OPTIONAL_FIELDS if name not in fields]


#: Hash field name (bytes and str) -> model field name, for the model fields only.
_MODEL_FIELD: dict[bytes | str, str] = {name.encode(): name for name in MemoryRecord.model_fields}
_MODEL_FIELD.update({name: name for name in MemoryRecord.model_fields})
#: The store's ``followed_by`` hash field (module docstring), bytes and str.
_FOLLOWED_BY_FIELD = frozenset({FOLLOWED_BY, FOLLOWED_BY.encode()})
#: JSON values common enough to skip ``json.loads`` for.
_EMPTY_JSON: dict[bytes | str, type] = {b"[]": list, b"{}": dict, "[]": list, "{}": dict}


def record_from_hash(raw: Mapping[bytes | str, bytes | str]) -> MemoryRecord:
    """Parse a hash read back with HGETALL (bytes or str keys/values). Every field is
    validated but ``metadata``'s size and depth limits, checked when it was written
    (:data:`~gateway.memory.records.STORED`).

    A ``followed_by`` field keeps only its memory ids (:func:`~gateway.memory.ids.is_memory_id`):
    the store writes nothing else there, and an id that could name no record would make a
    read of the followers fail.

    Raises:
        pydantic.ValidationError: the hash is not a record written by :func:`record_to_hash`.
    """
    data: dict[str, object] = {"friend_id": None}
    followers = None
    for key, value in raw.items():
        name = _MODEL_FIELD.get(key)
        if name is None:
            if key in _FOLLOWED_BY_FIELD:  # the store writes memory ids only; anything else names no record
                listed = json.loads(value)
                followers = [i for i in listed if is_memory_id(i)] if isinstance(listed, list) else None
            continue  # index fields (module docstring) and unknown ones
        if name in _JSON_FIELDS:
            empty = _EMPTY_JSON.get(value)
            data[name] = empty() if empty is not None else json.loads(value)
        else:
            data[name] = value.decode("utf-8") if isinstance(value, bytes) else value
    if followers:
        metadata = data.get("metadata")
        data["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), FOLLOWED_BY: followers}
    return MemoryRecord.model_validate(data, context=STORED)


#: Replies up to this many bytes are memoized by :func:`record_from_reply`.
MEMO_MAX_BYTES = 8192


def record_from_reply(flat: Sequence[bytes]) -> MemoryRecord:
    """A record from a flat ``[field, value, ...]`` ``HGETALL`` reply (as scripts return
    it), memoized: the same bytes always parse to the same (frozen) record, and a chat's
    recall reads the same few records again and again. The memo holds
    :data:`_MEMO_SIZE` replies of at most :data:`MEMO_MAX_BYTES` (~16 MiB at most).

    Raises:
        pydantic.ValidationError: as :func:`record_from_hash`.
    """
    key = tuple(flat)
    if sum(len(part) for part in key) > MEMO_MAX_BYTES:
        return _from_flat(key)
    return _memo(key)


_MEMO_SIZE = 2048


def _from_flat(flat: tuple[bytes, ...]) -> MemoryRecord:
    items = iter(flat)
    return record_from_hash(dict(zip(items, items, strict=True)))


_memo = functools.lru_cache(maxsize=_MEMO_SIZE)(_from_flat)


#: Lua ``pack(flat)``: a flat ``HGETALL`` reply as one string, MessagePack (Redis's
#: ``cmsgpack``, C: an array of strings, binary-safe, e.g. a search-backend hash's
#: ``embedding``); ``""`` for a missing hash. A reply of one bulk string per record
#: instead of two per field: the client builds one object instead of ~40
#: (:func:`record_from_packed`). (Packing with Lua string operations cost Redis more CPU
#: than the client saved: every length formatted as a number.)
PACK_FUNCTION = """
local function pack(flat)
  if #flat == 0 then return '' end
  return cmsgpack.pack(flat)
end
"""

#: MessagePack string and binary headers: first byte -> width of the length that follows.
_LENGTH_WIDTH = {0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC4: 1, 0xC5: 2, 0xC6: 4}


def unpack_fields(packed: bytes) -> list[bytes]:
    """The strings :data:`PACK_FUNCTION` packed, in order: a MessagePack array of
    strings (or binaries) decoded, nothing else; ``b""`` -> ``[]`` (pure).

    >>> unpack_fields(bytes([0x93, 0xA4]) + b"text" + bytes([0xA5]) + b"a:b:0" + bytes([0xA0]))
    [b'text', b'a:b:0', b'']

    Raises:
        ValueError: ``packed`` is not such an array.
    """
    if not packed:
        return []
    head = packed[0]
    if 0x90 <= head <= 0x9F:
        count, at = head & 0x0F, 1
    elif head in (0xDC, 0xDD):
        width = 2 if head == 0xDC else 4
        count, at = int.from_bytes(packed[1:1 + width], "big"), 1 + width
    else:
        raise ValueError("packed record: not a MessagePack array")
    items, end = [], len(packed)
    for _ in range(count):
        if at >= end:
            raise ValueError("packed record: fewer items than its array says")
        head = packed[at]
        if 0xA0 <= head <= 0xBF:
            size, at = head & 0x1F, at + 1
        elif head in _LENGTH_WIDTH:
            width = _LENGTH_WIDTH[head]
            size, at = int.from_bytes(packed[at + 1:at + 1 + width], "big"), at + 1 + width
        else:
            raise ValueError("packed record: an item is not a string")
        if at + size > end:
            raise ValueError("packed record: an item runs past the end")
        items.append(packed[at:at + size])
        at += size
    if at != end:
        raise ValueError("packed record: bytes after its array")
    return items


def record_from_packed(packed: bytes) -> MemoryRecord:
    """:func:`record_from_reply` of a hash packed by :data:`PACK_FUNCTION`, memoized by
    the packed bytes themselves (the same bytes, the same frozen record; replies of at
    most :data:`MEMO_MAX_BYTES`, :data:`_MEMO_SIZE` of them).

    Raises:
        ValueError: not in :data:`PACK_FUNCTION`'s format.
        pydantic.ValidationError: as :func:`record_from_hash`.
    """
    if len(packed) > MEMO_MAX_BYTES:
        return _from_packed(packed)
    return _packed_memo(packed)


def _from_packed(packed: bytes) -> MemoryRecord:
    return _from_flat(tuple(unpack_fields(packed)))


_packed_memo = functools.lru_cache(maxsize=_MEMO_SIZE)(_from_packed)
