"""Of two live memories on the same thing, the newer is shown whenever the older is
(plugins.auto_recall.newer_statements): a candidate of the searches whose
``metadata.follows`` names a shown memory joins ``high``, and so does one following it in
turn; end to end through the real gateway, the openai SDK and the default embedder."""

from __future__ import annotations

import asyncio
import copy

import openai

from gateway.memorization.split import split_memory
from gateway.memory.factory import open_memory
from gateway.memory.records import MAX_SPLIT_DEPTH, Tenant, split_sources
from gateway.runtime.redis_server import EmbeddedRedis
from plugins.auto_recall import NEWER_STATEMENT, AutoRecall, live_followers, newer_statements, stands_for
from tests.recall.conftest import CHAIN, REGISTRY, memory
from tests.recall.records import hit
from tests.support.gateway import ALICE_KEY

ALICE = Tenant("alice", "tutor")


def test_a_candidate_following_a_shown_memory_joins_and_so_does_the_next_one():
    old = hit("I run a peterbilt 579", 0.9)
    mid = hit("traded the pete in for a kenworth", 0.2, metadata={"follows": old.record.id})
    last = hit("sold the kenworth, driving regional now", 0.1, metadata={"follows": mid.record.id})
    other = hit("I like country music", 0.5, metadata={"follows": "m-someone-else"})
    pool = [last, other, old, mid]
    assert [h.record.text for h in newer_statements(pool, {old.record.id})] == [mid.record.text, last.record.text]
    assert newer_statements(pool, set()) == ()
    assert newer_statements(pool, {old.record.id, mid.record.id, last.record.id}) == ()  # shown already


def test_a_memory_split_off_another_is_followed_by_what_followed_that_one():
    whole = hit("I drive the 42 out of the Hunslet depot, early shifts mostly", 0.0)
    kept = hit("I drive the 42 out of the Hunslet depot", 0.9, metadata={"split_from": whole.record.id})
    moved = hit("I'm on the X84 out of Otley garage", 0.2, metadata={"follows": whole.record.id})
    after = hit("the X84 is late again", 0.1, metadata={"follows": moved.record.id})
    pool = [after, kept, moved]
    assert [h.record.text for h in newer_statements(pool, {kept.record.id})] == [moved.record.text, after.record.text]
    assert newer_statements([after, moved], {kept.record.id}) == ()  # the shown one not among the candidates
    assert [h.record.id for h in live_followers([moved.record, after.record], stands_for(kept.record))] == [moved.record.id]


def test_a_split_of_a_split_off_memory_is_followed_by_what_followed_every_generation():
    """Memorization's own split (gateway.memorization.split.split_memory) names every older
    memory, so the followers of the first one follow the second split too; a lone id (as
    written before the list) still names one generation."""
    whole = hit("I drive the 42 out of the Hunslet depot, early shifts mostly, and I live in Leeds", 0.0)
    first_text, second_text = "I drive the 42 out of the Hunslet depot, early shifts mostly", "I drive the 42"
    first = hit(first_text, 0.0, metadata=split_memory(whole.record, first_text).metadata)
    second = hit(second_text, 0.9, metadata=split_memory(first.record, second_text).metadata)
    assert second.record.metadata["split_from"] == [first.record.id, whole.record.id]
    home = hit("we moved to York in the spring", 0.2, metadata={"follows": whole.record.id})
    shift = hit("I'm on lates now", 0.1, metadata={"follows": first.record.id})
    other = hit("I like country music", 0.5, metadata={"follows": "0" * 32})
    pool = [other, shift, second, home]
    assert [h.record.text for h in newer_statements(pool, {second.record.id})] == [shift.record.text, home.record.text]
    assert stands_for(second.record) == {second.record.id, first.record.id, whole.record.id}
    legacy = hit("I drive the 42 bus", 0.9, metadata={"split_from": first.record.id})
    assert stands_for(legacy.record) == {legacy.record.id, first.record.id}
    odd = hit("I drive a bus", 0.9, metadata={"split_from": ["../x", 7, None]})  # a caller's metadata: no ids
    assert stands_for(odd.record) == {odd.record.id}


