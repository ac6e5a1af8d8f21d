"""A change said without a slot word (gateway.memorization.changes): what ended, which
older memory it is about, and the supersede it drives on real Redis
(gateway.memorization.neardup)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.memorization.changes import ended_of, is_about
from gateway.memorization.disclosure import analyse
from gateway.memorization.neardup import merge_near_duplicates
from gateway.memorization.plan import Op, Plan
from gateway.memory.records import MemoryType, NewMemory, Scope, Tenant
from tests.memorization.conftest import memorize_config
from tests.memorization.test_workers import enqueue, fresh_store

ALICE = Tenant("alice", "tutor")


@pytest.mark.parametrize(("text", "heads"), [
    ("I sold the Honda, I ride a bike now.", ["honda"]),
    ("I stopped running, it's swimming now.", ["run"]),
    ("I don't eat dairy anymore.", ["dairy"]),
    ("I gave up coffee in January.", ["coff"]),
    ("I no longer work weekends at the bookshop", ["bookshop"]),
    ("my sister moved out last week.", ["sister"]),
    ("我不喝咖啡了，现在只喝茶", ["咖啡", "喝"]),  # and the switched habit of drinking
    ("我已经不去健身房了", ["身房"]),
    ("我把烟戒了", ["烟"]),
    ("咖啡换成了茶", ["咖啡", "class:drink"]),  # and the drinking habit switched (SWITCH_CLASSES)
    ("我以前住在上海", ["上海"]),
    ("Jo moved out at the weekend, so we have a spare room.", ["jo"]),
    ("No more night shifts for me, I'm on days.", ["shift"]),
    ("最近戒咖啡了", ["咖啡"]),
    ("那辆车已经卖掉了", ["车"]),
    ("我已经不用iPhone了", ["iphon"]),
])
def test_an_ending_cue_names_the_thing_that_ended(text: str, heads: list[str]):
    assert [e.head for e in ended_of(text)] == heads


@pytest.mark.parametrize("text", [
    "I stopped by the bakery on the way home.",  # "stopped by" is a visit
    "We moved to Berlin, Maya starts school there now.",  # "now" alone ends nothing
    "I quit, lol",  # nothing named
    "我们搬到了杭州",  # a slot statement (residence), no ending cue
    "我今天跑了五公里",
    "I'm used to cold weather.",  # "used to" as "accustomed to"
    "My laptop stopped working.",
    "The concert sold out.",
    "他不抽烟了",  # a bare pronoun: whom it means is in another turn
    "Finally moved out!",  # the user moved: a residence statement, no one else's ending
    "No more than two cups a day.",
    "我戒指丢了",  # 戒指 is a ring
])
def test_no_ending_cue_no_ended_thing(text: str):
    assert ended_of(text) == ()


@pytest.mark.parametrize(("new", "older", "about"), [
    ("I stopped running, it's swimming now.", "I run 5k every morning before work.", True),
    ("I stopped running, it's swimming now.", "I have a bad knee.", False),
    ("I don't eat dairy anymore.", "I love cheese and dairy desserts.", True),
    ("I don't eat dairy anymore.", "I eat fish on Fridays.", False),  # the verb alone is not the thing
    ("my sister moved out.", "My sister lives with us.", True),
    ("my sister moved out.", "My sister is a nurse.", False),  # moving out ends where she lives only
    ("我不喝咖啡了，现在只喝茶", "我每天早上都要喝一杯咖啡", True),
    ("我不喝咖啡了，现在只喝茶", "我喜欢喝茶", False),
    ("我把烟戒了", "我抽烟十年了", True),
    ("我已经不去健身房了", "我每周去三次健身房", True),
    ("我已经不去健身房了", "我每周游泳三次", False),
    ("I used to live in Lisbon, now we're in Porto.", "We live in Lisbon.", True),
    ("Maya doesn't eat dairy anymore.", "Maya loves dairy, especially yogurt.", True),
    ("Maya doesn't eat dairy anymore.", "I love dairy, especially yogurt.", False),  # Maya's ending, not mine
    ("The bus doesn't run anymore.", "I run 5k every morning.", False),
    ("我老公不抽烟了", "我老公抽烟十几年了", True),
    ("我老公不抽烟了", "我以前抽烟", False),
    ("Jo moved out at the weekend.", "My sister Jo is staying with us for a few months.", True),
    ("那辆车已经卖掉了", "我的车是丰田", True),
    ("我喝了杯咖啡", "我喝了杯茶", False),  # no ending at all
])
def test_an_older_memory_is_about_the_ended_thing_only_when_it_names_it(new: str, older: str, about: bool):
    assert any(is_about(e, older) for e in ended_of(new)) is about


def test_an_ending_is_a_lasting_fact_even_when_dated():
    (memory,) = analyse("I stopped running last month, my knees hurt.").memories
    assert memory.durable
    (memory,) = analyse("我上个月不喝咖啡了").memories
    assert memory.durable


async def _memorize(env: Any, config: Any, store: Any, *texts: str) -> None:
    for text in texts:
        await enqueue(env, config, text)
        await env.drain(config, store)


@pytest.mark.parametrize(("kept", "before", "after"), [
    ("I'm allergic to shellfish.", "I run 5k every morning before work.", "I stopped running, it's swimming now."),
    ("我对花生过敏。", "我每天早上都要喝一杯咖啡。", "我不喝咖啡了，现在只喝茶。"),
])
async def test_an_ending_supersedes_the_memory_about_that_thing_and_only_it(env, kept: str, before: str, after: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, kept, before, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith(before.rstrip(".。")))
    new = next(r for r in records if r.text.startswith(after.rstrip(".。")))
    assert old.retired and old.superseded_by == new.id and new.supersedes == old.id
    assert [r.text.rstrip(".。") for r in records if r.retired] == [before.rstrip(".。")]
    hits = await store.search(ALICE, before, top_k=5)
    assert old.id not in [h.record.id for h in hits]


@pytest.mark.parametrize(("before", "after"), [
    ("My husband loves coffee.", "I don't drink coffee anymore."),  # about the husband: not the user's habit
    ("I play the piano on weekends.", "I stopped playing tennis."),  # another game
    ("我喜欢喝茶。", "我不喝咖啡了，现在只喝茶。"),  # the new thing, not the ended one
])
async def test_an_ending_does_not_retire_a_memory_about_something_else(env, before: str, after: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    records = (await store.list(ALICE)).items
    assert len(records) == 2 and not any(r.retired for r in records)


@pytest.mark.parametrize(("said_by", "retired"), [("Ann", True), ("Bob", False)])
async def test_in_a_transcript_one_speakers_ending_retires_only_that_speakers_memory(env, said_by: str, retired: bool):
    store = await fresh_store(env)
    (old,) = await store.add(ALICE, [NewMemory(scope=Scope.PROFILE, type=MemoryType.SEMANTIC,
                                               text="Ann: I run 5k every morning before work.",
                                               metadata={"role": "user", "speaker": "Ann"})])
    new = NewMemory(scope=Scope.PROFILE, type=MemoryType.SEMANTIC, text=f"{said_by}: I stopped running last month.",
                    metadata={"role": "user", "speaker": said_by})
    plan = await merge_near_duplicates(store, ALICE, Plan(ops=(Op(kind="add", id="m-new", memory=new),)))
    (op,) = plan.ops
    assert (op.kind, op.target) == (("update", old.id) if retired else ("add", None))
