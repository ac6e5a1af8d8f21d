"""The MemoryStore contract, run against every backend with the real local model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from gateway.memory import MemoryPatch, MemoryRecord, NewMemory, Tenant
from gateway.memory.filters import SearchFilter
from gateway.memory.keys import visible_partitions
from gateway.memory.maintenance import record_to_jsonl, records_from_jsonl
from gateway.runtime.errors import InvalidRequest, NotFound, PayloadTooLarge, UnprocessableInput

ALICE_TUTOR = Tenant("alice", "tutor")
ALICE_CHEF = Tenant("alice", "chef")
BOB_TUTOR = Tenant("bob", "tutor")
REDIS_MODES = ["single", "cluster"]  # every test once on one node, once on the local cluster


def profile(text: str, type_: str = "preference", **extra) -> NewMemory:
    return NewMemory(scope="profile", type=type_, text=text, **extra)


def event(text: str, **extra) -> NewMemory:
    return NewMemory(scope="event", type="episodic", text=text, **extra)


async def test_add_then_get_returns_the_stored_record(store):
    record = await store.add(ALICE_TUTOR, profile("I love spicy Thai food", keywords=["food"]))
    assert len(record.id) == 32 and record.user_id == "alice" and record.friend_id is None
    assert record.created_at == record.updated_at == record.occurred_at
    assert await store.get(ALICE_CHEF, record.id) == record
    stored_event = await store.add(ALICE_TUTOR, event("We practised French verbs"))
    assert stored_event.friend_id == "tutor"
    assert await store.get(ALICE_TUTOR, stored_event.id) == stored_event


async def test_get_hides_other_friends_events_and_other_users(store):
    secret = await store.add(ALICE_TUTOR, event("Alice told the tutor a secret"))
    with pytest.raises(NotFound):
        await store.get(ALICE_CHEF, secret.id)
    with pytest.raises(NotFound):
        await store.get(BOB_TUTOR, secret.id)
    with pytest.raises(NotFound):
        await store.get(Tenant("alice"), secret.id)
    with pytest.raises(InvalidRequest):
        await store.get(ALICE_TUTOR, "../" + secret.id)


async def test_update_changes_fields_and_reembeds_new_text(store, counting_model):
    record = await store.add(ALICE_TUTOR, profile("My favourite colour is blue"))
    updated = await store.update(ALICE_TUTOR, record.id, MemoryPatch(text="I keep three cats at home", importance=0.9))
    assert updated.text == "I keep three cats at home" and updated.importance == 0.9
    assert updated.created_at == record.created_at and updated.updated_at > record.updated_at
    assert counting_model.texts[-1] == "I keep three cats at home"
    assert await store.get(ALICE_TUTOR, record.id) == updated
    hits = await store.search(ALICE_TUTOR, "pets at my house", top_k=1)
    assert hits[0].record.id == record.id and hits[0].score > 0.3


async def test_delete_erases_record_from_get_search_and_count(store):
    kept = await store.add(ALICE_TUTOR, profile("I play the cello"))
    gone = await store.add(ALICE_TUTOR, profile("I play the violin"))
    assert await store.count(ALICE_TUTOR) == 2
    await store.delete(ALICE_TUTOR, gone.id)
    with pytest.raises(NotFound):
        await store.get(ALICE_TUTOR, gone.id)
    hits = await store.search(ALICE_TUTOR, "violin", top_k=5)
    assert [h.record.id for h in hits] == [kept.id]
    assert await store.count(ALICE_TUTOR) == 1
    with pytest.raises(NotFound):
        await store.delete(ALICE_CHEF, (await store.add(ALICE_TUTOR, event("x lesson"))).id)


async def test_list_pages_newest_first_with_a_stable_cursor(store):
    added = []
    for i in range(7):
        added += await store.add(ALICE_TUTOR, [profile(f"fact number {i}") if i % 2 else event(f"event number {i}")])
    seen, cursor, pages = [], None, 0
    while True:
        page = await store.list(ALICE_TUTOR, cursor=cursor, limit=3)
        seen += page.items
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert [r.id for r in seen] == sorted((r.id for r in added), reverse=True)
    events_only = await store.list(ALICE_TUTOR, scope="event", limit=50)
    assert {r.scope.value for r in events_only.items} == {"event"} and len(events_only.items) == 4
    chef_view = await store.list(ALICE_CHEF, limit=50)
    assert {r.scope.value for r in chef_view.items} == {"profile"}
    typed = await store.list(ALICE_TUTOR, types=["episodic"], limit=2)
    assert len(typed.items) == 2 and typed.next_cursor is not None


async def test_search_scores_are_cosines_and_meaningful(store):
    food = await store.add(ALICE_TUTOR, profile("I really enjoy eating spicy Thai curries"))
    await store.add(ALICE_TUTOR, profile("The quarterly tax report is due in April", "semantic"))
    hits = await store.search(ALICE_TUTOR, "What kind of food do I like?", top_k=5)
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    by_id = {h.record.id: h.score for h in hits}
    assert hits[0].record.id == food.id
    assert by_id[food.id] > max(s for i, s in by_id.items() if i != food.id) + 0.2
    exact = await store.search(ALICE_TUTOR, "I really enjoy eating spicy Thai curries", top_k=1)
    assert exact[0].score > 0.97


async def test_threshold_drops_weak_hits(store):
    await store.add(ALICE_TUTOR, [profile("My sister lives in Lisbon"), profile("Quantum chromodynamics is hard", "semantic")])
    hits = await store.search(ALICE_TUTOR, "Where does my sister live?", top_k=5, threshold=0.5)
    assert [h.record.text for h in hits] == ["My sister lives in Lisbon"]
    assert await store.search(ALICE_TUTOR, "Where does my sister live?", threshold=1.0) == []


async def test_search_sees_profile_and_own_events_only(store):
    await store.add(ALICE_TUTOR, [profile("Alice is allergic to peanuts", "trait"), event("Alice ate peanuts at the tutor's")])
    await store.add(ALICE_CHEF, event("The chef cooked a peanut sauce for Alice"))
    await store.add(BOB_TUTOR, profile("Bob is allergic to peanuts", "trait"))
    texts = {h.record.text for h in await store.search(ALICE_TUTOR, "peanuts", top_k=10)}
    assert texts == {"Alice is allergic to peanuts", "Alice ate peanuts at the tutor's"}
    chef = {h.record.text for h in await store.search(ALICE_CHEF, "peanuts", top_k=10)}
    assert chef == {"Alice is allergic to peanuts", "The chef cooked a peanut sauce for Alice"}
    profile_only = await store.search(ALICE_TUTOR, "peanuts", scopes=["profile"])
    assert [h.record.scope.value for h in profile_only] == ["profile"]


async def test_types_and_time_range_filter_search(store):
    now = datetime.now(UTC)
    old = await store.add(ALICE_TUTOR, event("We visited Rome together", occurred_at=now - timedelta(days=400)))
    new = await store.add(ALICE_TUTOR, event("We visited Paris together", occurred_at=now - timedelta(days=2)))
    goal = await store.add(ALICE_TUTOR, profile("Alice wants to visit Tokyo", "goal"))
    recent = await store.search(ALICE_TUTOR, "city trips", occurred_after=now - timedelta(days=30), types=["episodic"])
    assert [h.record.id for h in recent] == [new.id]
    earlier = await store.search(ALICE_TUTOR, "city trips", occurred_before=now - timedelta(days=30))
    assert [h.record.id for h in earlier] == [old.id]
    goals = await store.search(ALICE_TUTOR, "city trips", types=["goal"])
    assert [h.record.id for h in goals] == [goal.id]


async def test_supersede_keeps_the_old_version_auditable(store):
    old = await store.add(ALICE_TUTOR, profile("Alice lives in Berlin", "semantic"))
    new = await store.supersede(ALICE_TUTOR, old.id, profile("Alice lives in Munich", "semantic"))
    assert new.supersedes == old.id
    kept = await store.get(ALICE_TUTOR, old.id)
    assert kept.retired and kept.superseded_by == new.id and kept.retired_at is not None
    hits = await store.search(ALICE_TUTOR, "Where does Alice live?")
    assert [h.record.id for h in hits] == [new.id]
    audit = await store.search(ALICE_TUTOR, "Where does Alice live?", include_retired=True)
    assert {h.record.id for h in audit} == {old.id, new.id}
    assert {r.id for r in (await store.list(ALICE_TUTOR)).items} == {old.id, new.id}


async def test_retire_hides_from_search_but_not_get(store):
    record = await store.add(ALICE_TUTOR, profile("Alice is vegetarian", "trait"))
    retired = await store.retire(ALICE_TUTOR, record.id, "contradicted: she ate steak")
    assert retired.retired and retired.retired_reason == "contradicted: she ate steak"
    assert (await store.get(ALICE_TUTOR, record.id)).retired
    assert await store.search(ALICE_TUTOR, "vegetarian diet") == []


async def test_export_import_round_trip_keeps_ids_and_times(store):
    originals = await store.add(ALICE_TUTOR, [profile("Alice speaks Portuguese"), event("We read Pessoa poems")])
    lines = [record_to_jsonl(r) async for r in store.export_user("alice")]
    assert len(lines) == 2
    assert await store.forget_user("alice") == 2
    assert await store.count(ALICE_TUTOR) == 0
    assert await store.import_records(records_from_jsonl(lines)) == 2
    for original in originals:
        assert await store.get(ALICE_TUTOR, original.id) == original
    hits = await store.search(ALICE_TUTOR, "poetry reading", top_k=1)
    assert hits[0].record.id == originals[1].id


async def test_forget_user_erases_every_friend_and_spares_others(store):
    await store.add(ALICE_TUTOR, [profile("a1 fact"), event("a1 event")])
    await store.add(ALICE_CHEF, event("a2 event"))
    bob = await store.add(BOB_TUTOR, profile("bob fact"))
    assert await store.forget_user("alice") == 3
    assert await store.count(ALICE_TUTOR) == 0 and await store.count(ALICE_CHEF) == 0
    assert [r.id async for r in store.export_user("alice")] == []
    assert await store.get(BOB_TUTOR, bob.id) == bob
    repo = store._repo  # no key of alice's may survive (postings, sets, listings, registries)
    left = [k async for k in repo.client.scan_iter(match=repo.keys.user_pattern("alice"))]
    assert left == []
    assert [k async for k in repo.client.scan_iter(match=repo.keys.user_pattern("bob"))]


async def test_second_embedding_of_same_text_hits_the_cache(store, counting_model):
    await store.add(ALICE_TUTOR, profile("Alice collects vintage stamps"))
    await store.search(ALICE_TUTOR, "warm-up")  # a process's first search embeds the calibration pairs once
    calls = len(counting_model.texts)
    await store.search(ALICE_TUTOR, "Alice collects vintage stamps")
    await store.add(ALICE_CHEF, profile("Alice collects vintage stamps"))
    assert len(counting_model.texts) == calls


async def test_keyword_ranking_finds_rare_names(store):
    target = await store.add(ALICE_TUTOR, event("Zorblax fixed the bicycle"))
    await store.add(ALICE_TUTOR, [event(f"A friend fixed the bicycle on day {i}") for i in range(8)])
    backend = store._repo.backend
    parts = visible_partitions(ALICE_TUTOR)
    keyword_hits = await backend.keyword_search(parts, "who is Zorblax?", 5, SearchFilter())
    assert keyword_hits[0][0] == target.id and keyword_hits[0][1] > 0
    hits = await store.search(ALICE_TUTOR, "who is Zorblax?", top_k=1)
    assert hits[0].record.id == target.id


async def test_bad_input_maps_to_gateway_errors(store):
    with pytest.raises(PayloadTooLarge):
        await store.add(ALICE_TUTOR, profile("x" * 8001))
    with pytest.raises(UnprocessableInput):
        await store.add(Tenant("alice"), event("an event needs a friend"))
    with pytest.raises(UnprocessableInput):
        await store.search_by_vector(ALICE_TUTOR, np.ones(store.dimensions + 1))
    with pytest.raises(UnprocessableInput):
        await store.search(ALICE_TUTOR, "x y", scopes=["galaxy"])
    with pytest.raises(UnprocessableInput):
        await store.search(ALICE_TUTOR, "x y", types=["gossip"])
    with pytest.raises(UnprocessableInput):
        await store.search(ALICE_TUTOR, "x y", top_k=0)
    with pytest.raises(InvalidRequest):
        await store.update(ALICE_TUTOR, "not-an-id", MemoryPatch(text="x"))
    with pytest.raises(InvalidRequest):
        await store.list(ALICE_TUTOR, cursor="*")


async def test_count_covers_profile_and_own_events(store):
    await store.add(ALICE_TUTOR, [profile("p one"), event("e one"), event("e two")])
    await store.add(ALICE_CHEF, event("e three"))
    assert await store.count(ALICE_TUTOR) == 3
    assert await store.count(ALICE_CHEF) == 2
    assert await store.count(Tenant("alice")) == 1
    assert isinstance((await store.list(ALICE_TUTOR)).items[0], MemoryRecord)


async def test_search_skips_many_retired_neighbours(store):
    """More retired records among the nearest candidates than the candidate list holds."""
    await store.add(ALICE_TUTOR, [profile(f"Alice ate {n} green apples today") for n in range(80)])
    ranking = [h.record for h in await store.search(ALICE_TUTOR, "Alice ate green apples", top_k=80)]
    for record in ranking[:75]:  # retire the nearest 75: the live five rank last
        await store.retire(ALICE_TUTOR, record.id, "test")
    hits = await store.search(ALICE_TUTOR, "Alice ate green apples", top_k=5)
    assert {h.record.id for h in hits} == {r.id for r in ranking[75:]}
    everything = await store.search(ALICE_TUTOR, "Alice ate green apples", top_k=80, include_retired=True)
    assert len(everything) == 80
