"""Fusion of the vector and keyword rankings (``memory.fusion``, issue 11 item 2): the
convex combination of normalised scores (Bruch et al. 2023) as a pure function, the BM25
scores both backends now return with their keyword hits, and a store on the real Redis
where convex fusion and RRF order two memories differently, as their formulas say."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import numpy as np
import pytest

from gateway.memory import NewMemory, Tenant
from gateway.memory.config import MemoryConfig, RankingConfig
from gateway.memory.factory import open_memory
from gateway.memory.filters import SearchFilter
from gateway.memory.keys import visible_partitions
from gateway.memory.keyword_index import search_reply
from gateway.memory.ranking import bm25_idf, bm25_term_weight, convex_scores, weighted_rrf
from gateway.memory.tenant_store import TenantMemoryStore
from gateway.memory.tokenize import term_frequencies
from tests.memory.conftest import BACKENDS, backend_config, drop_search_index
from tests.memory.fakes import HashEmbedder

ANN = Tenant("ann", "tutor")
DIMS = 16
#: every memory.ranking signal off: the hit's score is the fused score itself
NO_SIGNALS = RankingConfig(recency_weight=0.0, importance_weight=0.0, emotion_weight=0.0, period_weight=0.0,
                           dated_weight=0.0, neighbour_weight=0.0, session_weight=0.0, speaker_weight=0.0,
                           diversity_weight=0.0)


# --- the pure fusion -------------------------------------------------------------------

def test_convex_scores_normalise_each_side_by_its_maximum():
    scores = convex_scores({"a": 0.6, "b": 0.3}, {"a": 2.0, "b": 8.0}, 0.25)
    assert scores["a"] == pytest.approx(0.25 * 1.0 + 0.75 * 0.25)
    assert scores["b"] == pytest.approx(0.25 * 0.5 + 0.75 * 1.0)
    # scale-free: multiplying a side by a constant changes nothing
    assert convex_scores({"a": 0.06, "b": 0.03}, {"a": 200.0, "b": 800.0}, 0.25) == pytest.approx(scores)
    assert convex_scores({"a": 0.9}, {"a": 5.0}, 0.3) == pytest.approx({"a": 1.0})


def test_convex_scores_keep_magnitudes_where_rrf_keeps_only_ranks():
    """a: far better cosine, BM25 just under b's; b: best BM25, weak cosine. Both are
    first on one side and second on the other: RRF at alpha 0.4 favours the keyword
    side's winner, the convex combination the one whose scores add up to more."""
    cosines, bm25 = {"a": 0.9, "b": 0.3}, {"b": 10.0, "a": 9.5}
    assert weighted_rrf(["a", "b"], ["b", "a"], 0.4) == ["b", "a"]
    scores = convex_scores(cosines, bm25, 0.4)
    assert sorted(scores, key=lambda d: -scores[d]) == ["a", "b"]
    assert scores["a"] == pytest.approx(0.4 + 0.6 * 0.95) and scores["b"] == pytest.approx(0.4 / 3 + 0.6)


def test_convex_scores_of_a_keyword_only_and_a_vector_only_candidate():
    scores = convex_scores({"v": 0.8, "k": 0.2}, {"k": 4.0}, 0.5)
    assert scores == pytest.approx({"v": 0.5, "k": 0.5 * 0.25 + 0.5})
    assert convex_scores({"v": 0.8}, {"k": 4.0}, 0.5) == pytest.approx({"v": 0.5, "k": 0.5})  # k's cosine unknown: 0


def test_convex_scores_guard_a_zero_maximum():
    assert convex_scores({"a": 0.0, "b": 0.0}, {"b": 2.0}, 0.5) == {"a": 0.0, "b": 0.5}
    assert convex_scores({"a": 0.5}, {"a": 0.0}, 0.5) == {"a": 0.5}
    assert convex_scores({}, {}, 0.5) == {}
    assert all(not math.isnan(v) for v in convex_scores({"a": 0.0}, {"a": 0.0}, 0.5).values())


def test_search_reply_pairs_ids_with_scores():
    assert search_reply([b"m2", b"1.25", b"m1", b"0.5"]) == [("m2", 1.25), ("m1", 0.5)]
    assert search_reply(["m1", "3.0000000000000004"]) == [("m1", 3.0000000000000004)]
    assert search_reply([]) == []


# --- BM25 scores from the backends ------------------------------------------------------

@pytest.fixture
async def vstore(redis_url: str) -> AsyncIterator[TenantMemoryStore]:
    config = MemoryConfig(redis_url=redis_url, backend="vectorset", key_prefix="tf" + np.random.default_rng().bytes(6).hex())
    async with open_memory(config, embedder=HashEmbedder(dimensions=DIMS)) as opened:
        yield opened


def event(text: str) -> NewMemory:
    return NewMemory(scope="event", type="episodic", text=text)


