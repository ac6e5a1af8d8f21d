"""The ``search`` backend on a real Redis Query Engine (issue 15 item 5): one index per key
prefix over every tenant's records, the tenant confined inside the index query even for
hostile ids, keywords over the same tokens as the vectorset backend, and re-embedding.

These run when ``MEMGATE_TEST_SEARCH_REDIS_URL`` names a server with the Query Engine
(:func:`tests.memory.conftest.backend_url`) and are skipped with that reason otherwise;
the keyword test also runs on the vectorset backend (the session's Redis).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from gateway.memory import MemoryConfig, NewMemory, Tenant
from gateway.memory.factory import choose_backend, open_memory, redis_client
from gateway.memory.filters import SearchFilter
from gateway.memory.keys import KeySpace, visible_partitions
from gateway.memory.search import SearchBackend, index_name
from gateway.memory.tenant_store import TenantMemoryStore
from gateway.settings.memory_settings import SettingsStore
from tests.memory.conftest import backend_url, drop_search_index, fresh_prefix
from tests.memory.fakes import HashEmbedder
from tests.memory.test_tenancy import HOSTILE_IDS

#: Ids that look like another tenant's key part, tag value or query syntax once written
#: into a hash tag, a TAG value or an FT query.
LOOKALIKES = [
    "alice", "{alice}", "alice}", "{alice", "alice}:m:x", "mg:{alice}", "alice\\", "alice*", "alice|bob",
    "alice bob", "ALICE", "alice%", "%61lice", "@tu:{alice}", "alice,bob", "-alice", "alice-", "'alice'",
    '"alice"', "猫alice", "アリス", "alice)", "(alice", "alice~", "$alice", "alice=>[KNN 9 @embedding $vector]",
]


async def _store(backend: str, redis_url: str, dimensions: int = 32) -> AsyncIterator[TenantMemoryStore]:
    config = MemoryConfig(redis_url=backend_url(backend, redis_url), backend=backend, key_prefix=fresh_prefix())
    async with open_memory(config, embedder=HashEmbedder(dimensions=dimensions)) as store:
        yield store
    await drop_search_index(config)


@pytest.fixture
async def search_store(redis_url: str) -> AsyncIterator[TenantMemoryStore]:
    async for store in _store("search", redis_url):
        yield store


@pytest.fixture(params=["vectorset", "search"])
async def any_store(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[TenantMemoryStore]:
    async for store in _store(request.param, redis_url):
        yield store


def backend_of(store: TenantMemoryStore) -> SearchBackend:
    backend = store._repo.backend
    assert isinstance(backend, SearchBackend)
    return backend


async def test_one_index_per_prefix_indexes_every_tenants_records_and_nothing_else(search_store):
    client, keys = search_store._repo.client, search_store._repo.keys
    for user in ("ann", "bob", "cy"):
        await search_store.add(Tenant(user, "pal"), [NewMemory(scope="event", type="episodic", text=f"{user} {i}")
                                                     for i in range(3)])
        await SettingsStore(client, keys.prefix).write(user, "pal", {"reply_length": "short"})
        await client.hset(f"{keys.prefix}:{{{user}}}:lore:pal:books", "b1", "{}")  # a world book's hash
    indexes = [n.decode() for n in await client.execute_command("FT._LIST") if n.decode().startswith(keys.prefix + ":")]
    assert indexes == [index_name(keys)] == [f"{keys.prefix}:idx:v2"]
    info = await client.ft(index_name(keys)).info()
    assert int(info[b"num_docs"] if b"num_docs" in info else info["num_docs"]) == 9  # records only


@pytest.mark.parametrize("ids", [HOSTILE_IDS, LOOKALIKES], ids=["hostile", "lookalikes"])
async def test_index_queries_see_only_the_tenants_own_records(search_store, ids):
    """Every tenant stores the same text under the same vector; the backend's own vector
    and keyword queries (below the store's key-based checks) return each tenant's records
    only: profile plus the events of its own friend."""
    backend, vector = backend_of(search_store), np.ones(32, dtype=np.float32) / np.sqrt(32)
    owned: dict[Tenant, set[str]] = {}
    for n, user in enumerate(ids):
        tenant = Tenant(user, ids[(n + 1) % len(ids)])
        memories = [NewMemory(scope="profile", type="trait", text="the shared secret word is zanzibar"),
                    NewMemory(scope="event", type="episodic", text="the shared secret word is zanzibar")]
        owned[tenant] = {r.id for r in await search_store.add_embedded(tenant, memories, np.stack([vector, vector]))}
    for tenant, mine in owned.items():
        parts = visible_partitions(tenant)
        by_vector = await backend.vector_search(parts, vector, 100, SearchFilter())
        assert {doc_id for doc_id, _ in by_vector} == mine, tenant
        assert {d for d, _ in await backend.keyword_search(parts, "zanzibar secret", 100, SearchFilter())} == mine, tenant
        profile_only = visible_partitions(tenant)[:1]
        assert len(await backend.vector_search(profile_only, vector, 100, SearchFilter())) == 1


async def test_a_query_over_two_tenants_is_refused(search_store):
    backend = backend_of(search_store)
    parts = visible_partitions(Tenant("ann", "x")) + visible_partitions(Tenant("bob", "x"))
    with pytest.raises(ValueError, match="exactly one user"):
        await backend.vector_search(parts, np.ones(32, dtype=np.float32), 5, SearchFilter())
    with pytest.raises(ValueError, match="exactly one user"):
        await backend.keyword_search([], "anything", 5, SearchFilter())


async def test_keywords_rank_context_keywords_and_cjk_on_both_backends(any_store):
    """The keyword ranking covers a memory's context, its keywords and CJK words, with the
    same tokens on both backends (the search backend used to index ``text`` alone with
    the module's English tokenizer: none of the three was found)."""
    tenant = Tenant("ann", "tutor")
    filler = [NewMemory(scope="event", type="episodic", text=f"note {i} about the weather") for i in range(12)]
    await any_store.add(tenant, filler)
    by_context = await any_store.add(tenant, NewMemory(scope="event", type="episodic", text="Italian, mostly",
                                                       context="Which cuisine do you cook most?"))
    by_keyword = await any_store.add(tenant, NewMemory(scope="event", type="episodic", text="we flew there",
                                                       keywords=["Zanzibar"]))
    by_cjk = await any_store.add(tenant, NewMemory(scope="event", type="episodic", text="我喜欢吃北京烤鸭"))
    parts, flt = visible_partitions(tenant), SearchFilter()
    backend = any_store._repo.backend
    assert [d for d, _ in await backend.keyword_search(parts, "cuisine", 3, flt)][:1] == [by_context.id]
    assert [d for d, _ in await backend.keyword_search(parts, "zanzibar", 3, flt)][:1] == [by_keyword.id]
    assert [d for d, _ in await backend.keyword_search(parts, "北京", 3, flt)][:1] == [by_cjk.id]


async def test_a_memory_matching_every_query_term_outranks_one_matching_a_rare_term(any_store):
    """BM25 sums over the query's terms. On RediSearch 2.10 an OR of terms inside the
    tenant filter was scored by its first matching term only, so the full match (scored
    by the common "caroline") fell below a record holding just the rare "group"."""
    tenant = Tenant("ann", "tutor")
    await any_store.add(tenant, [NewMemory(scope="event", type="episodic", text=f"Caroline note {i}")
                                 for i in range(20)])
    await any_store.add(tenant, [NewMemory(scope="event", type="episodic", text="group outing planned"),
                                 NewMemory(scope="event", type="episodic", text="support the team")])
    full = await any_store.add(tenant, NewMemory(scope="event", type="episodic",
                                                 text="Caroline went to the LGBTQ support group"))
    ranked = await any_store._repo.backend.keyword_search(
        visible_partitions(tenant), "When did Caroline go to the LGBTQ support group?", 5, SearchFilter())
    assert ranked[0][0] == full.id


async def test_reembed_moves_the_search_index_to_the_new_size(redis_url):
    config = MemoryConfig(redis_url=backend_url("search", redis_url), backend="search", key_prefix=fresh_prefix())
    tenant = Tenant("ann", "pal")
    async with open_memory(config, embedder=HashEmbedder(dimensions=32)) as store:
        kept = await store.add(tenant, [NewMemory(scope="profile", type="trait", text="Ann rides a red bike"),
                                        NewMemory(scope="event", type="episodic", text="Ann sailed to Capri")])
        client = store._repo.client
        await client.execute_command("FT.CREATE", f"{config.key_prefix}:idx:v1", "ON", "HASH", "PREFIX", "1",
                                     f"{config.key_prefix}:{{", "SCHEMA", "tu", "TAG")  # an older version's
    other = HashEmbedder("other-model", 48)
    async with open_memory(config, embedder=other, check_model=False) as store:
        assert await store.reembed() == 2
    async with open_memory(config, embedder=other) as store:
        vector = (await other.embed_many(["Ann sailed to Capri"]))[0]
        hits = await store.search_by_vector(tenant, vector, top_k=1)
        assert hits[0].record.id == kept[1].id and hits[0].similarity > 0.99
        names = {n.decode() for n in await store._repo.client.execute_command("FT._LIST")}
        assert f"{config.key_prefix}:idx:v1" not in names and index_name(KeySpace(config.key_prefix)) in names
    await drop_search_index(config)


async def test_auto_picks_search_on_a_query_engine(redis_url):
    client = redis_client(backend_url("search", redis_url), MemoryConfig())
    try:
        assert await choose_backend(client, "auto") == "search"
        assert await choose_backend(client, "vectorset") == "vectorset"
    finally:
        await client.aclose()


async def test_auto_keeps_the_backend_a_store_was_built_with(redis_url):
    """A vectorset store on a server that gained the Query Engine keeps being served by
    vectorset under ``auto`` (before: ``search`` was chosen and start-up refused with a
    mismatch); a new store under ``auto`` gets ``search``."""
    url = backend_url("search", redis_url)
    built = MemoryConfig(redis_url=url, backend="vectorset", key_prefix=fresh_prefix())
    tenant = Tenant("ann", "pal")
    async with open_memory(built, embedder=HashEmbedder()) as store:
        kept = await store.add(tenant, NewMemory(scope="profile", type="trait", text="Ann keeps bees"))
    async with open_memory(built.model_copy(update={"backend": "auto"}), embedder=HashEmbedder()) as store:
        assert store.backend_name == "vectorset"
        assert [h.record.id for h in await store.search(tenant, "Ann keeps bees", top_k=1)] == [kept.id]
    new = MemoryConfig(redis_url=url, backend="auto", key_prefix=fresh_prefix())
    async with open_memory(new, embedder=HashEmbedder()) as store:
        assert store.backend_name == "search"
    await drop_search_index(new)
