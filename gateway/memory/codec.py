"""Record <-> Redis hash fields, shared by both backends (sans-IO).

Model fields are stored one per hash field (lists and dicts as JSON, datetimes as ISO 8601,
booleans as ``0``/``1``); ``None`` fields are absent. Extra *index fields* serve filtering:

- ``tu``: escaped user id and ``tp``: partition (``profile`` / ``event:<escaped friend>``),
  TAG fields of the search backend. Escaped values never contain the TAG separator ``,``.
- ``occurred_ts`` / ``created_ts``: Unix seconds (float), NUMERIC fields.
- ``live``: ``1`` unless retired, NUMERIC field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from gateway.memory.keys import KeySpace, Partition, escape_key_part
from gateway.memory.records import MemoryRecord

__all__ = ['INDEX_FIELDS', 'OPTIONAL_FIELDS', 'absent_fields', 'record_from_hash', 'record_to_hash']

_JSON_FIELDS = frozenset({"keywords", "based_on", "metadata"})
INDEX_FIELDS = frozenset({"tu", "tp", "occurred_ts", "created_ts", "live"})
#: Every model field that may be absent (None) in a hash; a rewrite HDELs the absent ones.
OPTIONAL_FIELDS = tuple(
    name for name, info in MemoryRecord.model_fields.items() if not info.is_required()
)


def record_to_hash(record: MemoryRecord, keys: KeySpace) -> dict[str, str]:
    """Hash fields of ``record`` (see module docstring); None fields are left out."""
    out: dict[str, str] = {}
    for name, value in record.model_dump(mode="json").items():
        if value is None:
            continue
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


def record_from_hash(raw: Mapping[bytes | str, bytes | str]) -> MemoryRecord:
    """Parse a hash read back with HGETALL (bytes or str keys/values).

    Raises:
        pydantic.ValidationError: the hash is not a record written by :func:`record_to_hash`.
    """
    data: dict[str, object] = {}
    for key, value in raw.items():
        name = key.decode() if isinstance(key, bytes) else key
        if name in INDEX_FIELDS or name not in MemoryRecord.model_fields:
            continue
        text = value.decode("utf-8") if isinstance(value, bytes) else value
        data[name] = json.loads(text) if name in _JSON_FIELDS else text
    data.setdefault("friend_id", None)
    return MemoryRecord.model_validate(data)
