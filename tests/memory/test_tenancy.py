"""Tenancy attacks: hostile ids stay isolated; 1,000 interleaved tenants never leak."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import numpy as np
import pytest

from gateway.memory import NewMemory, Tenant
from gateway.memory.factory import open_memory
from gateway.memory.keys import KeySpace
from gateway.runtime.errors import InvalidRequest, NotFound
from tests.memory.conftest import backend_config, drop_search_index
from tests.memory.fakes import HashEmbedder

HOSTILE_IDS = [
    "a|b", "a", "*", "a*", '"', "'", "{x}", "{", "}", "@", "-", "--", ":", "a:b", "a b", "a/b",
    "a\u00a0b", "猫", "猫猫", "%41", "A", "ａ", "a,b", "\\", "$(rm)", "..", "x" * 256,
]
REDIS_MODES = ["single", "cluster"]  # every test once on one node, once on the local cluster


@pytest.fixture(params=["vectorset", "search"])
async def fake_store(request, mode_redis) -> AsyncIterator:
    """A store with the cheap deterministic embedder (scale tests only)."""
    config = backend_config(request.param, mode_redis)
    async with open_memory(config, embedder=HashEmbedder()) as store:
        yield store
    await drop_search_index(config)


def unit(rng: np.random.Generator, dims: int) -> np.ndarray:
    vector = rng.standard_normal(dims).astype(np.float32)
    return vector / np.linalg.norm(vector)


async def test_hostile_ids_are_isolated_from_each_other(store):
    """Real model: the same sentence stored under every hostile id pair; each tenant's
    search, list and count see exactly its own profile and event records."""
    stored = {}
    for user in HOSTILE_IDS:
        friend = HOSTILE_IDS[(HOSTILE_IDS.index(user) + 1) % len(HOSTILE_IDS)]
        tenant = Tenant(user, friend)
        stored[tenant] = await store.add(tenant, [
            NewMemory(scope="profile", type="trait", text="I am a hostile tester"),
            NewMemory(scope="event", type="episodic", text="I am a hostile tester"),
        ])
    for tenant, records in stored.items():
        mine = {r.id for r in records}
        hits = await store.search(tenant, "hostile tester", top_k=10)
        assert {h.record.id for h in hits} == mine
        assert {r.id for r in (await store.list(tenant, limit=100)).items} == mine
        assert await store.count(tenant) == 2
        other = Tenant(tenant.user_id, "another friend")
        with pytest.raises(NotFound):
            await store.get(other, records[1].id)
        assert await store.get(other, records[0].id) == records[0]
    assert await store.forget_user("*") == 2
    assert [r async for r in store.export_user("*")] == []
    for survivor in ("a", "a*", "{x}"):
        assert len([r async for r in store.export_user(survivor)]) == 2


@pytest.mark.parametrize("bad", [
    "", "x" * 257, "nul\x00byte", None, 7, " ", " a", "a ", "a\u3000", "line\nbreak", "tab\tx", "del\x7f",
    "c1\x85",
])
def test_empty_oversized_control_and_padded_ids_are_rejected(bad):
    """Issue 9 item 4: one set of id rules (records.tenant_id_problem)."""
    with pytest.raises(InvalidRequest):
        Tenant(bad)
    with pytest.raises(InvalidRequest):
        Tenant("ok", bad if bad is not None else "")


def test_user_keys_cannot_collide_or_glob_into_each_other():
    keys = KeySpace("mg")
    bases = {keys.user_base(u) for u in HOSTILE_IDS}
    assert len(bases) == len(HOSTILE_IDS)
    for user in HOSTILE_IDS:
        inner = keys.user_base(user)[len("mg:{") : -2]
        assert not set(inner) & set("{}:*?[]\\ \n|,")
        for other in bases - {keys.user_base(user)}:
            assert not other.startswith(keys.user_base(user))


async def test_thousand_interleaved_tenants_never_see_each_other(fake_store):
    store, rng = fake_store, np.random.default_rng(7)
    tenants = [Tenant(f"user{i % 500}|{{*}}", f"friend{i // 500}") for i in range(1000)]
    owned: dict[Tenant, list] = {}
    order = list(range(1000)) * 2
    random.Random(3).shuffle(order)
    for n, i in enumerate(order):
        tenant = tenants[i]
        scope = "profile" if n % 3 == 0 else "event"
        memory = NewMemory(scope=scope, type="semantic", text=f"memory {n} of {tenant.user_id}/{tenant.friend_id}")
        owned.setdefault(tenant, []).extend(await store.add_embedded(tenant, [memory], unit(rng, 32)[None, :]))
    for tenant in tenants[::7]:
        visible = {r.id for t, recs in owned.items() if t.user_id == tenant.user_id for r in recs
                   if r.scope.value == "profile" or t == tenant}
        hits = await store.search_by_vector(tenant, unit(rng, 32), top_k=50)
        assert {h.record.id for h in hits} <= visible and len(hits) == len(visible)
        assert {r.id for r in (await store.list(tenant, limit=100)).items} == visible
        friend_b = Tenant(tenant.user_id, "friend1" if tenant.friend_id == "friend0" else "friend0")
        for record in owned[tenant]:
            if record.scope.value == "event":
                with pytest.raises(NotFound):
                    await store.get(friend_b, record.id)
            else:
                assert await store.get(friend_b, record.id) == record
