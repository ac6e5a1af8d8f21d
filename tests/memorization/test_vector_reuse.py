"""A turn's memorization reuses the vector its recall already computed: the query
``auto_recall`` embeds (the user's message) is the text of the memory's first view and of
its near-duplicate search, and both go through the same embedding cache (key: model,
dimensions, sha256 of the exact text), so the worker sends the model only the view that
is new (the message with the start of the reply). Through the real gateway and the real
local model; the spy below only counts the texts that reach the model."""

from __future__ import annotations

import asyncio
import hashlib

import redis.asyncio as aredis

from gateway.memory.config import MemoryConfig
from gateway.memory.factory import open_store
from gateway.memory.keys import KeySpace
from gateway.memory.records import Tenant
from tests.memorization.conftest import memorize_config
from tests.memorization.test_memorize_end_to_end import chat, settle
from tests.memory.fakes import CountingEmbedder
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY

ALICE, BOB = Tenant("alice", "tutor"), Tenant("bob", "tutor")


async def cached(redis_url: str, prefix: str, model: str, dims: int, text: str, timeout_s: float = 30) -> None:
    """Wait until ``text``'s vector is in the embedding cache (the request path writes it
    back after its search, without waiting); fails after ``timeout_s``."""
    key = KeySpace(prefix).embedding_cache(model, dims, hashlib.sha256(text.encode()).hexdigest())
    client = aredis.Redis.from_url(redis_url)
    try:
        deadline = asyncio.get_running_loop().time() + timeout_s
        while not await client.exists(key):
            assert asyncio.get_running_loop().time() < deadline, f"{text!r} never cached"
            await asyncio.sleep(0.02)
    finally:
        await client.aclose()


async def test_a_recalled_turn_is_memorized_with_one_new_embedding(start_gateway, env):
    config = memorize_config("verbatim", worker={"in_serve": 0})
    gw = start_gateway(
        plugins=[{"name": "auto_recall"}, {"name": "memorize", "config": config.model_dump(mode="json")}],
        clients=[{"key": ALICE_KEY, "user_id": "alice", "friend_id": "tutor"},
                 # bob's key runs without recall: his turn has no query vector to reuse
                 {"key": BOB_KEY, "user_id": "bob", "friend_id": "tutor",
                  "plugins": {"auto_recall": {"enabled": False}}},
                 {"key": ADMIN_KEY, "user_id": "ops", "admin": True}])
    recalled = "I walked my dog to lake number 7 and met my friend Anna there."
    unrecalled = "I walked my dog to lake number 8 and met my friend Bert there."
    reply = (await chat(gw, [{"role": "user", "content": recalled}])).json()["choices"][0]["message"]["content"]
    await chat(gw, [{"role": "user", "content": unrecalled}], headers={"authorization": f"Bearer {BOB_KEY}"})
    await settle(gw, 2)
    spy = CountingEmbedder(env.shared_model.for_gateway())
    await cached(env.redis_url, gw.config.memory.key_prefix, spy.model, spy.dimensions, recalled)
    async with open_store(env.redis, MemoryConfig(redis_url=env.redis_url, key_prefix=gw.config.memory.key_prefix),
                          embedder=spy) as store:
        await env.drain(config, store)
        assert [r.text for r in (await store.list(ALICE, limit=10)).items] == [recalled]
        assert [r.text for r in (await store.list(BOB, limit=10)).items] == [unrecalled]
    second_view = reply[:100].strip()
    # alice's turn: only its second view (the message and the reply's start) is new
    assert [t for t in spy.texts if "number 7" in t] == [f"{recalled}\n{second_view}"]
    # bob's: its message (first view and near-duplicate query) and its second view
    assert sorted(t for t in spy.texts if "number 8" in t) == sorted([unrecalled, f"{unrecalled}\n{second_view}"])


async def test_an_e5_memory_is_embedded_once_not_again_as_a_search_text(start_gateway, env):
    """Under an asymmetric model (E5 marks a search text ``query: ``), the near-duplicate
    search of a new memory uses the vector of its stored text, which the job embeds anyway,
    instead of embedding ``query: <text>`` a second time (the default store routes Chinese
    to multilingual-e5)."""
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider

    config = memorize_config("verbatim", worker={"in_serve": 0})
    gw = start_gateway(
        plugins=[{"name": "memorize", "config": config.model_dump(mode="json")}],
        clients=[{"key": BOB_KEY, "user_id": "bob", "friend_id": "tutor"},
                 {"key": ADMIN_KEY, "user_id": "ops", "admin": True}])
    told = "我每周六带狗去湖边散步，在那儿认识了老同学小林。"
    await chat(gw, [{"role": "user", "content": told}], headers={"authorization": f"Bearer {BOB_KEY}"})
    await settle(gw, 1)
    model = await load_provider(EmbeddingConfig(language="mixed"))
    spy = CountingEmbedder(model)
    try:
        async with open_store(env.redis, MemoryConfig(redis_url=env.redis_url, key_prefix="e5" + gw.config.memory.key_prefix),
                              embedder=spy) as store:
            await env.drain(config, store)
            assert [r.text for r in (await store.list(BOB, limit=10)).items] == [told]
    finally:
        await model.aclose()
    sent = [t for t in spy.texts if "老同学" in t]
    assert told in sent and not any(t.startswith("query: ") for t in sent), sent
