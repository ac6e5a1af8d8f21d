"""Keyword terms are stemmed (Snowball English): "paints" finds "painted" (LoCoMo dev R@10
57.3 -> 61.2 turn by turn, README); a store built before is rebuilt by reembed."""

from __future__ import annotations

import pytest

from gateway.memory import NewMemory, Tenant
from gateway.memory.filters import SearchFilter
from gateway.memory.keys import Partition, visible_partitions
from gateway.memory.tokenize import index_terms, tokenize

CAROL = Tenant("carol-stem", "pal")


def event(text: str) -> NewMemory:
    return NewMemory(scope="event", type="episodic", text=text)


async def test_keyword_ranking_matches_other_forms_of_a_word(store):
    target = await store.add(CAROL, event("Melanie painted two sunrises at the lake"))
    await store.add(CAROL, [event(f"A friend baked bread on day {i}") for i in range(6)])
    hits = await store._repo.backend.keyword_search(visible_partitions(CAROL), "who paints a sunrise?", 5, SearchFilter())
    ids = [d for d, _ in hits]
    assert ids and ids[0] == target.id


async def test_reembed_rebuilds_postings_written_with_unstemmed_terms(store, memory_config):
    if memory_config.backend != "vectorset":
        pytest.skip("postings are the vectorset backend's")
    record = await store.add(CAROL, event("Melanie painted two sunrises at the lake"))
    repo, keys, part = store._repo, store._repo.keys, Partition.of(record)
    stemmed = {keys.postings(part, t) for t in index_terms(record.text)}
    plain = {keys.postings(part, t) for t in tokenize(record.text)}
    await repo.client.delete(*stemmed)  # the store as index version 1 wrote it: unstemmed terms
    for key in plain:
        await repo.client.zadd(key, {record.id: 1.0})
    await repo.client.sadd(keys.registry(CAROL.user_id), *plain)
    async def search(*args):
        return [d for d, _ in await store._repo.backend.keyword_search(*args)]

    assert await search(visible_partitions(CAROL), "who paints a sunrise?", 5, SearchFilter()) != [record.id]
    assert await store.reembed() == 1
    assert await search(visible_partitions(CAROL), "who paints a sunrise?", 5, SearchFilter()) == [record.id]
    left = {k.decode() for k in await repo.client.smembers(keys.registry(CAROL.user_id))}
    assert not (plain - stemmed) & left and stemmed <= left
    assert not await repo.client.exists(*(plain - stemmed))