def test_a_callers_long_split_from_list_stands_for_the_newest_generations_only():
    """``metadata.split_from`` is a caller's to write too (up to the metadata's byte limit):
    recall takes the first MAX_SPLIT_DEPTH well-formed ids, as many as memorization ever
    writes, so a memory that reaches the prompt never has recall read hundreds by id."""
    ids = [hit(f"older memory {i}", 0.0).record.id for i in range(MAX_SPLIT_DEPTH + 12)]
    listed = hit("I drive the 42", 0.9, metadata={"split_from": ["../x", *ids]})
    assert split_sources(listed.record.metadata) == ids[:MAX_SPLIT_DEPTH]
    assert stands_for(listed.record) == {listed.record.id, *ids[:MAX_SPLIT_DEPTH]}


def _prompt(gw, upstream, text: str) -> str:
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
    return "\n".join(str(m["content"]) for m in upstream.chat_requests()[-1].json["messages"] if m["role"] == "system")


def test_the_newer_statement_reaches_the_prompt_with_the_older_one_only_when_linked(start_gateway, upstream, seed):
    older = "I run a peterbilt 579 outta amarillo, chicago and back every week"
    newer = "traded the ol pete in for a kenworth t680 last week, ride is so much smoother"
    events = ("Watched a documentary about bees", "The party at Sam's place was loud")
    for linked in (True, False):
        gw = start_gateway(registry=REGISTRY, plugins=CHAIN)  # a fresh key prefix: seeded anew
        (old,) = seed(gw, ALICE, memory(older, scope="profile", type="semantic"))
        seed(gw, ALICE, *[memory(t, scope="event") for t in events],
             memory(newer, scope="event", metadata={"follows": old.id} if linked else {}))
        prompt = _prompt(gw, upstream, "whats a good maintenance schedule for my truck")
        assert older in prompt
        assert (newer in prompt) is linked, prompt


def _retire(gw, shared_model, tenant: Tenant, memory_id: str) -> None:
    async def run() -> None:
        async with open_memory(gw.config.memory, embedder=shared_model.for_gateway()) as store:
            await store.retire(tenant, memory_id, "contradicted")

    asyncio.run(run())


def test_a_follower_no_search_found_is_read_by_id_when_the_caller_may_see_it(start_gateway, upstream, seed, shared_model):
    """The older profile memory reaches the prompt (the whole profile fits) and the
    request ("cover letter": no life topic, so no event search) shares no words with the
    follower, so no search finds it: its id in the older memory's ``followed_by`` brings
    it, and its own follower after it; another friend's follower and a retired one stay
    out."""
    older = "I'm an ER nurse at St. Mary's, three years now"
    newer = "Transferred up to the ICU last month, same hospital."
    newest = "Got my CCRN certification in the mail today!!"
    chef_only = "Told the chef I'm quitting nursing for culinary school"
    retired = "I switched to night shifts on the pediatric floor"
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    (old,) = seed(gw, ALICE, memory(older, scope="profile", type="semantic"))
    (mid,) = seed(gw, ALICE, memory(newer, scope="event", metadata={"follows": old.id}))
    (last,) = seed(gw, ALICE, memory(newest, scope="event", metadata={"follows": mid.id}))
    (other,) = seed(gw, Tenant("alice", "chef"), memory(chef_only, scope="event", metadata={"follows": old.id}))
    (gone,) = seed(gw, ALICE, memory(retired, scope="event", metadata={"follows": old.id}))
    _retire(gw, shared_model, ALICE, gone.id)
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "can you help me write a cover letter"}])
    prompt = "\n".join(str(m["content"]) for m in upstream.chat_requests()[-1].json["messages"] if m["role"] == "system")
    assert older in prompt and newer in prompt and newest in prompt, prompt
    assert chef_only not in prompt and retired not in prompt, prompt
    rows = {row["id"]: row for row in reply.model_extra["memgate"]["auto_recall"]["memories"]}
    for linked in (mid, last):  # read by id, not found by a search (no cosine)
        assert rows[linked.id]["relevance"] == "high" and rows[linked.id]["added"] == NEWER_STATEMENT
        assert rows[linked.id]["cosine"] == 0.0
    assert other.id not in rows and gone.id not in rows


