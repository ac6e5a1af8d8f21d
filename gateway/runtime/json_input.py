"""Checks on client JSON before the gateway works on it, sans-IO.

Each check is linear in the body's size and raises :class:`~gateway.runtime.errors.InvalidRequest`
(400) naming the field where there is one:

- :func:`decode_utf8`: JSON text is UTF-8 (RFC 8259 section 8.1); anything else is 400,
  never a ``UnicodeDecodeError`` deep inside a library.
- nesting: at most :data:`MAX_JSON_DEPTH` nested arrays/objects, so neither a parser nor
  a later re-serialization ever recurses past Python's limit (1000 frames: a
  ``RecursionError`` would be a 500). :func:`check_nesting` counts on the raw text
  (strings skipped) for bodies another parser reads; :func:`parse_json_object` checks the
  parsed value (cheaper on the hot chat path).
- :func:`check_surrogates`: a ``\\uD800``-``\\uDFFF`` escape that is not half of a pair
  parses into a lone surrogate, which cannot be encoded as UTF-8 when the body is
  re-serialized (RFC 8259 section 8.2 calls such strings unpredictable). The raw text is
  searched for surrogate escapes (one regex pass); only when there is one is the parsed
  value walked to name the field that holds the lone surrogate.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gateway.runtime.errors import InvalidRequest

__all__ = [
    "MAX_JSON_DEPTH", "check_json_body", "check_nesting", "check_surrogates", "decode_utf8", "find_lone_surrogate", "json_type",
    "nesting_depth", "parse_json_object", "value_depth",
]

#: Deepest nesting of arrays/objects accepted in a request body. JSON Schemas in ``tools``
#: and ``response_format`` are the deepest legitimate bodies (tens of levels); 128 leaves
#: room for them and stays far below Python's recursion limit of 1000.
MAX_JSON_DEPTH = 128

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = bytes(range(256)).translate(None, b"[]{}")  # every byte but brackets
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def decode_utf8(raw: bytes, what: str = "request body") -> str:
    """``raw`` decoded as UTF-8.

    Raises:
        InvalidRequest: not valid UTF-8 (400; the byte offset is named).
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRequest(f"{what} is not valid UTF-8 (byte {exc.start})") from None


def nesting_depth(raw: bytes, stop_at: int | None = None) -> int:
    """Deepest nesting of ``[`` / ``{`` in JSON text ``raw`` (strings skipped), counting
    at most up to ``stop_at``. Linear: strings are removed by one regex pass and the
    remaining brackets counted."""
    brackets = _STRING.sub(b"", raw).translate(None, _BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_at is not None and deepest > stop_at:
                    break
        else:
            depth -= 1
    return deepest


def check_nesting(raw: bytes, limit: int = MAX_JSON_DEPTH, what: str = "request body") -> None:
    """Raises InvalidRequest (400, ``param`` = the top-level field that nests too deep)
    when ``raw`` nests deeper than ``limit``."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return  # cannot be deeper than its bracket count
    if nesting_depth(raw, stop_at=limit) > limit:
        _refuse_nesting(raw, limit, what)


def _refuse_nesting(raw: bytes, limit: int, what: str) -> None:
    field = _too_deep_field(raw, limit)
    raise InvalidRequest(f"{field or what}: nested more than {limit} levels deep", param=field)


_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"\s*:?|[\[\]{}]', re.DOTALL)


def _too_deep_field(raw: bytes, limit: int) -> str | None:
    """The top-level object key under which ``raw`` first nests deeper than ``limit``
    (only run once a body is being refused: one pass over its tokens)."""
    depth, key = 0, None
    for match in _TOKEN.finditer(raw):
        token = match.group()
        if token[:1] == b'"':
            if depth == 1 and token.endswith(b":"):
                try:
                    key = json.loads(token[:-1].rstrip())
                except ValueError:
                    key = None
        elif token in b"[{":
            depth += 1
            if depth > limit:
                return key if isinstance(key, str) else None
        else:
            depth -= 1
    return None


def check_json_body(raw: bytes, what: str = "request body") -> None:
    """The checks of this module on a JSON (or JSON Lines) body that another parser will
    read (litestar's): UTF-8, nesting, and lone surrogates (parsed with :mod:`json` only
    when the raw text has a surrogate escape at all).

    Raises:
        InvalidRequest: see :func:`parse_json_object` (400).
    """
    if not raw:
        return
    decode_utf8(raw, what)
    check_nesting(raw, what=what)
    if _SURROGATE_ESCAPE.search(raw) is None:
        return
    try:
        parsed = json.loads(raw)
    except ValueError:
        return  # malformed: the parser reports it
    check_surrogates(raw, parsed)


def find_lone_surrogate(value: Any, path: str = "") -> str | None:
    """The path (``messages[0].content``, ``model``...) of the first string or object key
    in ``value`` holding a lone surrogate, or None. Iterative: no recursion limit."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return where
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                name = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and _LONE_SURROGATE.search(key):
                    return where or "(key)"
                children.append((child, name))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in reversed(list(enumerate(item))))
    return None


def check_surrogates(raw: bytes, parsed: Any) -> None:
    """Raises InvalidRequest (400, ``param`` = the field) when ``parsed`` (the value of
    JSON text ``raw``) holds a lone surrogate. Costs one regex pass unless ``raw`` has a
    surrogate escape at all."""
    if _SURROGATE_ESCAPE.search(raw) is None:
        return
    where = find_lone_surrogate(parsed)
    if where is not None:
        raise InvalidRequest(
            f"{where or 'request body'}: contains a lone UTF-16 surrogate (\\ud800-\\udfff "
            "escape not part of a pair), which is not valid Unicode text",
            param=where or None,
        )


def value_depth(value: Any, stop_at: int | None = None) -> int:
    """Deepest nesting of lists/dicts in a parsed JSON value (a scalar is 0), counting
    at most up to ``stop_at``. Iterative: no recursion limit."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest = 1
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                if depth + 1 > deepest:
                    deepest = depth + 1
                    if stop_at is not None and deepest > stop_at:
                        return deepest
                stack.append((child, depth + 1))
    return deepest


def parse_json_object(raw: bytes, what: str = "request body") -> dict[str, Any]:
    """``raw`` parsed as a JSON object after every check of this module (the chat and
    embeddings routes). Nesting is checked on the parsed value, walking containers only
    and only when ``raw`` has more brackets than :data:`MAX_JSON_DEPTH` (a raw-text scan
    costs ~5x the parse on bracket-rich bodies); the parser's own ``RecursionError``
    beyond ~1000 levels is caught.

    Raises:
        InvalidRequest: not UTF-8, nested too deep, malformed JSON, not an object, or a
            lone surrogate (400, naming the field).
    """
    text = decode_utf8(raw, what)
    try:
        body = json.loads(text)
    except RecursionError:
        body = None
        _refuse_nesting(raw, MAX_JSON_DEPTH, what)
    except ValueError:
        raise InvalidRequest(f"{what} is not valid JSON") from None
    if not isinstance(body, dict):
        raise InvalidRequest(f"{what} must be a JSON object")
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and value_depth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        _refuse_nesting(raw, MAX_JSON_DEPTH, what)
    check_surrogates(raw, body)
    return body


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value, with its article (for error messages):
    ``"null"``, ``"a boolean"``, ``"a number"``, ``"a string"``, ``"an array"``, ``"an object"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else "a string"
