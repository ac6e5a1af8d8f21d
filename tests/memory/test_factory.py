"""Opening the store: backend probe, embedded Redis, model-change detection and re-embed,
Redis outages (503 then recovery without restart)."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest
import redis.asyncio as aredis

from gateway.memory import MemoryConfig, NewMemory, StoreMismatch, Tenant
from gateway.memory.factory import BackendUnavailable, choose_backend, open_memory
from gateway.runtime.errors import MemoryUnavailable
from gateway.runtime.redis_server import EmbeddedRedis
from tests.memory.conftest import fresh_prefix
from tests.memory.fakes import HashEmbedder

ALICE = Tenant("alice", "tutor")


def note(text: str) -> NewMemory:
    return NewMemory(scope="profile", type="semantic", text=text)


async def test_auto_picks_vector_sets_on_redis_without_query_engine(redis_url):
    client = aredis.Redis.from_url(redis_url)
    try:
        assert await choose_backend(client, "auto") == "vectorset"
        assert await choose_backend(client, "vectorset") == "vectorset"
        with pytest.raises(BackendUnavailable, match="no Query Engine"):
            await choose_backend(client, "search")
    finally:
        await client.aclose()


async def test_model_change_is_refused_until_reembed(redis_url, counting_model):
    config = MemoryConfig(redis_url=redis_url, key_prefix=fresh_prefix())
    async with open_memory(config, embedder=counting_model) as store:
        kept = await store.add(ALICE, [note("Alice grows tomatoes"), note("Alice rides a red bike")])
        await store.add(Tenant("bob", "x"), NewMemory(scope="event", type="episodic", text="Bob sailed"))
    other_model = HashEmbedder("other-model", 48)
    with pytest.raises(StoreMismatch) as refused:
        async with open_memory(config, embedder=other_model):
            pass
    assert "memgate memories reembed" in str(refused.value)
    assert "all-MiniLM-L6-v2" in str(refused.value) and "other-model" in str(refused.value)
    async with open_memory(config, embedder=other_model, check_model=False) as store:
        assert await store.reembed() == 3
    async with open_memory(config, embedder=other_model) as store:
        vector = (await other_model.embed_many(["Alice rides a red bike"]))[0]
        hits = await store.search_by_vector(ALICE, vector, top_k=1)
        assert hits[0].record.id == kept[1].id and hits[0].score > 0.99
        assert store.dimensions == 48


async def test_embedded_redis_starts_under_data_dir_when_no_url(tmp_path):
    config = MemoryConfig(redis_url=None, data_dir=tmp_path, key_prefix="mg")
    async with open_memory(config, embedder=HashEmbedder()) as store:
        record = await store.add(ALICE, note("embedded works"))
        assert (await store.get(ALICE, record.id)).text == "embedded works"
    assert (tmp_path / "redis").is_dir()


async def test_redis_outage_gives_503_and_the_store_recovers(counting_model):
    """A second server on its own data dir, reached through a symlink so the URL survives
    a restart (each start makes a new socket directory)."""
    data_dir = Path(tempfile.mkdtemp(prefix="mg-outage-"))
    link = data_dir / "r.sock"
    server = EmbeddedRedis(data_dir / "redis")

    def start() -> None:
        server.start()
        link.unlink(missing_ok=True)
        os.symlink(server.socket_path, link)

    await asyncio.to_thread(start)
    config = MemoryConfig(redis_url=f"unix://{link}", key_prefix="mg", socket_timeout_s=1.0)
    try:
        async with open_memory(config, embedder=counting_model) as store:
            record = await store.add(ALICE, note("Alice survives outages"))
            # no wait for the once-a-second AOF fsync: stop() sends SIGTERM, and Redis
            # flushes and fsyncs the AOF as it shuts down
            await asyncio.to_thread(server.stop)
            for call in (store.get(ALICE, record.id), store.search(ALICE, "outages"),
                         store.add(ALICE, note("during the outage")), store.count(ALICE)):
                with pytest.raises(MemoryUnavailable):
                    await call
            await asyncio.to_thread(start)
            assert (await store.get(ALICE, record.id)).text == "Alice survives outages"
            assert (await store.search(ALICE, "outages", top_k=1))[0].record.id == record.id
    finally:
        await asyncio.to_thread(server.stop)


async def test_lazy_embedder_loads_once_on_first_embed_and_checks_the_size():
    """Issue 9 item 13: commands that never embed never load the model."""
    from gateway.memory.factory import LazyEmbedder

    async def load():
        return HashEmbedder("m", 32)

    lazy = LazyEmbedder(load, "m", 32)
    assert (lazy.model, lazy.dimensions, lazy.loads) == ("m", 32, 0)
    first, second = await asyncio.gather(lazy.embed_many(["a"]), lazy.embed_many(["b"]))
    assert lazy.loads == 1 and first.shape == second.shape == (1, 32)
    wrong = LazyEmbedder(load, "m", 64)  # the store holds 64-dim vectors of "m"
    with pytest.raises(StoreMismatch, match="memgate memories reembed"):
        await wrong.embed_many(["a"])
