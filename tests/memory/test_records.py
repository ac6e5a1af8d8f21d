"""Records, ids, keys and the hash codec: pure, literal inputs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from gateway.memory.codec import (
    MEMO_MAX_BYTES,
    absent_fields,
    record_from_hash,
    record_from_packed,
    record_from_reply,
    record_to_hash,
    unpack_fields,
)
from gateway.memory.ids import check_memory_id, new_memory_id
from gateway.memory.keys import KeySpace, Partition, escape_key_part, visible_partitions
from gateway.memory.records import MAX_METADATA_BYTES, MemoryRecord, NewMemory, Scope, Tenant, build_record, visible_to
from gateway.runtime.errors import InvalidRequest

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def test_ids_carry_the_millisecond_time_and_sort_by_it():
    early = new_memory_id(now_ms=1_700_000_000_000, random_bits=2**74 - 1)
    late = new_memory_id(now_ms=1_700_000_000_001, random_bits=0)
    assert early < late and len(early) == 32
    assert early[:12] == f"{1_700_000_000_000:012x}" and early[12] == "7"
    assert check_memory_id(late) == late


@pytest.mark.parametrize("bad", ["", "x" * 32, "0" * 31, "0" * 33, "0" * 31 + "G", "A" * 32, None, 5])
def test_malformed_ids_are_invalid_requests(bad):
    with pytest.raises(InvalidRequest):
        check_memory_id(bad)


def test_escape_key_part_is_percent_encoding_of_utf8():
    assert escape_key_part("a|b") == "a%7Cb"
    assert escape_key_part("猫") == "%E7%8C%AB"
    assert escape_key_part("%7C") == "%257C"
    assert escape_key_part("user_01.a-b") == "user_01.a-b"  # nothing to escape: as is
    assert escape_key_part("a b\n") == "a%20b%0A"
    assert escape_key_part("Ａ") == "%EF%BC%A1"  # fullwidth A is not [A-Za-z]
    assert escape_key_part("Az09_.-") == "Az09_.-"
    assert escape_key_part("{x}:*") == "%7Bx%7D%3A%2A"


def test_keys_put_every_user_key_under_its_hash_tag():
    keys = KeySpace("mg")
    assert keys.record("a b", "0" * 32) == "mg:{a%20b}:m:" + "0" * 32
    assert keys.vector_set(Partition("u", None)) == "mg:{u}:vs:profile"
    assert keys.vector_set(Partition("u", "f:1")) == "mg:{u}:vs:event:f%3A1"
    assert keys.postings(Partition("u", "f"), "猫") == "mg:{u}:kw:event:f:%E7%8C%AB"
    assert keys.user_pattern("*") == "mg:{%2A}:*"


def test_visible_partitions_follow_seed_002():
    assert visible_partitions(Tenant("u", "f")) == [Partition("u", None), Partition("u", "f")]
    assert visible_partitions(Tenant("u")) == [Partition("u", None)]
    assert visible_partitions(Tenant("u", "f"), frozenset({Scope.EVENT})) == [Partition("u", "f")]


def test_build_record_fills_tenant_and_times():
    tenant = Tenant("u", "f")
    new = NewMemory(scope="event", type="episodic", text="t")
    record = build_record(tenant, new, "0" * 32, NOW)
    assert (record.user_id, record.friend_id, record.occurred_at, record.created_at) == ("u", "f", NOW, NOW)
    profile = build_record(tenant, new.model_copy(update={"scope": Scope.PROFILE}), "1" * 32, NOW)
    assert profile.friend_id is None
    assert visible_to(record, tenant) and not visible_to(record, Tenant("u", "g"))
    assert visible_to(profile, Tenant("u", "g")) and not visible_to(profile, Tenant("v", "f"))


def test_records_need_aware_times_and_well_formed_ids():
    with pytest.raises(ValidationError):
        NewMemory(scope="event", type="episodic", text="t", occurred_at=datetime(2025, 1, 1))
    with pytest.raises(ValidationError):
        NewMemory(scope="galaxy", type="episodic", text="t")
    base = build_record(Tenant("u"), NewMemory(scope="profile", type="goal", text="t"), "0" * 32, NOW)
    with pytest.raises(ValidationError):
        MemoryRecord.model_validate({**base.model_dump(), "id": "not-an-id"})


def test_hash_codec_round_trips_and_lists_fields_to_delete():
    record = build_record(
        Tenant("a|b", "猫"),
        NewMemory(scope="event", type="episodic", text="hi", keywords=["k"], emotion="joy", metadata={"x": [1]}),
        "0" * 32, NOW,
    )
    fields = record_to_hash(record, KeySpace("mg"))
    assert fields["tu"] == "a%7Cb" and fields["tp"] == "event:%E7%8C%AB" and fields["live"] == "1"
    assert fields["occurred_ts"] == repr(NOW.timestamp())
    raw = {k.encode(): v.encode() for k, v in fields.items()}
    assert record_from_hash(raw) == record
    assert "emotion" not in absent_fields(fields) and "supersedes" in absent_fields(fields)


def test_metadata_limits_apply_to_input_not_to_records_read_back():
    # a search reads every hit's record: its metadata was checked when it was written
    record = build_record(Tenant("u"), NewMemory(scope="profile", type="goal", text="t"), "0" * 32, NOW)
    big = {"blob": "x" * (MAX_METADATA_BYTES + 1)}
    data = {**record.model_dump(mode="json"), "metadata": big}
    with pytest.raises(ValidationError, match="metadata"):
        MemoryRecord.model_validate(data)  # e.g. a record in an import file
    with pytest.raises(ValidationError, match="metadata"):
        NewMemory(scope="profile", type="goal", text="t", metadata=big)
    fields = record_to_hash(record.model_copy(update={"metadata": big}), KeySpace("mg"))
    assert record_from_hash(fields).metadata == big


def test_record_replies_parse_the_same_memoized_or_not():
    record = build_record(Tenant("u", "f"), NewMemory(scope="event", type="goal", text="run 5k"), "0" * 32, NOW)
    def flat(r):
        return [b for k, v in record_to_hash(r, KeySpace("mg")).items() for b in (k.encode(), v.encode())]
    assert record_from_reply(flat(record)) == record
    retired = record.model_copy(update={"retired": True, "retired_reason": "done"})
    assert record_from_reply(flat(retired)) == retired  # other bytes: parsed afresh
    big = record.model_copy(update={"metadata": {"blob": "x" * MEMO_MAX_BYTES}})
    assert record_from_reply(flat(big)) == big


def packed(items: list[bytes]) -> bytes:
    """What the store's search script's ``pack`` (Redis's cmsgpack) makes of a flat
    HGETALL reply: a MessagePack array of strings."""
    def item(b: bytes) -> bytes:
        if len(b) < 32:
            return bytes([0xA0 | len(b)]) + b
        if len(b) < 256:
            return bytes([0xD9, len(b)]) + b
        return bytes([0xDA]) + len(b).to_bytes(2, "big") + b if len(b) < 65536 else bytes([0xDB]) + len(b).to_bytes(4, "big") + b
    head = bytes([0x90 | len(items)]) if len(items) < 16 else bytes([0xDC]) + len(items).to_bytes(2, "big")
    return head + b"".join(item(b) for b in items)


def test_packed_records_parse_as_their_replies_binary_fields_included():
    record = build_record(Tenant("u", "f"), NewMemory(scope="event", type="goal", text="run 5k: 10:30, 12:00",
                                                      metadata={"n": "3:x"}), "0" * 32, NOW)
    flat = [b for k, v in record_to_hash(record, KeySpace("mg")).items() for b in (k.encode(), v.encode())]
    flat += [b"embedding", bytes(range(256)) + b"12:", b"empty", b""]  # a search-backend hash's vector, an empty value
    assert unpack_fields(packed(flat)) == flat
    assert record_from_packed(packed(flat)) == record_from_reply(flat) == record
    assert record_from_packed(packed(flat)) is record_from_packed(packed(flat))  # memoized
    retired = record.model_copy(update={"retired": True, "retired_reason": "done"})
    flat_retired = [b for k, v in record_to_hash(retired, KeySpace("mg")).items() for b in (k.encode(), v.encode())]
    assert record_from_packed(packed(flat_retired)) == retired  # other bytes: parsed afresh
    big = record.model_copy(update={"metadata": {"blob": "x" * MEMO_MAX_BYTES}})
    flat_big = [b for k, v in record_to_hash(big, KeySpace("mg")).items() for b in (k.encode(), v.encode())]
    assert record_from_packed(packed(flat_big)) == big
    assert unpack_fields(b"") == []
    assert unpack_fields(bytes([0x91, 0xC4, 2]) + b"\x00\xff") == [b"\x00\xff"]  # a binary
    for broken in (b"\xa3abc", bytes([0x92, 0xA3]) + b"abc", bytes([0x91, 0xA5]) + b"abc",
                   bytes([0x91, 0xA1]) + b"ab", bytes([0x91, 0x01])):
        with pytest.raises(ValueError):
            unpack_fields(broken)
