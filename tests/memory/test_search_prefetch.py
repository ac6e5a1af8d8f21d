"""The vectorset backend's one-command search (``rank_and_read``: every search's rankings
and the records and stored vectors of their candidates, gateway/memory/vectorset.py
``SEARCH``) gives the hits the two round trips gave (rankings, then the candidates), hit
for hit and score for score, on the real local model and the session's real Redis:
retired, superseded and deleted records, thresholds, type and time filters, both
fusions; what the command did not read is read in one more round trip."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

import gateway.memory.tenant_store as tenant_store
from gateway.memory import NewMemory, Tenant
from gateway.memory.backend import Prefetched
from gateway.memory.config import MemoryConfig
from gateway.memory.factory import open_memory
from gateway.memory.tenant_store import TenantMemoryStore
from gateway.memory.vectorset import VectorSetBackend
from tests.memory.conftest import fresh_prefix
from tests.memory.test_store_scale import requests_sent  # noqa: F401  (fixture)

ALICE_TUTOR = Tenant("alice", "tutor")
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)

TOPICS = ["red bicycle repairs", "sourdough bread baking", "piano lessons on Tuesday", "hiking in the Alps",
          "my sister Mia's wedding", "learning Japanese verbs"]
SEARCHES = [  # auto_recall's three, then the other shapes a caller may ask for
    [{"top_k": 5, "threshold": 0.3, "scopes": ["profile", "event"]},
     {"top_k": 15, "threshold": 0.0, "scopes": ["profile"]},
     {"top_k": 6, "threshold": 0.0, "scopes": ["event"]}],
    [{"top_k": 30, "threshold": 0.1},
     {"top_k": 3, "threshold": 0.0, "types": ["episodic"]},
     {"top_k": 4, "threshold": 0.0, "occurred_after": NOW - timedelta(days=20)},
     {"top_k": 8, "threshold": 0.0, "include_retired": True}],
    [{"top_k": 2, "threshold": 0.5}],
]


@pytest.fixture(params=[("convex", "q8"), ("rrf", "q8"), ("convex", "bin")], ids=lambda p: "-".join(p))
async def store(request: pytest.FixtureRequest, redis_url: str, counting_model) -> AsyncIterator[TenantMemoryStore]:
    fusion, quantization = request.param
    config = MemoryConfig(redis_url=redis_url, backend="vectorset", key_prefix=fresh_prefix(), fusion=fusion,
                          quantization=quantization)
    async with open_memory(config, embedder=counting_model) as opened:
        yield opened


async def seed(store: TenantMemoryStore, changes: bool = True) -> None:
    """Profile facts and events on every topic, with conversations and positions (the
    ranking's neighbour and session signals); with ``changes`` some retired, superseded
    or deleted."""
    profile = [NewMemory(scope="profile", type="semantic", text=f"Enjoys {t}, note {i}", importance=0.3 + 0.1 * i)
               for i in range(4) for t in TOPICS]
    events = [NewMemory(scope="event", type="episodic" if i % 2 else "semantic", text=f"Talked about {t} (day {i})",
                        occurred_at=NOW - timedelta(days=5 * i), metadata={"conversation_id": f"c{i}", "position": j})
              for i in range(5) for j, t in enumerate(TOPICS)]
    stored = [*await store.add(Tenant("alice"), profile), *await store.add(ALICE_TUTOR, events)]
    if not changes:
        return
    for record in stored[::7]:
        await store.retire(ALICE_TUTOR, record.id, "contradicted")
    for record in stored[3::11]:
        await store.supersede(ALICE_TUTOR, record.id, NewMemory(scope=record.scope, text=record.text + " (updated)"))
    for record in stored[5::13]:
        await store.delete(ALICE_TUTOR, record.id)


def as_rows(results):
    return [[(h.record.id, h.score, h.similarity, h.relevance) for h in hits] for hits in results]


async def test_one_command_finds_what_two_round_trips_found(store, monkeypatch):
    monkeypatch.setattr(tenant_store, "_now", lambda: NOW)  # recency is computed from now
    await seed(store)
    for query in [*TOPICS, "what did I say about the wedding and the bread?", "zzz"]:
        for searches in SEARCHES:
            together = await store.search_many(ALICE_TUTOR, query, searches)
            with monkeypatch.context() as two_trips:
                two_trips.setattr(VectorSetBackend, "rank_and_read", None)
                reference = await store.search_many(ALICE_TUTOR, query, searches)
            assert as_rows(together) == as_rows(reference), (query, searches)
            assert [h.record for hits in together for h in hits] == [h.record for hits in reference for h in hits]
    found = await store.search_many(ALICE_TUTOR, "red bicycle repairs", SEARCHES[1])
    assert all(not h.record.retired for hits in found[:3] for h in hits)
    assert any(h.record.retired for h in found[3])  # include_retired


async def test_what_the_command_did_not_read_is_read_in_one_more_round_trip(store, monkeypatch, requests_sent):  # noqa: F811
    monkeypatch.setattr(tenant_store, "_now", lambda: NOW)
    await seed(store, changes=False)  # no retired hit: no retry with FILTER (one more trip of its own)
    query, searches = "red bicycle repairs and piano lessons", SEARCHES[0]
    await store.search_many(ALICE_TUTOR, query, searches)  # the query's vector cached
    await store.embedder.flush()
    requests_sent.clear()
    whole = await store.search_many(ALICE_TUTOR, query, searches)
    assert whole[0] and whole[1]
    assert len(requests_sent) == 2  # the cached vector, the command
    original = VectorSetBackend.rank_and_read

    async def forgetful(self, *args, **kwargs):
        got = await original(self, *args, **kwargs)
        keep = sorted(got.records)[::2]  # half the records and none of the stored vectors
        return Prefetched(got.rankings, {d: got.records[d] for d in keep}, {}, got.similarities)

    monkeypatch.setattr(VectorSetBackend, "rank_and_read", forgetful)
    requests_sent.clear()
    partial = await store.search_many(ALICE_TUTOR, query, searches)
    assert as_rows(partial) == as_rows(whole)
    assert len(requests_sent) == 3  # the rest in one round trip
