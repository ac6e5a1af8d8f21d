"""Sans-IO search logic: filters, tokens, scores, fusion, hit selection, search schema."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.memory.filters import SearchFilter, vector_attributes, vectorset_filter
from gateway.memory.keys import KeySpace, Partition
from gateway.memory.ranking import bm25_idf, bm25_term_weight, cosine_from_distance, cosine_from_vsim, weighted_rrf
from gateway.memory.records import MemoryType, NewMemory, Tenant, build_record
from gateway.memory.search import index_schema, tenant_filter
from gateway.memory.tenant_store import select_hits
from gateway.memory.tokenize import term_frequencies, tokenize
from gateway.memory.vectorset import _is_live
from gateway.runtime.errors import UnprocessableInput

T0 = datetime(2024, 1, 1, tzinfo=UTC)
T1 = datetime(2024, 6, 1, tzinfo=UTC)


def test_vectorset_filter_uses_only_enums_and_numbers():
    flt = SearchFilter.build(types=["trait", "goal"], occurred_after=T0, occurred_before=T1)
    assert vectorset_filter(flt) == (
        f'.live == 1 and .type in ["goal","trait"] and .t >= {T0.timestamp()!r} and .t < {T1.timestamp()!r}'
    )
    assert vectorset_filter(SearchFilter(include_retired=True)) is None


def test_filter_build_rejects_unknown_values_and_naive_times():
    for kwargs in ({"scopes": ["galaxy"]}, {"types": ["gossip"]}, {"occurred_after": datetime(2024, 1, 1)}):
        with pytest.raises(UnprocessableInput):
            SearchFilter.build(**kwargs)
    assert SearchFilter.build(scopes="event").scopes == frozenset({"event"})


def test_filter_matches_the_same_rule_in_python():
    record = build_record(Tenant("u"), NewMemory(scope="profile", type="goal", text="t", occurred_at=T0), "0" * 32, T1)
    assert SearchFilter.build(types=["goal"], occurred_after=T0).matches(record)
    assert not SearchFilter.build(occurred_before=T0).matches(record)
    assert not SearchFilter().matches(record.model_copy(update={"retired": True}))
    assert vector_attributes(record) == f'{{"type": "goal", "t": {T0.timestamp()}, "live": 1}}'


def test_tokenize_handles_english_and_cjk():
    assert tokenize("The CAT's toys, 2023!") == ["cat", "toys", "2023"]
    assert tokenize("東京タワー") == ["東", "京", "タ", "ワ", "ー", "東京", "京タ", "タワ", "ワー"]
    assert term_frequencies("cat cat dog", ["Dog"]) == {"cat": 2, "dog": 2}


def test_score_conversions_clamp_to_unit_interval():
    assert cosine_from_vsim(1.0) == 1.0 and cosine_from_vsim(0.75) == 0.5 and cosine_from_vsim(0.2) == 0.0
    assert cosine_from_distance(0.25) == 0.75 and cosine_from_distance(1.5) == 0.0


def test_bm25_parts_behave():
    assert bm25_term_weight(2, 16) > bm25_term_weight(1, 16) > bm25_term_weight(1, 64)
    assert bm25_idf(1, 1000) > bm25_idf(500, 1000) > 0


def test_weighted_rrf_blends_rankings():
    assert weighted_rrf(["a", "b"], ["b", "c"], 0.5) == ["b", "a", "c"]
    assert weighted_rrf(["a", "b"], ["b", "a"], 1.0) == ["a", "b"]
    assert weighted_rrf(["a", "b"], ["b", "a"], 0.0) == ["b", "a"]


def test_select_hits_applies_visibility_filter_threshold_and_top_k():
    tenant = Tenant("u", "f")
    mk = lambda i, friend="f": build_record(  # noqa: E731
        Tenant("u", friend), NewMemory(scope="event", type="episodic", text="t"), f"{i:032x}", T0
    )
    records = {r.id: r for r in (mk(1), mk(2, "g"), mk(3), mk(4))}
    cos = {f"{i:032x}": s for i, s in ((1, 0.9), (2, 0.95), (3, 0.1), (4, 0.8))}
    hits = select_hits(list(records), records, cos, tenant, SearchFilter(), 0.5, 5)
    assert [h.record.id for h in hits] == [f"{1:032x}", f"{4:032x}"]
    assert len(select_hits(list(records), records, cos, tenant, SearchFilter(), 0.0, 1)) == 1


def test_search_backend_filter_escapes_tenant_tags():
    expression = tenant_filter(KeySpace("mg"), [Partition("A|b", None), Partition("A|b", "猫 x")],
                               SearchFilter(types=frozenset({MemoryType.GOAL})))
    assert str(expression) == (
        r"(((@tu:{A\%7Cb} @tp:{profile|event\:\%E7\%8C\%AB\%20x}) @live:[1 1]) @type:{goal})"
    )


@pytest.mark.parametrize("parts", [[], [Partition("a", None), Partition("b", None)]], ids=["none", "two-users"])
def test_search_backend_filter_needs_exactly_one_user(parts):
    with pytest.raises(ValueError, match="exactly one user"):
        tenant_filter(KeySpace("mg"), parts, SearchFilter())


def test_search_schema_is_versioned_and_case_sensitive():
    schema = index_schema(KeySpace("mg"), 384)
    assert schema["index"] == {"name": "mg:idx:v2", "prefix": "mg:{", "storage_type": "hash"}
    tags = [f for f in schema["fields"] if f["type"] == "tag"]
    assert all(f["attrs"]["case_sensitive"] for f in tags)
    assert schema["fields"][-1]["attrs"]["dims"] == 384


@pytest.mark.parametrize(
    ("attributes", "live"),
    [
        (None, True),
        (b"", True),
        (b'{"type": "goal", "t": 1.5, "live": 1}', True),
        ('{"type": "goal", "t": 1.5, "live": 1}', True),
        (b'{"type": "goal", "t": 1.5, "live": 0}', False),
        ('{"type": "goal", "t": 1.5, "live": 0}', False),
        (b'{"live":0,"type":"goal"}', False),  # another writer's spacing: parsed
        (b'{"type": "goal"}', True),  # no live flag: live
    ],
)
def test_vector_attributes_tell_live_from_retired(attributes, live):
    assert _is_live(attributes) is live
