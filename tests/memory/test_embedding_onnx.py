"""The ``onnx`` provider (issue 10 item 1): the packaged all-MiniLM-L6-v2 weights exported
locally and int8-quantized give the sentence-transformers vectors (cosine >= 0.99 on
English and Chinese sentences); its model identity is its own; ``auto`` keeps an existing
store's model and picks onnx for a new one. Real models, real Redis."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import numpy as np
import pytest
import redis.asyncio as aredis

from gateway.memory.config import EmbeddingConfig, MemoryConfig
from gateway.memory.embeddings import model_identity, resolve_provider
from gateway.memory.embeddings.onnx_local import OnnxEmbedder
from gateway.memory.factory import open_memory
from gateway.memory.keys import KeySpace
from gateway.memory.meta import StoreMismatch, StoreSettings, record_settings
from gateway.memory.records import NewMemory, Tenant
from tests.memory.conftest import fresh_prefix

SENTENCES = [
    "I moved to Berlin last spring and started a new job at a bakery.",
    "What did Caroline research for her adoption plans?",
    "Melanie ran a charity race for mental health last Saturday.",
    "The quarterly tax filing deadline moved to the fifteenth of April.",
    "He prefers short answers with code examples in Python.",
    "我喜欢在周末去公园散步，顺便拍一些照片。",
    "我的女儿今年九月开始上小学了。",
    "明天下午三点在会议室讨论项目进度。",
]


@pytest.fixture(scope="session")
async def onnx_model() -> AsyncIterator[OnnxEmbedder]:
    """Exported into the user's model cache on the first run (a few seconds), then reused."""
    model = await OnnxEmbedder.load(EmbeddingConfig(provider="onnx"))
    yield model
    await model.aclose()


