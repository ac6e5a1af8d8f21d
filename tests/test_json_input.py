"""gateway.runtime.json_input, sans-IO: depth counting ignores strings, surrogate pairs are fine,
the field at fault is named."""

import json

import pytest

from gateway.runtime.errors import InvalidRequest
from gateway.runtime.json_input import (
    MAX_JSON_DEPTH,
    check_json_body,
    find_lone_surrogate,
    nesting_depth,
    parse_json_object,
    value_depth,
)


def test_brackets_inside_strings_do_not_count():
    raw = json.dumps({"a": "[[[[{{{{", "b": [[1]], "c": "\\\"[["}).encode()
    assert nesting_depth(raw) == 3
    assert value_depth(json.loads(raw)) == 3


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 999, 5000])
def test_too_deep_names_the_top_level_field(depth):
    raw = b'{"model":"m","tools":' + b"[" * depth + b"]" * depth + b"}"
    for check in (parse_json_object, check_json_body):
        with pytest.raises(InvalidRequest) as info:
            check(raw)
        assert info.value.param == "tools"


def test_at_the_limit_is_accepted():
    depth = MAX_JSON_DEPTH - 1  # plus the top-level object
    raw = b'{"x":' + b"[" * depth + b"]" * depth + b"}"
    assert value_depth(parse_json_object(raw)) == MAX_JSON_DEPTH
    check_json_body(raw)


def test_surrogate_pairs_pass_and_lone_ones_are_located():
    paired = json.dumps({"m": [{"content": "\U0001F600"}]}, ensure_ascii=True).encode()
    assert parse_json_object(paired)["m"][0]["content"] == "\U0001F600"
    assert find_lone_surrogate({"m": [{"content": "ok"}, {"content": "x\udfff"}]}) == "m[1].content"
    with pytest.raises(InvalidRequest) as info:
        parse_json_object(b'{"m":[{"content":"ok"},{"content":"\\udfff"}]}')
    assert info.value.param == "m[1].content"


def test_invalid_utf8_is_refused_with_the_offset():
    with pytest.raises(InvalidRequest, match="byte 8"):
        parse_json_object(b'{"a":"xx\xff"}')