async def test_vectorset_keyword_hits_carry_the_bm25_score_of_the_reference_formula(vstore):
    """The BM25 script returns each id with sum(idf * tf weight) (scores sent as strings:
    a Lua number in a reply would be cut to an integer), alone and inside the ranking
    script that also runs VSIM."""
    texts = ["red bicycle repaired", "red red bicycle", "bicycle lane", "blue kite flying high today", "red"]
    records = await vstore.add(ANN, [event(t) for t in texts])
    counts = {r.id: term_frequencies(r.text, r.keywords) for r in records}
    expected: dict[str, float] = {}
    for term in ("red", "bicycl"):
        df = sum(term in c for c in counts.values())
        for doc_id, c in counts.items():
            if term in c:
                weight = bm25_idf(df, len(records)) * bm25_term_weight(c[term], sum(c.values()))
                expected[doc_id] = expected.get(doc_id, 0.0) + weight
    parts = visible_partitions(ANN)
    alone = await vstore._repo.backend.keyword_search(parts, "red bicycles", 10, SearchFilter())
    assert dict(alone) == pytest.approx(expected, rel=1e-12)
    assert [s for _, s in alone] == sorted(expected.values(), reverse=True)
    assert any(s != int(s) for _, s in alone)  # not truncated
    _, ranked = await vstore._repo.backend.rank(parts, np.ones(DIMS, dtype=np.float32), "red bicycles", 10, SearchFilter())
    assert ranked == alone


# --- the store: convex vs RRF on the real Redis -----------------------------------------

def unit(*pairs: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIMS, dtype=np.float32)
    for axis, value in pairs:
        v[axis] = value
    return v / np.linalg.norm(v)


@pytest.fixture(params=BACKENDS)
def fusion_backend(request: pytest.FixtureRequest) -> str:
    return request.param


async def open_store(backend: str, mode_redis, fusion: str) -> tuple[TenantMemoryStore, MemoryConfig, object]:
    config = backend_config(backend, mode_redis, fusion=fusion, hybrid_alpha=0.4, ranking=NO_SIGNALS,
                            calibrate=False)
    manager = open_memory(config, embedder=HashEmbedder(dimensions=DIMS))
    return await manager.__aenter__(), config, manager


async def test_convex_and_rrf_order_two_memories_as_their_formulas_say(fusion_backend, mode_redis):
    """``strong``: cosine 0.9 (first by vector), BM25 just under ``wordy``'s (a longer
    text); ``wordy``: best BM25, cosine 0.3 (second by vector). RRF at alpha 0.4 ranks
    ``wordy`` first (ranks only, the keyword side weighted more); convex ranks ``strong``
    first with score 0.4 * 1 + 0.6 * (its BM25 / the best), and ``wordy`` gets
    0.4 * 0.3 / 0.9 + 0.6. ``far``, found only by keyword (24 fillers with cosine 0.2 fill
    the vector top 20), gets its stored vector's cosine as ``similarity``; ``threshold``
    still cuts on the cosine."""
    query = unit((0, 1.0))
    results = {}
    for fusion in ("rrf", "convex"):
        store, config, manager = await open_store(fusion_backend, mode_redis, fusion)
        try:
            await store.add_embedded(
                ANN, [event("zorblax bicycle repaired"), event("zorblax bicycle")],
                np.stack([unit((0, 0.9), (1, math.sqrt(1 - 0.81))), unit((0, 0.3), (2, math.sqrt(1 - 0.09)))]))
            await store.add_embedded(
                ANN, [event(f"weather note {i}") for i in range(24)],
                np.stack([unit((0, 0.2), (3 + i % 10, math.sqrt(0.96))) for i in range(24)]))
            await store.add_embedded(ANN, [event("zorblax")], np.stack([unit((0, 0.1), (14, math.sqrt(0.99)))]))
            hits = await store.search_by_vector(ANN, query, top_k=3, query_text="zorblax bicycle")
            cut = await store.search_by_vector(ANN, query, top_k=3, threshold=0.35, query_text="zorblax bicycle")
            results[fusion] = (hits, cut)
        finally:
            await manager.__aexit__(None, None, None)
            await drop_search_index(config)
    rrf_hits, rrf_cut = results["rrf"]
    assert [h.record.text for h in rrf_hits] == ["zorblax bicycle", "zorblax bicycle repaired", "zorblax"]
    convex_hits, convex_cut = results["convex"]
    assert [h.record.text for h in convex_hits] == ["zorblax bicycle repaired", "zorblax bicycle", "zorblax"]
    strong, wordy, far = convex_hits
    assert strong.similarity == pytest.approx(0.9, abs=0.02) and wordy.similarity == pytest.approx(0.3, abs=0.02)
    assert wordy.score == pytest.approx(0.4 * 0.3 / 0.9 + 0.6, abs=0.02)
    assert 0.4 + 0.6 * 0.8 < strong.score < 1.0  # its BM25 a little under the best
    if fusion_backend == "vectorset":  # our BM25: the ratio is that of the tf weights (same idf)
        ratio = bm25_term_weight(1, 3) / bm25_term_weight(1, 2)
        assert strong.score == pytest.approx(0.4 + 0.6 * ratio, abs=0.01)
    assert far.similarity == pytest.approx(0.1, abs=0.03)  # read from its stored vector
    assert far.score > 0.4 * 0.2 / 0.9  # above every filler (cosine only)
    # threshold 0.35 applies to the cosine: "strong" alone remains, now the best of both
    # sides among the candidates that can be returned
    assert [h.record.text for h in convex_cut] == ["zorblax bicycle repaired"] == [h.record.text for h in rrf_cut]
    assert convex_cut[0].score == pytest.approx(1.0)