async def test_onnx_int8_matches_sentence_transformers(onnx_model, local_model):
    ours = await onnx_model.embed_many(SENTENCES)
    reference = await local_model.embed_many(SENTENCES)
    assert ours.shape == (len(SENTENCES), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(ours * reference, axis=1)
    assert cosines.min() >= 0.99, dict(zip(SENTENCES, cosines.round(4), strict=True))
    # dynamic quantization scales activations per pass, so the provider runs a pass per
    # text: a text's vector is the same alone and among others, bit for bit
    alone = np.concatenate([await onnx_model.embed_many([s]) for s in SENTENCES])
    assert np.array_equal(alone, ours)
    shuffled = await onnx_model.embed_many([SENTENCES[3], "x " * 200, *SENTENCES[::-1]])
    assert np.array_equal(shuffled[2:], alone[::-1])


@pytest.mark.parametrize("provider", ["onnx", "model2vec"])
def test_runtime_does_not_import_torch(provider, onnx_model):
    import subprocess

    code = (
        "import asyncio, sys\n"
        "from gateway.memory.config import EmbeddingConfig\n"
        "from gateway.memory.embeddings import load_provider\n"
        f"m = asyncio.run(load_provider(EmbeddingConfig(provider={provider!r})))\n"
        "assert m.encode_sync(['hello']).shape == (1, 384)\n"
        "print('torch' in sys.modules)\n"
    )
    # derived models already built (onnx: the fixture; model2vec: built here on a first run,
    # which imports torch once, so build it in this process first)
    if provider == "model2vec":
        from gateway.memory.embeddings.static import build_or_find

        build_or_find("all-MiniLM-L6-v2", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_model_identities_are_distinct_and_auto_keeps_the_recorded_model():
    config = EmbeddingConfig(language="en")
    assert config.provider == "auto"
    local, onnx = model_identity("local", "all-MiniLM-L6-v2"), model_identity("onnx", "all-MiniLM-L6-v2")
    assert local == "all-MiniLM-L6-v2" and onnx != local and onnx.startswith("all-MiniLM-L6-v2+onnx-int8")
    assert resolve_provider(config, None) == "onnx"  # a new store
    assert resolve_provider(config, local) == "local"  # built with sentence-transformers
    assert resolve_provider(config, onnx) == "onnx"
    assert resolve_provider(EmbeddingConfig(provider="local"), onnx) == "local"  # explicit wins


async def test_auto_store_gets_onnx_and_a_local_store_is_not_opened_by_onnx(redis_url, onnx_model, local_model):
    new = MemoryConfig(redis_url=redis_url, backend="vectorset", key_prefix=fresh_prefix(),
                       embedding=EmbeddingConfig(language="en"))
    async with open_memory(new) as store:  # provider auto, language en, nothing recorded: onnx
        assert store._embedder.model == onnx_model.model
        hits_before = await store._embedder.embed_many(["hello"])
        assert hits_before.shape == (1, 384)

    old = MemoryConfig(redis_url=redis_url, backend="vectorset", key_prefix=fresh_prefix())
    client = aredis.Redis.from_url(redis_url)
    try:
        await record_settings(client, KeySpace(old.key_prefix), StoreSettings("all-MiniLM-L6-v2", 384, "vectorset", "vectorset-2-q8"))
    finally:
        await client.aclose()
    async with open_memory(old) as store:  # provider auto: the recorded sentence-transformers model
        assert store._embedder.model == "all-MiniLM-L6-v2"
    with pytest.raises(StoreMismatch, match=r"all-MiniLM-L6-v2\+onnx-int8.*reembed"):
        async with open_memory(old, embedder=onnx_model):
            pass


async def test_model2vec_is_distilled_locally_and_keeps_meaning():
    from gateway.memory.embeddings.static import StaticEmbedder

    model = await StaticEmbedder.load(EmbeddingConfig(provider="model2vec"))
    try:
        assert model.model == model_identity("model2vec", "all-MiniLM-L6-v2") != "all-MiniLM-L6-v2"
        vectors = await model.embed_many(["I moved to Berlin", "I relocated to Germany's capital", "tax law filing"])
        assert vectors.shape == (3, 384)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    finally:
        await model.aclose()


async def test_model2vec_gives_a_text_with_no_known_token_a_vector_the_store_keeps(redis_url):
    """Chinese outside MiniLM's 244 characters and emoji embed to a zero row in the static
    table; they get a deterministic unit vector instead, and the store keeps the memory and
    finds it by keyword (a zero vector was refused: the memory was lost)."""
    from gateway.memory.embeddings.static import StaticEmbedder

    model = await StaticEmbedder.load(EmbeddingConfig(provider="model2vec"))
    try:
        texts = ["周末去哪逛逛", "👍", "周末去哪逛逛", "I moved to Berlin"]
        raw = model._static.encode(texts, use_multiprocessing=False)
        assert not raw[0].any() and not raw[1].any()  # the case: the table has no vector for them
        vectors = await model.embed_many(texts)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        assert np.array_equal(vectors[0], vectors[2])  # the same text, the same vector
        assert abs(float(vectors[0] @ vectors[1])) < 0.3 and abs(float(vectors[0] @ vectors[3])) < 0.3
        config = MemoryConfig(redis_url=redis_url, backend="vectorset", key_prefix=fresh_prefix(),
                              embedding=EmbeddingConfig(provider="model2vec"))
        async with open_memory(config, embedder=model) as store:
            tenant = Tenant("zoe", "pal")
            await store.add(tenant, [NewMemory(scope="profile", type="semantic", text="周末去哪逛逛"),
                                     NewMemory(scope="profile", type="semantic", text="I moved to Berlin")])
            hits = await store.search(tenant, "周末逛逛", top_k=2)
            assert hits and hits[0].record.text == "周末去哪逛逛"
    finally:
        await model.aclose()


def test_length_passes_cover_every_text_once_in_bounded_passes():
    from gateway.memory.embeddings.base import length_passes

    lengths = [3, 300, 5, 12, 4, 40, 9, 3]
    passes = length_passes(lengths, 3)
    assert sorted(i for p in passes for i in p) == list(range(len(lengths)))
    for p in passes:
        assert len(p) <= 3 and max(lengths[i] for i in p) <= 2 * min(lengths[i] for i in p) + 8
    assert [300] in [[lengths[i] for i in p] for p in passes]  # the long text padded alone


def test_length_passes_bound_texts_times_longest_squared():
    from gateway.memory.embeddings.base import PASS_ATTENTION, length_passes

    lengths = [60, 55, 58, 62, 57, 61, 59, 56, 12, 12, 12, 12, 500]
    passes = length_passes(lengths, 32, max_attention=16_000)
    assert sorted(i for p in passes for i in p) == list(range(len(lengths)))
    for p in passes:
        assert len(p) * max(lengths[i] for i in p) ** 2 <= 16_000 or len(p) == 1
    assert [500] in [[lengths[i] for i in p] for p in passes]  # over the bound alone: a pass of one
    # 4 x 59**2 = 13,924 <= 16,000 < 5 x 59**2: the eight texts of ~60 tokens in passes of 4
    assert sorted(len(p) for p in passes if max(lengths[i] for i in p) > 50) == [1, 4, 4]
    assert [len(p) for p in length_passes([22] * 32, 32)] == [32]  # 32 queries of 22 tokens: one pass
    assert len(length_passes([60] * 32, 32)) == -(-32 // (PASS_ATTENTION // 60**2))


async def test_shared_passes_are_the_operators_choice_and_move_the_vectors():
    # memory.embedding.exact_passes: false shares passes (cheaper under concurrency): a text's
    # vector then depends on its pass companions, which is what the default avoids
    shared = await OnnxEmbedder.load(EmbeddingConfig(provider="onnx", exact_passes=False))
    try:
        together = await shared.embed_many(SENTENCES)
        alone = np.concatenate([await shared.embed_many([s]) for s in SENTENCES])
        assert not np.array_equal(together, alone)
        assert np.sum(together * alone, axis=1).min() >= 0.95
    finally:
        await shared.aclose()
