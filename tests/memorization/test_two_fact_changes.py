"""A change of one fact in a memory that tells two (gateway.memorization.split, neardup,
apply): the older memory is retired and its unchanged clauses stored anew, in the user's
words, with its times, scope and a link to it; a replayed job writes nothing twice; a
one-fact memory is superseded as before. On real Redis."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.memorization.apply import apply_plan
from gateway.memorization.jobs import job_from_fields
from gateway.memorization.processor import JobProcessor
from gateway.memorization.runtime import queue_for
from gateway.memorization.split import SPLIT_FROM, pieces, remainder
from gateway.memory.records import FOLLOWED_BY, FOLLOWS, MemoryRecord, Scope
from plugins.auto_recall import stands_for
from tests.memorization.conftest import memorize_config, user_stream
from tests.memorization.test_changes import ALICE, _memorize
from tests.memorization.test_workers import enqueue, fresh_store


@pytest.mark.parametrize(("text", "said"), [
    ("我住张江，我每天开帕萨特去公司。", ["我住张江", "我每天开帕萨特去公司"]),
    ("I'm a nurse at St Mary's and I live in Leeds.", ["I'm a nurse at St Mary's", "I live in Leeds"]),
    ("salt and pepper", ["salt and pepper"]),  # no clause of its own after "and"
])
def test_a_memory_is_read_clause_by_clause_in_its_own_characters(text: str, said: list[str]):
    assert [text[s:e] for s, e in pieces(text)] == said


def test_the_rest_is_the_clauses_as_said_or_nothing_when_it_forms_no_memory():
    assert remainder("im a wedding photographer, solo, based in bristol", lambda c: "bristol" in c) == \
        "im a wedding photographer, solo"
    assert remainder("I live in Lisbon, near the river.", lambda c: "Lisbon" in c) is None  # "near the river." tells nothing
    assert remainder("My girlfriend Jess is a teacher so our schedules are opposite.", lambda c: "Jess" in c) is None
    assert remainder("I live in Lisbon.", lambda c: True) is None


def _live(records: list[MemoryRecord]) -> list[str]:
    return sorted(r.text for r in records if not r.retired)


@pytest.mark.parametrize(("before", "after", "rest", "gone"), [
    # the home changes, the car stays (both said in one memory; before: the car was lost)
    ("我住张江，我每天开帕萨特去公司。", "我们搬到前滩了。", "我每天开帕萨特去公司。", "张江"),
    # the home changes, the job stays (its slot was the job: before, the old home stayed live)
    ("我是护士，住在徐汇。", "我们搬到闵行了。", "我是护士。", "徐汇"),
    # the home changes, the job stays (its slot was the job: before, the old home stayed live)
    ("I'm a nurse at St Mary's and I live in Leeds.", "I moved to York last month.", "I'm a nurse at St Mary's.", "Leeds"),
    ("im a wedding photographer, solo, based in bristol", "we finally moved into the flat in bath!!!",
     "im a wedding photographer, solo", "bristol"),
    # the shift changes, the job stays (before: the day shift stayed live)
    ("我开出租的，白班，一天坐十个钟头，腰受不了", "换成夜班了，晚上六点到早上六点，车少好拉活",
     "我开出租的", "白班"),
    # someone at work puts the user on another shift: the job stays, the early shifts go
    ("I drive the 42 out of the Hunslet depot, early shifts mostly.", "they've put me on lates",
     "I drive the 42 out of the Hunslet depot.", "early shifts"),
    # an ending without a slot word: the coffee goes, the dog walk stays
    ("I drink coffee every morning and I walk the dog at six.", "I gave up coffee last month.",
     "I walk the dog at six.", "coffee every morning"),
])
async def test_a_change_of_one_fact_keeps_the_other_in_the_users_words(env, before: str, after: str, rest: str, gone: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text == before)
    new = next(r for r in records if r.text == after)
    kept = next(r for r in records if r.metadata.get(SPLIT_FROM) == [old.id])
    assert old.retired and old.superseded_by == new.id and new.supersedes == old.id
    assert kept.text == rest and not kept.retired
    assert (kept.scope, kept.type, kept.created_at, kept.occurred_at) == (old.scope, old.type, old.created_at, old.occurred_at)
    assert not any(gone in text for text in _live(records))
    assert _live(records) == sorted([after, rest])
    hits = await store.search(ALICE, rest, top_k=3)  # embedded: found by its own words
    assert hits and hits[0].record.id == kept.id


@pytest.mark.parametrize(("before", "after"), [
    ("I live in Lisbon.", "I moved to Berlin."),
    ("I live in Lisbon, near the river.", "I moved to Berlin."),  # "near the river" says nothing alone
    # a clause with no subject of its own continues the changed one: it goes with it
    ("我住张江，每天开帕萨特去公司。", "我们搬到前滩了。"),
    ("最近在自学日语，每天背五十个单词。", "日语没再学了，太忙了坚持不下来。"),
])
async def test_a_one_fact_memory_is_superseded_as_before(env, before: str, after: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    records = (await store.list(ALICE)).items
    assert len(records) == 2 and _live(records) == [after]
    assert not any(SPLIT_FROM in r.metadata for r in records)


async def _second_job(env: Any, config: Any, store: Any, before: str, after: str) -> Any:
    await _memorize(env, config, store, before)
    await enqueue(env, config, after)
    entries = await env.redis.xrange(user_stream(queue_for(config, env.redis)))
    return job_from_fields(entries[-1][1])


def _snapshot(records: list[MemoryRecord]) -> list[tuple[str, str, bool, str | None]]:
    return sorted((r.id, r.text, r.retired, r.superseded_by) for r in records)


async def test_a_replayed_job_writes_the_kept_clauses_once(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    job = await _second_job(env, config, store, "我住张江，我每天开帕萨特去公司。", "我们搬到前滩了。")
    processor = JobProcessor(config, store, queue)
    ((outcome, plan, written),) = await processor.run_batch([job])
    assert outcome == "done" and plan is not None and [op.kind for op in plan.ops] == ["update", "split"]
    first = _snapshot((await store.list(ALICE)).items)
    assert len(first) == 3 and len(written) == 2
    # the same job again (its done marker lost), one by one this time, then its plan applied again
    assert (await processor.run(job))[0] == "done"
    await apply_plan(store, ALICE, plan)
    assert _snapshot((await store.list(ALICE)).items) == first


async def test_the_retirement_and_the_kept_clauses_are_written_together(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    job = await _second_job(env, config, store, "I'm a nurse at St Mary's and I live in Leeds.", "I moved to York last month.")
    processor = JobProcessor(config, store, queue)
    real = store.import_embedded

    async def broken(*_args: Any, **_kwargs: Any) -> None:
        raise ConnectionError("redis went away")

    store.import_embedded = broken
    with pytest.raises(ConnectionError):
        await processor.run_batch([job])
    records = (await store.list(ALICE)).items
    assert [(r.text, r.retired) for r in records] == [("I'm a nurse at St Mary's and I live in Leeds.", False)]
    store.import_embedded = real
    ((outcome, _plan, _written),) = await processor.run_batch([job])
    assert outcome == "done"
    records = (await store.list(ALICE)).items
    assert _live(records) == ["I moved to York last month.", "I'm a nurse at St Mary's."]
    assert all(r.scope is Scope.PROFILE for r in records)


async def test_the_kept_clauses_are_followed_by_what_followed_the_older_memory(env):
    """The transfer follows the whole memory; the shift change splits it: the part left live
    (the depot) names the whole memory (``metadata.split_from``), whose follower the
    transfer is, so recall shows them together (plugins.auto_recall.stands_for)."""
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    before = "I drive the 42 out of the Hunslet depot, early shifts mostly."
    transfer = "Got my transfer through at last, I drive the X84 out of the Otley depot now."
    await _memorize(env, config, store, before, transfer, "they've put me on lates")
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text == before)
    moved = next(r for r in records if r.text == transfer)
    kept = next(r for r in records if r.metadata.get(SPLIT_FROM) == [old.id])
    assert moved.metadata.get(FOLLOWS) == old.id and old.metadata.get(FOLLOWED_BY) == [moved.id]
    assert old.retired and not kept.retired
    assert moved.metadata.get(FOLLOWS) in stands_for(kept)



async def test_a_split_of_a_split_names_every_older_memory(env):
    """Two changes, each leaving part of the memory before it (the move, then the shift):
    the second split names the first split and the whole memory, newest first, so what
    followed either of them follows it (plugins.auto_recall.stands_for)."""
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    whole = "我开出租的，白班，住张江"
    await _memorize(env, config, store, whole, "搬到前滩了", "换成夜班了")
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text == whole)
    first = next(r for r in records if r.text == "我开出租的，白班")
    second = next(r for r in records if r.text == "我开出租的")
    assert first.metadata[SPLIT_FROM] == [old.id] and second.metadata[SPLIT_FROM] == [first.id, old.id]
    assert old.retired and first.retired and not second.retired
    assert stands_for(second) == {second.id, first.id, old.id}
