"""The script-routed embedder (``provider: script``, ``language: mixed``): Latin texts on
the onnx MiniLM, CJK texts on e5onnx, each in its own half of a 768-dim vector. Routing
follows the calibration's language rule; each half is exactly its part's vector; two texts
of different scripts have cosine 0; only a CJK search text gets E5's ``query: ``; the
store records the composite's identity (switching needs ``memgate memories reembed``);
calibration's en curve is MiniLM's and zh e5's; the clause classifier scores an English
clause exactly as under onnx alone; warm-up runs both parts. Real models (onnxruntime),
real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest
from pydantic import ValidationError

from gateway.memorization.clause_classifier import ClauseModel, candidates, load, promoted
from gateway.memory import NewMemory, Tenant
from gateway.memory.calibration import Calibration, compute, fit, load_pairs
from gateway.memory.config import EmbeddingConfig, MemoryConfig
from gateway.memory.embeddings import embed_query, load_provider, model_identity, resolve_provider
from gateway.memory.embeddings.base import Embedder, query_text
from gateway.memory.embeddings.script_routed import (
    ScriptRoutedEmbedder,
    identity,
    part_slices,
    parts_of,
    routes_to_cjk,
)
from gateway.memory.factory import LazyEmbedder, open_memory
from gateway.memory.meta import StoreMismatch
from tests.memory.conftest import fresh_prefix
from tests.memory.fakes import CountingEmbedder

ONNX_ID = "all-MiniLM-L6-v2+onnx-int8-pc-v1"
E5_ID = "multilingual-e5-small+onnx-int8-v1"
SCRIPT_ID = f"script({ONNX_ID}|{E5_ID})"
LATIN = ["I live in Lisbon with my wife.", "My daughter Maya is allergic to peanuts.", "What should we cook tonight?"]
CJK = ["我住在成都，在一家游戏公司上班。", "我女儿对花生过敏。", "今晚吃什么好？", "週末は京都に行きます"]


@pytest.fixture(scope="module")
async def models() -> AsyncIterator[tuple[Embedder, Embedder, Embedder]]:
    """(composite, onnx, e5onnx), each loaded on its own."""
    composite = await load_provider(EmbeddingConfig(language="mixed"))
    onnx = await load_provider(EmbeddingConfig(provider="onnx"))
    e5 = await load_provider(EmbeddingConfig(provider="e5onnx"))
    yield composite, onnx, e5
    for model in (composite, onnx, e5):
        await model.aclose()


def test_routing_is_the_calibrations_language_rule():
    fits = Calibration("x", {"en": fit(np.array([0.9]), np.array([0.1])), "zh": fit(np.array([0.8]), np.array([0.7]))})
    texts = ["plain English", "mixed 中文 text", "かな", "한국어", "x" * 1999 + "中", "x" * 2000 + "中", "", "Ça va? ½ ü"]
    for text in texts:
        assert routes_to_cjk(text) is (fits.fit_for(text) is fits.fits["zh"]), text
    # the E5 mark is not looked at: a marked search text routes as the text it marks
    assert routes_to_cjk("query: " + "x" * 1999 + "中") and not routes_to_cjk("query: " + "x" * 2000 + "中")


def test_identity_names_both_parts_and_the_config_picks_it_for_mixed_only():
    assert model_identity("script", "ignored") == SCRIPT_ID == identity(ONNX_ID, E5_ID)
    assert parts_of(SCRIPT_ID) == (ONNX_ID, E5_ID) and parts_of(ONNX_ID) is None
    assert resolve_provider(EmbeddingConfig(language="mixed"), None) == "script"
    assert resolve_provider(EmbeddingConfig(), None) == "script"  # mixed is the default
    assert resolve_provider(EmbeddingConfig(language="en"), None) == "onnx"
    assert resolve_provider(EmbeddingConfig(language="multilingual"), None) == "e5onnx"
    # an existing store keeps its model whatever the language says, both ways
    assert resolve_provider(EmbeddingConfig(language="mixed"), ONNX_ID) == "onnx"
    assert resolve_provider(EmbeddingConfig(language="en"), SCRIPT_ID) == "script"
    assert resolve_provider(EmbeddingConfig(language="mixed", model="all-MiniLM-L6-v2"), None) == "onnx"
    with pytest.raises(ValidationError, match="script provider runs"):
        EmbeddingConfig(provider="script", model="all-MiniLM-L6-v2")
    latin, cjk = part_slices(SCRIPT_ID, 768, 384, None)
    assert (latin.model, latin.start, latin.stop, cjk.model, cjk.start, cjk.stop) == (ONNX_ID, 0, 384, E5_ID, 384, 768)
    with pytest.raises(ValueError, match="do not make"):
        part_slices(SCRIPT_ID, 768, 384, 100)


async def test_a_wrong_dimensions_setting_is_refused():
    with pytest.raises(ValueError, match="dimensions=384"):
        await load_provider(EmbeddingConfig(provider="script", dimensions=384))


async def test_each_text_gets_its_parts_vector_in_its_own_half_in_order(models):
    composite, onnx, e5 = models
    assert (composite.model, composite.dimensions) == (SCRIPT_ID, 768)
    texts = [LATIN[0], CJK[0], LATIN[1], CJK[1], CJK[3], LATIN[2], CJK[2]]
    vectors = await composite.embed_many(texts)
    assert vectors.shape == (7, 768) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    latin_rows, cjk_rows = [0, 2, 5], [1, 3, 4, 6]
    # each part sees its own sub-batch, in order: the same call made to the part alone
    # (int8 activations are quantized per forward pass, so only the same sub-batch gives the same bits)
    alone_latin = await onnx.embed_many([texts[i] for i in latin_rows])
    alone_cjk = await e5.embed_many([texts[i] for i in cjk_rows])
    assert np.array_equal(vectors[latin_rows, :384], alone_latin)
    assert np.array_equal(vectors[cjk_rows, 384:], alone_cjk)
    assert not vectors[latin_rows, 384:].any() and not vectors[cjk_rows, :384].any()
    # so same-script cosines are the part's own, cross-script ones exactly 0
    cos = vectors @ vectors.T
    assert np.allclose(cos[np.ix_(latin_rows, latin_rows)], alone_latin @ alone_latin.T, atol=1e-6)
    assert np.allclose(cos[np.ix_(cjk_rows, cjk_rows)], alone_cjk @ alone_cjk.T, atol=1e-6)
    assert cos[np.ix_(latin_rows, cjk_rows)].max() == 0.0
    assert (await composite.embed_many([])).shape == (0, 768)
    assert np.array_equal((await composite.embed_many([CJK[0]]))[0, 384:], (await e5.embed_many([CJK[0]]))[0])


async def test_only_a_cjk_search_text_gets_the_e5_query_mark(models):
    composite, onnx, e5 = models
    assert query_text(composite, LATIN[2]) == LATIN[2]
    assert query_text(composite, CJK[2]) == "query: " + CJK[2]
    assert query_text(composite, CJK[3]) == "query: " + CJK[3]  # kana routes to e5 too
    latin, cjk = await embed_query(composite, LATIN[2]), await embed_query(composite, CJK[2])
    assert np.array_equal(latin[:384], await embed_query(onnx, LATIN[2])) and not latin[384:].any()
    assert np.array_equal(cjk[384:], await embed_query(e5, CJK[2])) and not cjk[:384].any()
    assert not np.array_equal(cjk[384:], (await e5.embed_many([CJK[2]]))[0])  # the query role, not the passage


async def test_calibration_fits_english_on_minilm_and_chinese_on_e5(models):
    composite, onnx, e5 = models
    calibration = await compute(composite)
    pairs = load_pairs()
    for lang, part in (("en", onnx), ("zh", e5)):
        # the fit of the part alone on the cosines of the same sub-batch the composite sends it
        texts = [t for kind in ("related", "unrelated") for r, m in pairs[lang][kind] for t in (query_text(part, r), m)]
        vectors = await part.embed_many(texts)
        cos = np.sum(vectors[0::2] * vectors[1::2], axis=1)
        half = len(cos) // 2
        expected = fit(cos[:half], cos[half:])
        got = calibration.fits[lang]
        assert got.related_mean == pytest.approx(expected.related_mean, abs=1e-5), lang
        assert got.unrelated_mean == pytest.approx(expected.unrelated_mean, abs=1e-5), lang
        assert got.a == pytest.approx(expected.a, rel=1e-3) and got.b == pytest.approx(expected.b, rel=1e-3), lang
    # e5's curve for Chinese: its high raw cosines are read on e5's own scale
    assert calibration.fits["zh"].unrelated_mean > 0.75 > calibration.fits["en"].related_mean


async def test_an_english_clause_scores_exactly_as_under_onnx_alone(models):
    composite, onnx, _e5 = models
    mine, alone = load(composite.model, composite.dimensions), load(onnx.model, onnx.dimensions)
    assert mine["en"].columns == (0, 384) and mine["en"].part == 0
    assert "zh" not in mine  # no zh weights ship for e5: Chinese clauses are not scored, as under e5 alone
    found = candidates("Training for the Denver half in May, what should I eat? the grad residence kitchen is tiny")
    assert len(found) == 2
    features = np.stack([c.features for c in found])
    texts = [c.text for c in found]
    scores = mine["en"].scores(await composite.embed_many(texts), features)
    assert np.array_equal(scores, alone["en"].scores(await onnx.embed_many(texts), features))
    assert promoted(mine, found, await composite.embed_many(texts)) == promoted(alone, found, await onnx.embed_many(texts))


def test_a_part_model_scores_only_clauses_routed_to_its_part():
    found = candidates("the grad residence kitchen is tiny, 这边冬天太干了, any tips?")
    keep = np.zeros(2 + 10, np.float32)
    vectors = np.zeros((len(found), 4), np.float32)
    models = {"en": ClauseModel(keep, 5.0, 0.5, columns=(0, 2), part=0),
              "zh": ClauseModel(keep, 5.0, 0.5, columns=(2, 4), part=1)}
    assert promoted(models, found, vectors) == {c.index for c in found}
    # a model of the latin part never scores a text routed to the cjk part (kana: language en, part cjk)
    kana = candidates("週末は京都に行きます, any tips?")
    assert kana and promoted({"en": models["en"]}, kana, np.zeros((len(kana), 4), np.float32)) == frozenset()


async def test_a_store_records_the_composite_and_switches_only_by_reembed(redis_url, models):
    composite, onnx, _e5 = models
    config = MemoryConfig(redis_url=redis_url, backend="vectorset", key_prefix=fresh_prefix(), hybrid_alpha=1.0)
    user = Tenant("mei", "assistant")
    texts = ["I live in Lisbon with my wife.", "My sister is a nurse in Porto.", "我女儿对花生过敏。", "我在一家游戏公司上班。"]
    async with open_memory(config, embedder=onnx) as store:  # an English store, built with onnx
        added = await store.add(user, [NewMemory(scope="profile", type="semantic", text=t) for t in texts])
    mixed = config.model_copy(update={"embedding": EmbeddingConfig(language="mixed")})
    async with open_memory(mixed, embedder=None, lazy_embedder=True) as store:  # auto keeps onnx
        assert store._embedder.model == ONNX_ID
    explicit = config.model_copy(update={"embedding": EmbeddingConfig(provider="script")})
    with pytest.raises(StoreMismatch, match=r"script\(.*reembed"):
        async with open_memory(explicit):
            pass
    async with open_memory(explicit, check_model=False) as store:
        assert await store.reembed() == len(texts)
    async with open_memory(config, lazy_embedder=True) as store:  # auto, language en: now the recorded composite
        lazy = store._embedder.inner
        assert isinstance(lazy, LazyEmbedder) and (lazy.model, lazy.dimensions, lazy.loads) == (SCRIPT_ID, 768, 0)
        zh = await store.search(user, "我孩子有什么食物过敏？", top_k=1)
        en = await store.search(user, "Where do I live?", top_k=1)
        assert lazy.loads == 1
        assert zh[0].record.id == added[2].id and en[0].record.id == added[0].id
        # one space per script: a Chinese query meets an English memory at cosine 0
        stored = await store.search_by_vector(user, await embed_query(composite, "我孩子有什么食物过敏？"), top_k=4)
        assert {h.record.id for h in stored if h.similarity <= 1e-6} >= {added[0].id, added[1].id}


async def test_warm_up_runs_both_parts(redis_url, models):
    _composite, onnx, e5 = models
    latin, cjk = CountingEmbedder(onnx), CountingEmbedder(e5)
    config = MemoryConfig(redis_url=redis_url, backend="vectorset", key_prefix=fresh_prefix(), calibrate=False)
    async with open_memory(config, embedder=ScriptRoutedEmbedder(latin, cjk)) as store:
        await store.warm()
    assert len(latin.texts) == 1 and not routes_to_cjk(latin.texts[0])
    assert len(cjk.texts) == 1 and routes_to_cjk(cjk.texts[0])


def test_a_chinese_inference_is_a_duplicate_by_characters_not_by_e5s_high_cosine():
    from gateway.memorization.inference import DUPLICATE_COSINE, is_duplicate

    # e5 scores unrelated Chinese pairs up to ~0.92: the cosine alone would drop this conclusion
    assert not is_duplicate("用户可能喜欢户外运动", "用户的女儿对花生过敏", 0.93)
    assert is_duplicate("用户可能喜欢户外运动", "用户可能喜欢户外运动。", 0.5)  # a restatement, whatever the cosine
    # English (and mixed) conclusions keep the cosine rule
    assert is_duplicate("The user likes hiking.", "The user enjoys outdoor sports.", DUPLICATE_COSINE)
    assert not is_duplicate("The user likes hiking.", "The user enjoys outdoor sports.", DUPLICATE_COSINE - 0.01)
