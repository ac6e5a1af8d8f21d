"""Embedding providers: the real local model, the OpenAI wire format against an
``httpx.MockTransport`` upstream, and the Redis vector cache."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest
import redis.asyncio as aredis

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings import CachedEmbedder, load_embedder
from gateway.memory.embeddings.batching import BatchingEmbedder
from gateway.memory.embeddings.local import model_path
from gateway.memory.embeddings.openai_api import OpenAIEmbedder, parse_embeddings, request_body
from gateway.memory.keys import KeySpace
from gateway.runtime.errors import MemoryUnavailable
from tests.memory.conftest import fresh_prefix
from tests.memory.fakes import CountingEmbedder


async def test_local_model_gives_384_unit_vectors(local_model):
    vectors = await local_model.embed_many(["hello world", "bonjour le monde", "tax law"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_unknown_local_model_is_refused_without_download():
    with pytest.raises(ValueError, match="nothing is downloaded"):
        model_path("sentence-transformers/all-mpnet-base-v2")


def test_request_body_follows_the_openai_wire_format():
    assert request_body("m", ["a"], None) == {"model": "m", "input": ["a"], "encoding_format": "float"}
    assert request_body("m", ["a"], 256)["dimensions"] == 256


def test_parse_embeddings_orders_by_index_and_normalizes():
    payload = {"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [3, 4]}]}
    assert np.allclose(parse_embeddings(payload, 2), [[0.6, 0.8], [0, 1]])
    with pytest.raises(MemoryUnavailable):
        parse_embeddings({"data": []}, 1)


def upstream(seen: list[dict], status: int = 200) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append({"url": str(request.url), "auth": request.headers.get("authorization"), **body})
        data = [{"object": "embedding", "index": i, "embedding": [1.0, float(i), 0.5]} for i in range(len(body["input"]))]
        return httpx.Response(status, json={"object": "list", "data": data, "model": body["model"]})

    return httpx.MockTransport(handler)


async def test_openai_provider_probes_size_batches_and_authenticates():
    seen: list[dict] = []
    config = EmbeddingConfig(provider="openai", model="custom-embed", batch_size=2)
    embedder = await OpenAIEmbedder.open(config, "http://up.test/v1", "sk-up", transport=upstream(seen))
    try:
        assert embedder.dimensions == 3 and embedder.model == "custom-embed"
        vectors = await embedder.embed_many(["a", "b", "c"])
        assert vectors.shape == (3, 3)
        assert [len(s["input"]) for s in seen] == [1, 2, 1]
        assert seen[-1]["url"] == "http://up.test/v1/embeddings" and seen[-1]["auth"] == "Bearer sk-up"
        assert seen[-1]["encoding_format"] == "float" and "dimensions" not in seen[-1]
    finally:
        await embedder.aclose()


async def test_openai_provider_failure_is_memory_unavailable():
    config = EmbeddingConfig(provider="openai", dimensions=3)
    embedder = await OpenAIEmbedder.open(config, "http://up.test/v1", None, transport=upstream([], 500))
    try:
        with pytest.raises(MemoryUnavailable):
            await embedder.embed_many(["a"])
    finally:
        await embedder.aclose()


async def test_openai_provider_needs_a_base_url():
    with pytest.raises(ValueError, match="base_url"):
        await load_embedder(EmbeddingConfig(provider="openai"))


async def test_cache_serves_repeated_texts_from_redis(redis_url, local_model):
    client = aredis.Redis.from_url(redis_url)
    counting = CountingEmbedder(local_model)
    cached = CachedEmbedder(counting, client, KeySpace(fresh_prefix()), ttl_seconds=60)
    try:
        first = await cached.embed_many(["red apples", "green pears"])
        again = await cached.embed_many(["green pears", "blue plums", "red apples"])
        assert counting.texts == ["red apples", "green pears", "blue plums"]
        assert np.array_equal(again[0], first[1]) and np.array_equal(again[2], first[0])
    finally:
        await cached.close()
        await client.aclose()


async def test_cache_write_back_is_not_waited_for_and_lands_in_redis(redis_url, local_model):
    # the new vector is served from memory until its SET is done, then from Redis
    client = aredis.Redis.from_url(redis_url)
    counting = CountingEmbedder(local_model)
    keys = KeySpace(fresh_prefix())
    cached = CachedEmbedder(counting, client, keys, ttl_seconds=60)
    fresh = CachedEmbedder(counting, client, keys, ttl_seconds=60)
    try:
        first = await cached.embed_many(["yellow lemons"])
        await cached.flush()
        assert await client.get(cached._key("yellow lemons")) == first[0].tobytes()
        assert 0 < await client.ttl(cached._key("yellow lemons")) <= 60
        again = await fresh.embed_many(["yellow lemons"])  # nothing pending there: read from Redis
        assert counting.texts == ["yellow lemons"] and np.array_equal(again, first)
    finally:
        await cached.close()
        await fresh.close()
        await client.aclose()


async def test_close_lands_the_queued_write_backs_then_stops_the_one_writer(redis_url, local_model):
    # every miss goes to one writer task; close() waits for what is queued, cancels the
    # writer, and a text embedded after close is served but not written back (the store
    # closes its Redis client right after: nothing may write on it then)
    client = aredis.Redis.from_url(redis_url)
    cached = CachedEmbedder(local_model, client, KeySpace(fresh_prefix()), ttl_seconds=60)
    try:
        await cached.embed_many(["red kites"])
        writer = cached._writer
        await cached.embed_many(["grey herons"])
        assert writer is not None and cached._writer is writer  # one writer for both misses
        await cached.close()
        assert writer.done() and cached._writer is None
        assert await client.exists(cached._key("red kites"), cached._key("grey herons")) == 2
        late = await cached.embed_many(["white storks"])
        assert np.array_equal(late, await local_model.embed_many(["white storks"]))
        assert cached._writer is None and await client.exists(cached._key("white storks")) == 0
    finally:
        await cached.close()
        await client.aclose()


async def test_a_failed_cache_write_back_does_not_fail_the_embedding(redis_url, local_model):
    # a Redis user that may read but not SET: the vectors come back, the failed write-back
    # leaves nothing behind, and the text is embedded again next time
    admin = aredis.Redis.from_url(redis_url)
    user = f"nowrite-{fresh_prefix()}"
    await admin.execute_command("ACL", "SETUSER", user, "on", ">pw", "~*", "+@all", "-set")
    client = aredis.Redis.from_url(redis_url, username=user, password="pw")
    counting = CountingEmbedder(local_model)
    cached = CachedEmbedder(counting, client, KeySpace(fresh_prefix()), ttl_seconds=60)
    try:
        first = await cached.embed_many(["purple figs"])
        assert np.array_equal(first, await local_model.embed_many(["purple figs"]))
        await cached.flush()
        assert await admin.exists(cached._key("purple figs")) == 0
        await cached.embed_many(["purple figs"])
        assert counting.texts == ["purple figs", "purple figs"]
    finally:
        await cached.close()
        await client.aclose()
        await admin.execute_command("ACL", "DELUSER", user)
        await admin.aclose()


class _Ordered:
    """A real embedder behind a real micro-batcher, appending ``"embed"`` to ``events`` when
    texts are queued in it (``embed_many``, or ``submit_if_idle`` when it queues them)."""

    def __init__(self, batcher: BatchingEmbedder, events: list[str]):
        self.batcher, self.events = batcher, events
        self.model, self.dimensions = batcher.model, batcher.dimensions

    def submit_if_idle(self, texts):
        future = self.batcher.submit_if_idle(texts)
        if future is not None:
            self.events.append("embed")
        return future

    async def embed_many(self, texts):
        self.events.append("embed")
        return await self.batcher.embed_many(texts)

    async def aclose(self) -> None:
        await self.batcher.aclose()


async def test_one_text_is_embedded_while_the_cache_is_read_when_the_model_is_idle(redis_url, local_model):
    # a query's miss: the text is queued in the model before the MGET is sent; a hit: the cached bytes come back
    # whatever the early pass did; a batch of two texts, or a busy model: the MGET first,
    # as before
    client = aredis.Redis.from_url(redis_url)
    events: list[str] = []
    real_mget = client.mget

    async def mget(*args, **kwargs):
        found = await real_mget(*args, **kwargs)
        events.append("mget")
        return found

    client.mget = mget  # type: ignore[method-assign]
    counting = CountingEmbedder(local_model)
    inner = _Ordered(BatchingEmbedder(counting), events)
    cached = CachedEmbedder(inner, client, KeySpace(fresh_prefix()), ttl_seconds=60)
    try:
        assert inner.batcher.idle
        first = await cached.embed_many(["brown bears"])
        assert events == ["embed", "mget"] and counting.texts == ["brown bears"]
        assert np.array_equal(first, await local_model.embed_many(["brown bears"]))
        await cached.flush()
        cached._pending.clear()  # served from Redis now, not from memory
        events.clear()
        hit = await cached.embed_many(["brown bears"])
        assert events == ["embed", "mget"] and np.array_equal(hit, first)
        events.clear()
        await cached.embed_many(["black swans", "white owls"])
        assert events == ["mget", "embed"]
        events.clear()
        busy = inner.batcher.submit_if_idle(["grey wolves"])  # another caller's pass, queued in the model
        assert busy is not None and not inner.batcher.idle
        await cached.embed_many(["red foxes"])
        assert events == ["mget", "embed"]
        await busy
    finally:
        await cached.close()
        await inner.aclose()
        await client.aclose()


def test_packaged_weights_are_the_published_ones_and_a_tampered_copy_is_refused(tmp_path):
    from gateway.memory.embeddings.local import _check_packaged

    assert (model_path("all-MiniLM-L6-v2") / "model.safetensors").is_file()  # checked on the way
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(ValueError, match=r"SHA-256.*reinstall"):
        _check_packaged(tmp_path)
