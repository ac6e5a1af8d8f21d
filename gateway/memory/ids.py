"""Memory record ids: 32 lowercase hex digits laid out like a UUIDv7 (RFC 9562, section 5.7).

The first 48 bits are the Unix time in milliseconds, so ids sort by creation time as
strings; the rest is random. Python 3.11 has no ``uuid.uuid7``, hence this small module.
"""

from __future__ import annotations

import re
import secrets
import time
from typing import TypeGuard

from gateway.runtime.errors import InvalidRequest

__all__ = ['MEMORY_ID_PATTERN', 'check_memory_id', 'is_memory_id', 'new_memory_id']

MEMORY_ID_PATTERN = r"^[0-9a-f]{32}$"
_MEMORY_ID_RE = re.compile(MEMORY_ID_PATTERN)


def new_memory_id(now_ms: int | None = None, random_bits: int | None = None) -> str:
    """A fresh id: 48-bit ms timestamp, version nibble 7, variant bits 10, 74 random bits.

    Args:
        now_ms: Unix time in milliseconds (default: the clock).
        random_bits: 74 random bits (default: ``secrets``); tests pass literals.
    """
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    rnd = secrets.randbits(74) if random_bits is None else random_bits
    value = (ms & (2**48 - 1)) << 80 | 0x7 << 76 | (rnd >> 62 & 0xFFF) << 64 | 0b10 << 62
    value |= rnd & (2**62 - 1)
    return f"{value:032x}"


def is_memory_id(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a well-formed memory id (:func:`check_memory_id` without the error)."""
    return isinstance(value, str) and _MEMORY_ID_RE.match(value) is not None


def check_memory_id(value: object) -> str:
    """``value`` if it is a well-formed memory id.

    Raises:
        InvalidRequest: anything else (400, param ``id``); the message never echoes more
            than 40 characters of the input.
    """
    if isinstance(value, str) and _MEMORY_ID_RE.match(value):
        return value
    shown = repr(value)[:40]
    raise InvalidRequest(f"malformed memory id {shown}: expected 32 hex digits", param="id")
