"""One turn, one memory; a change retires only the statement it changes
(gateway.memorization.disclosure, neardup, split; gateway.memory.records.statement_spans).

A turn that tells several things ("Big news, I sold the house! I'm moving into a senior
condo in Hermantown") is one memory, so a later prompt shows the telling whole; its
statements' spans are kept in ``metadata.statements``, and a later change of one of them
retires the memory and stores the others anew, in the user's words. On real Redis."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse
from gateway.memorization.split import SPLIT_FROM
from gateway.memory.records import FOLLOWS, STATEMENTS, MemoryRecord, statement_spans
from tests.memorization.conftest import memorize_config
from tests.memorization.test_changes import ALICE, _memorize
from tests.memorization.test_workers import fresh_store


def test_a_turn_that_tells_two_things_is_one_memory_with_two_statements():
    (memory,) = analyse("Big news, I sold the house! I'm moving into a senior condo in Hermantown in April. "
                        "What should I do with the piano?").memories
    assert memory.text == "Big news, I sold the house! I'm moving into a senior condo in Hermantown in April."
    assert memory.statement_texts == ("Big news, I sold the house!", "I'm moving into a senior condo in Hermantown in April.")
    assert memory.slot == "residence" and memory.durable
    # one statement: no spans
    (alone,) = analyse("I live in Lisbon.").memories
    assert alone.statements == () and alone.statement_texts == ("I live in Lisbon.",)


@pytest.mark.parametrize(("value", "spans"), [
    ([[0, 5], [6, 11]], [(0, 5), (6, 11)]),
    ([[0, 5]], []),  # one statement is the whole memory
    ([[0, 5], [4, 11]], []),  # overlapping
    ([[0, 5], [6, 10]], []),  # not to the end: the text was edited since
    ([[1, 5], [6, 11]], []),  # not from 0
    ([[0, 5], [6, 6], [6, 11]], []),  # an empty statement
    ([[0, "5"], [6, 11]], []),  # not integers
    ([[0, True], [6, 11]], []),
    ("0-5,6-11", []),
])
def test_statement_spans_are_read_only_when_they_fit_the_text(value: object, spans: list[tuple[int, int]]):
    assert statement_spans("hello world", {STATEMENTS: value}) == spans


def _live(records: list[MemoryRecord]) -> list[str]:
    return sorted(r.text for r in records if not r.retired)


@pytest.mark.parametrize(("before", "after", "memory", "rest", "gone"), [
    # the home changes, the grandchildren's visit stays ("and" no longer leads what is kept)
    ("We live in Tucson and the grandkids are visiting over spring break, ages 6 and 9. What can we do with them?",
     "We moved to Portland last month.",
     "We live in Tucson and the grandkids are visiting over spring break, ages 6 and 9.",
     "the grandkids are visiting over spring break, ages 6 and 9.", "Tucson"),
    # a new job: the back pain said in the same sentence stays
    ("我在深圳做后端，天天加班，腰椎间盘突出又犯了", "我转行了，现在在深圳一家车企当销售经理", "我在深圳做后端，天天加班，腰椎间盘突出又犯了",
     "腰椎间盘突出又犯了", "后端"),
    # the knees' statement has no subject of its own, so read clause by clause it would go with the
    # home; as a statement of its own it stays
    ("我们家住沈阳 冬天太冷了 膝盖受不了 一到冬天就疼", "我们搬到三亚了", "我们家住沈阳，冬天太冷了，膝盖受不了，一到冬天就疼",
     "膝盖受不了，一到冬天就疼", "沈阳"),
])
async def test_a_change_retires_the_statement_it_changes_and_keeps_the_others(env, before: str, after: str, memory: str,
                                                                              rest: str, gone: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text == memory)
    assert len(statement_spans(old.text, old.metadata)) == 2
    new = next(r for r in records if r.text == after)
    kept = next(r for r in records if r.metadata.get(SPLIT_FROM) == [old.id])
    assert old.retired and old.superseded_by == new.id
    assert kept.text == rest and not kept.retired and STATEMENTS not in kept.metadata
    assert not any(gone in text for text in _live(records))
    assert _live(records) == sorted([after, rest])


async def test_a_change_of_no_statement_leaves_the_memory_whole(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    before = "I'm a nurse at St Mary's. My daughter Maya is allergic to peanuts."
    await _memorize(env, config, store, before, "I went vegetarian last month.")
    assert before in _live((await store.list(ALICE)).items)


async def test_a_repeat_of_one_statement_follows_the_memory_and_retires_nothing(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    before = "We moved to Denver three weeks ago. My daughter is allergic to peanuts."
    await _memorize(env, config, store, before, "Since I'm in Denver now, any good hikes nearby?")
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text == before)
    new = next(r for r in records if r is not old)
    assert not old.retired and not new.retired
    assert new.metadata.get(FOLLOWS) == old.id  # the same value said again: shown with the statement it repeats


async def test_what_is_left_keeps_its_statements_for_the_next_change(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "I live in Leeds. I drive a Honda Civic. My daughter is allergic to peanuts.",
                    "We moved to York last month.")
    records = (await store.list(ALICE)).items
    rest = next(r for r in records if not r.retired and r.metadata.get(SPLIT_FROM))
    assert rest.text == "I drive a Honda Civic. My daughter is allergic to peanuts."
    assert [rest.text[s:e] for s, e in statement_spans(rest.text, rest.metadata)] == [
        "I drive a Honda Civic.", "My daughter is allergic to peanuts."]
    await _memorize(env, config, store, "I sold the Civic, I take the bus now.")
    assert _live((await store.list(ALICE)).items) == sorted([
        "We moved to York last month.", "I sold the Civic, I take the bus now.", "My daughter is allergic to peanuts."])