def test_the_followers_of_every_generation_of_a_split_reach_the_prompt(start_gateway, upstream, seed, shared_model):
    """A profile memory split twice (gateway.memorization.split.split_memory: a move, then a
    new shift) reaches the prompt; no search finds the followers (a "cover letter" request),
    so the older memories it names are read by id with it, then what follows each of them,
    then a follower of such a follower (three round trips)."""
    whole_text = "I'm an ER nurse at St. Mary's, nights mostly, and I live in Leeds"
    first_text, second_text = "I'm an ER nurse at St. Mary's, nights mostly", "I'm an ER nurse at St. Mary's"
    moved, shift, later = ("We moved to York in the spring", "Switched to day shifts, finally sleeping again",
                           "The York commute is killing me")
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    (whole,) = seed(gw, ALICE, memory(whole_text, scope="profile", type="semantic"))
    (first,) = seed(gw, ALICE, split_memory(whole, first_text))
    (second,) = seed(gw, ALICE, split_memory(first, second_text))
    assert second.metadata["split_from"] == [first.id, whole.id]
    (home,) = seed(gw, ALICE, memory(moved, scope="event", metadata={"follows": whole.id}))
    (shifts,) = seed(gw, ALICE, memory(shift, scope="event", metadata={"follows": first.id}))
    (commute,) = seed(gw, ALICE, memory(later, scope="event", metadata={"follows": home.id}))
    for older in (whole, first):
        _retire(gw, shared_model, ALICE, older.id)
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "can you help me write a cover letter"}])
    prompt = "\n".join(str(m["content"]) for m in upstream.chat_requests()[-1].json["messages"] if m["role"] == "system")
    assert second_text in prompt and first_text not in prompt, prompt
    assert moved in prompt and shift in prompt and later in prompt, prompt
    rows = {row["id"]: row for row in reply.model_extra["memgate"]["auto_recall"]["memories"]}
    for linked in (home, shifts, commute):  # read by id, not found by a search (no cosine)
        assert rows[linked.id]["added"] == NEWER_STATEMENT and rows[linked.id]["cosine"] == 0.0


def test_a_failed_read_of_the_followers_adds_nothing_and_the_request_goes_on(start_gateway, upstream, seed, tmp_path):
    """Redis goes away between the searches and the read by id (a wrapper of the real
    store stops it first): the reply is a 200, the searches' memories are in the prompt,
    the follower is not, and the call is marked degraded for that read alone."""
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()

    class StoppingStore:
        """The real store; stops Redis before reading records by id."""

        def __init__(self, store) -> None:
            self.store = store

        async def get_many(self, *args, **kwargs):
            server.stop()
            return await self.store.get_many(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(self.store, name)

    class StoppingAutoRecall(AutoRecall):
        def __init__(self, config, services) -> None:
            seamed = copy.copy(services)
            seamed.memory = StoppingStore(services.memory)
            super().__init__(config, seamed)

    try:
        gw = start_gateway(registry={**REGISTRY, "auto_recall": StoppingAutoRecall},
                           plugins=[{"name": "auto_recall"}, {"name": "hybrid_injection"}],
                           memory={"redis_url": server.url}, settings={"cache_ttl_s": 3600})
        (old,) = seed(gw, ALICE, memory("I'm an ER nurse at St. Mary's, three years now", scope="profile", type="semantic"))
        seed(gw, ALICE, memory("Transferred up to the ICU last month, same hospital.", scope="event",
                               metadata={"follows": old.id}))
        client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
        response = client.chat.completions.with_raw_response.create(
            model="gpt-4o", messages=[{"role": "user", "content": "can you help me write a cover letter"}])
        assert response.status_code == 200 and response.parse().choices
        assert response.headers.get("x-memgate-degraded") == "auto_recall:memory_unavailable:followers"
        prompt = "\n".join(str(m["content"]) for m in upstream.chat_requests()[-1].json["messages"] if m["role"] == "system")
        assert "ER nurse" in prompt and "ICU" not in prompt
    finally:
        server.stop()
