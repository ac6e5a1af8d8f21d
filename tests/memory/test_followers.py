"""The reverse ``follows`` link (``metadata.followed_by``: gateway.memory.records.FOLLOWED_BY)
and ``get_many``, on every backend, on one Redis node and on the local cluster (the link
is written by the follower's own atomic script call, so its key must be in that call)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gateway.memory import MemoryPatch, NewMemory, Tenant
from gateway.memory.records import FOLLOWED_BY, MAX_FOLLOWERS, SPLIT_FROM
from gateway.runtime.errors import InvalidRequest

ALICE_TUTOR = Tenant("alice", "tutor")
ALICE_CHEF = Tenant("alice", "chef")
BOB_TUTOR = Tenant("bob", "tutor")
REDIS_MODES = ["single", "cluster"]
MISSING = "0" * 32


def profile(text: str, **extra) -> NewMemory:
    return NewMemory(scope="profile", type="semantic", text=text, **extra)


def event(text: str, follows: str | None = None) -> NewMemory:
    return NewMemory(scope="event", type="episodic", text=text, metadata={"follows": follows} if follows else {})


async def followers(store, record_id: str) -> object:
    return (await store.get(ALICE_TUTOR, record_id)).metadata.get(FOLLOWED_BY)


async def test_a_follower_is_listed_once_on_the_record_it_follows_and_rewrites_keep_the_list(store):
    older = await store.add(ALICE_TUTOR, profile("I run a peterbilt 579"))
    assert FOLLOWED_BY not in older.metadata
    newer = await store.add(ALICE_TUTOR, event("traded the ol pete in for a kenworth t680", older.id))
    assert await followers(store, older.id) == [newer.id]
    assert FOLLOWED_BY not in (await store.get(ALICE_TUTOR, newer.id)).metadata
    assert await store.import_records([newer]) == 1  # a replayed write: listed once
    assert await followers(store, older.id) == [newer.id]
    # A rewrite of the older record (text, metadata naming other followers) neither erases nor writes the list.
    await store.update(ALICE_TUTOR, older.id, MemoryPatch(text="I drive a peterbilt 579 out of amarillo",
                                                         metadata={FOLLOWED_BY: [MISSING], "topic": "truck"}))
    again = await store.get(ALICE_TUTOR, older.id)
    assert again.metadata == {"topic": "truck", FOLLOWED_BY: [newer.id]}
    await store.retire(ALICE_TUTOR, older.id, "contradicted")
    assert await followers(store, older.id) == [newer.id]


async def test_the_list_keeps_the_newest_followers_and_skips_retired_missing_and_malformed_targets(store):
    older = await store.add(ALICE_TUTOR, profile("my supervisor is prof de vries"))
    added = [await store.add(ALICE_TUTOR, event(f"supervisor news number {n}", older.id)) for n in range(MAX_FOLLOWERS + 2)]
    assert await followers(store, older.id) == [r.id for r in added[2:]]
    retired = (await store.add(ALICE_TUTOR, event("dr okafor is taking me over"))).model_copy(
        update={"retired": True, "metadata": {"follows": older.id}})
    await store.import_records([retired])
    assert await followers(store, older.id) == [r.id for r in added[2:]]
    before = await store.count(ALICE_TUTOR)
    await store.add(ALICE_TUTOR, event("closed on a 38ft dragger", MISSING))
    await store.add(ALICE_TUTOR, event("decking on the Ellie Rose", "not-a-memory-id"))
    assert await store.count(ALICE_TUTOR) == before + 2  # no hash made for the missing record
    assert await store.get_many(ALICE_TUTOR, [MISSING]) == []


async def test_an_export_imported_again_gets_its_links_back(store):
    older = await store.add(ALICE_TUTOR, profile("I'm an ER nurse"))
    newer = await store.add(ALICE_TUTOR, event("Transferred up to the ICU last month", older.id))
    exported = [r async for r in store.export_user("alice")]
    await store.forget_user("alice")
    assert await store.import_records(exported) == 2
    assert await followers(store, older.id) == [newer.id]


async def test_get_many_returns_what_the_tenant_may_see_in_the_order_asked(store):
    mine = await store.add(ALICE_TUTOR, profile("I keep bees"))
    tutor = await store.add(ALICE_TUTOR, event("We practised French verbs"))
    chef = await store.add(ALICE_CHEF, event("Alice told the chef a secret"))
    bob = await store.add(BOB_TUTOR, profile("Bob keeps goats"))
    asked = [chef.id, tutor.id, mine.id, tutor.id, bob.id, MISSING]
    assert [r.id for r in await store.get_many(ALICE_TUTOR, asked)] == [tutor.id, mine.id]
    assert [r.id for r in await store.get_many(ALICE_CHEF, asked)] == [chef.id, mine.id]
    retired = await store.retire(ALICE_TUTOR, tutor.id, "contradicted")
    assert await store.get_many(ALICE_TUTOR, [tutor.id]) == [retired]  # retired ones included
    assert await store.get_many(ALICE_TUTOR, []) == []
    with pytest.raises(InvalidRequest):
        await store.get_many(ALICE_TUTOR, ["../" + mine.id])


async def test_a_memory_split_off_another_keeps_its_own_list_only(store):
    """What followed the older memory is not copied onto the one split off it: recall
    reads the older memory's list (plugins.auto_recall.stands_for)."""
    older = await store.add(ALICE_TUTOR, profile("I drive the 42 out of the Hunslet depot, early shifts mostly."))
    moved = await store.add(ALICE_TUTOR, event("I'm on the X84 out of Otley garage", older.id))
    kept = await store.add(ALICE_TUTOR, profile("I drive the 42 out of the Hunslet depot.",
                                                metadata={SPLIT_FROM: [older.id]}))
    assert await followers(store, kept.id) is None
    assert await followers(store, older.id) == [moved.id]
    assert (await store.get(ALICE_TUTOR, kept.id)).metadata[SPLIT_FROM] == [older.id]


def test_a_stored_list_keeps_only_memory_ids_when_read_back():
    """A ``followed_by`` field holding something that is not a memory id (written to Redis
    by hand) is read back without it, so reading the followers by id cannot fail on it."""
    from gateway.memory.codec import record_from_hash, record_to_hash
    from gateway.memory.keys import KeySpace
    from gateway.memory.records import build_record

    record = build_record(ALICE_TUTOR, profile("my supervisor is prof de vries"), "b" * 32, datetime(2026, 5, 1, tzinfo=UTC))
    raw = dict(record_to_hash(record, KeySpace("mg")))
    raw[FOLLOWED_BY] = json.dumps(["not-a-memory-id", "a" * 32, 7, None])
    assert record_from_hash(raw).metadata[FOLLOWED_BY] == ["a" * 32]
    raw[FOLLOWED_BY] = json.dumps({"a": 1})
    assert FOLLOWED_BY not in record_from_hash(raw).metadata
