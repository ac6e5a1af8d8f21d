"""Micro-batching (issue 10 item 1): concurrent callers coalesced into one forward pass of
the real local model, each getting its own rows; a batch error reaching every caller; a
full queue refusing at once. Failures come from the real OpenAI-compatible client against
an ``httpx.MockTransport`` upstream (the only double)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import httpx
import numpy as np
import pytest

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings import BatchingEmbedder, EmbeddingOverloaded
from gateway.memory.embeddings.openai_api import OpenAIEmbedder
from gateway.runtime.errors import MemoryUnavailable

TEXTS = [
    "I moved to Berlin last spring.", "My sister adopted a grey cat.", "tax law",
    "We went hiking in the Alps in July.", "我喜欢在周末去公园散步。", "Caroline paints sunrises.",
    "The meeting moved to Thursday.", "hello world", "Melanie ran a charity race for mental health.",
    "我的女儿今年上小学了。", "Pottery class is on Tuesdays.", "He prefers short answers with code.",
]


class RecordingEmbedder:
    """The real model, remembering the texts of each call it gets."""

    def __init__(self, inner):
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self.calls: list[list[str]] = []

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return await self.inner.embed_many(texts)

    async def aclose(self) -> None:
        """The session owns the model."""


async def test_concurrent_callers_share_a_pass_and_get_their_own_vectors(local_model):
    recorder = RecordingEmbedder(local_model)
    batcher = BatchingEmbedder(recorder, batch_max=8, batch_wait_ms=0, queue_max=64)
    requests = [[t] for t in TEXTS[:9]] + [TEXTS[9:12]]  # nine queries and one 3-text job
    try:
        results = await asyncio.wait_for(asyncio.gather(*(batcher.embed_many(r) for r in requests)), 60)
    finally:
        await batcher.aclose()
    alone = [await local_model.embed_many([t]) for t in TEXTS]
    for request, got in zip(requests, results, strict=True):
        assert got.shape == (len(request), 384)
        for text, row in zip(request, got, strict=True):
            assert float(row @ alone[TEXTS.index(text)][0]) > 0.9999, text
    # ten callers, twelve texts: coalesced into passes of at most 8 texts, requests never split
    assert len(recorder.calls) < len(requests)
    assert all(len(call) <= 8 for call in recorder.calls)
    assert sorted(t for call in recorder.calls for t in call) == sorted(TEXTS)
    assert TEXTS[9:12] in [call[i:i + 3] for call in recorder.calls for i in range(len(call))]


def failing_upstream(seen: list[list[str]]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content)["input"])
        return httpx.Response(500, json={"error": {"message": "model crashed"}})

    return httpx.MockTransport(handler)


async def test_a_batch_error_reaches_every_caller_of_the_batch():
    seen: list[list[str]] = []
    config = EmbeddingConfig(provider="openai", dimensions=3)
    inner = await OpenAIEmbedder.open(config, "http://up.test/v1", None, transport=failing_upstream(seen))
    batcher = BatchingEmbedder(inner, batch_max=16, batch_wait_ms=0, queue_max=64)
    try:
        calls = asyncio.gather(*(batcher.embed_many([f"t{i}"]) for i in range(5)), return_exceptions=True)
        results = await asyncio.wait_for(calls, 10)
    finally:
        await batcher.aclose()
    assert all(isinstance(r, MemoryUnavailable) for r in results), results
    assert seen == [[f"t{i}" for i in range(5)]]  # one batch, one request upstream


def blocking_upstream(entered: asyncio.Event, release: asyncio.Event, seen: list[list[str]] | None = None) -> httpx.MockTransport:
    async def handler(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        if seen is not None:
            seen.append(texts)
        entered.set()
        await release.wait()
        data = [{"object": "embedding", "index": i, "embedding": [1.0, float(i), 0.0]} for i in range(len(texts))]
        return httpx.Response(200, json={"object": "list", "data": data, "model": "m"})

    return httpx.MockTransport(handler)


async def settle(condition) -> None:
    """Yield to the loop (no timer) until ``condition()`` holds; fail after 100 turns."""
    for _ in range(100):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never held")


async def blocked_batcher(batch_max: int, queue_max: int, seen: list[list[str]] | None = None):
    entered, release = asyncio.Event(), asyncio.Event()
    config = EmbeddingConfig(provider="openai", dimensions=3)
    inner = await OpenAIEmbedder.open(config, "http://up.test/v1", None, transport=blocking_upstream(entered, release, seen))
    batcher = BatchingEmbedder(inner, batch_max=batch_max, batch_wait_ms=0, queue_max=queue_max)
    running = asyncio.ensure_future(batcher.embed_many(["first"]))
    await asyncio.wait_for(entered.wait(), 5)  # the consumer is inside the inner call
    return batcher, running, release


async def test_full_queue_raises_overloaded_and_the_queue_drains_after():
    batcher, running, release = await blocked_batcher(batch_max=2, queue_max=4)
    try:
        waiting = [asyncio.ensure_future(batcher.embed_many(["a", "b"])), asyncio.ensure_future(batcher.embed_many(["c", "d"]))]
        await settle(lambda: batcher.queued_texts == 4)
        with pytest.raises(EmbeddingOverloaded, match="queue_max=4") as refused:
            await asyncio.wait_for(batcher.embed_many(["one too many"]), 5)
        assert refused.value.status == 503
        release.set()
        first = await asyncio.wait_for(running, 5)
        rest = await asyncio.wait_for(asyncio.gather(*waiting), 5)
        assert first.shape == (1, 3) and [r.shape for r in rest] == [(2, 3), (2, 3)]
        assert batcher.batches == 3 and batcher.queued_texts == 0
    finally:
        release.set()
        await batcher.aclose()


async def test_a_cancelled_caller_never_reaches_the_model():
    seen: list[list[str]] = []
    batcher, running, release = await blocked_batcher(batch_max=4, queue_max=8, seen=seen)
    try:
        gone = asyncio.ensure_future(batcher.embed_many(["gone"]))
        left = asyncio.ensure_future(batcher.embed_many(["left"]))
        await settle(lambda: batcher.queued_texts == 2)
        gone.cancel()
        release.set()
        assert (await asyncio.wait_for(left, 5)).shape == (1, 3)
        await asyncio.wait_for(running, 5)
        assert seen == [["first"], ["left"]]
    finally:
        release.set()
        await batcher.aclose()


async def test_closing_fails_the_running_and_the_waiting_callers():
    batcher, running, release = await blocked_batcher(batch_max=4, queue_max=8)
    left = asyncio.ensure_future(batcher.embed_many(["left"]))
    await settle(lambda: batcher.queued_texts == 1)
    await batcher.aclose()
    for future in (running, left):
        with pytest.raises(MemoryUnavailable):
            await asyncio.wait_for(future, 5)
    with pytest.raises(MemoryUnavailable, match="closed"):
        await batcher.embed_many(["after close"])
    release.set()


async def test_a_bulk_caller_is_cut_into_batches_and_others_go_in_between():
    """A caller with more than ``batch_max`` texts is embedded one piece at a time, each
    piece alone; a query that arrives meanwhile goes first, not padded into a piece."""
    seen: list[list[str]] = []
    batcher, running, release = await blocked_batcher(batch_max=2, queue_max=64, seen=seen)
    try:
        bulk = asyncio.ensure_future(batcher.embed_many([f"bulk{i}" for i in range(6)]))  # batch_max 2 < BULK_PIECE
        await settle(lambda: batcher.queued_texts == 2)  # only its first piece waits
        query = asyncio.ensure_future(batcher.embed_many(["query"]))
        await settle(lambda: batcher.queued_texts == 3)
        release.set()
        assert (await asyncio.wait_for(bulk, 5)).shape == (6, 3)
        assert (await asyncio.wait_for(query, 5)).shape == (1, 3)
        await asyncio.wait_for(running, 5)
        assert seen == [["first"], ["query"], ["bulk0", "bulk1"], ["bulk2", "bulk3"], ["bulk4", "bulk5"]]
    finally:
        release.set()
        await batcher.aclose()


def test_bad_batching_settings_are_refused():
    with pytest.raises(ValueError):
        BatchingEmbedder(object(), batch_max=0)  # type: ignore[arg-type]
    with pytest.raises(Exception, match="queue_max"):
        EmbeddingConfig(queue_max=0)
