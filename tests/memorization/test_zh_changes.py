"""Chinese changes and restatements without a shared word: a child's school stage and
job titles as slots, a switched habit as an ending, character-bigram near-duplicates
(gateway.memorization.disclosure, changes, neardup), with English kept apart."""

from __future__ import annotations

import pytest

from gateway.memorization.changes import ended_of, is_about
from gateway.memorization.disclosure import same_slot, slot_of
from gateway.memorization.neardup import is_near_duplicate
from tests.memorization.conftest import memorize_config
from tests.memorization.test_changes import ALICE, _memorize
from tests.memorization.test_workers import fresh_store


@pytest.mark.parametrize(("text", "slot"), [
    ("我女儿朵朵今年上初二，数学有点跟不上。", "school:daughter"),
    ("闺女在读初二，成绩中等吧。", "school:daughter"),
    ("朵朵考上市一中了，现在是高一新生。", "school"),
    ("我孙子今年上三年级。", "school:grandson"),
    ("My son starts high school in September.", "school:son"),
    ("我考上研究生了", "study"),  # the user's own studies, not a child's school (nor 生了: a birth)
    ("我是一名护士。", "work"),
    ("我辞职了，现在在车企当销售经理。", "work"),
    ("上个月被裁了，搬到深圳找了份产品经理的工作。", "work"),
    ("对了我是做UI的，在杭州。", "work"),
])
def test_school_stages_and_job_titles_fill_slots(text: str, slot: str):
    assert slot_of(text) == slot


@pytest.mark.parametrize("text", [
    "大年初一去拜年。",  # a day, not a class
    "我朋友是医生。",  # someone else's job
    "I went to high school in Ohio.",  # the user's own past, no slot
    "每天送孩子上学。",
    "价格再高一点也行。",
])
def test_no_school_or_work_slot_without_one(text: str):
    assert slot_of(text) not in ("work", "study") and not (slot_of(text) or "").startswith("school")


def test_an_unkeyed_school_slot_meets_a_keyed_one_but_two_children_stay_apart():
    assert same_slot("school", "school:daughter") and same_slot("work", "work")
    assert not same_slot("school:son", "school:daughter")
    assert not same_slot("school", "study") and not same_slot(None, "work")


@pytest.mark.parametrize(("new", "older", "about"), [
    ("胃不好，现在只喝红茶了。", "我每天早上都要喝两杯美式才能醒过来。", True),
    ("我改骑自行车上班了。", "我每天骑电动车上下班。", True),
    ("现在只喝红茶了。", "我喜欢喝汤。", False),  # a liking, no habit of drinking
    ("现在只喝红茶了。", "我每天早上跑步。", False),  # another verb
    ("我老公现在只喝红茶。", "我每天喝咖啡。", False),  # the husband's switch, not the user's
])
def test_a_switched_habit_ends_the_older_habit_of_the_same_verb(new: str, older: str, about: bool):
    ended = ended_of(new)
    assert ended and any(e.habit for e in ended)
    assert any(is_about(e, older) for e in ended) is about


def test_english_has_no_switched_habit():
    assert not any(e.habit for e in ended_of("Now I only drink tea."))


@pytest.mark.parametrize(("new", "old", "same"), [
    ("我在杭州做UI设计", "我在杭州一家互联网公司做UI设计。", True),  # 一家 is "a", no number
    ("我女儿上初二", "我女儿今年上初二了", True),
    ("我每天喝两杯咖啡", "我每天喝两杯绿茶", False),  # same frame, another drink
    ("我养了两只猫", "我养了一只猫", False),  # another number
    ("我对花生过敏", "我不对花生过敏", False),  # a negation
    ("我在杭州一家互联网公司做UI设计，每天加班", "我在杭州做UI设计", False),  # the new one says more
])
def test_chinese_near_duplicates_by_character_bigrams_whatever_the_cosine(new: str, old: str, same: bool):
    assert is_near_duplicate(new, old, 0.3) is same


def test_english_near_duplicates_still_need_the_cosine():
    assert not is_near_duplicate("I love hiking in the mountains", "I really love hiking in the mountains!", 0.3)


@pytest.mark.parametrize(("before", "after"), [
    ("我女儿今年上初二。", "朵朵考上市一中了，现在读高一。"),
    ("我每天早上都要喝两杯美式。", "胃不好，现在只喝红茶了。"),
])
async def test_a_chinese_change_without_a_shared_word_supersedes_on_redis(env, before: str, after: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "我对花生过敏。", before, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith(before.rstrip("。")))
    new = next(r for r in records if r.text.startswith(after.rstrip("。")))
    assert old.retired and old.superseded_by == new.id
    assert [r.text.rstrip("。") for r in records if r.retired] == [before.rstrip("。")]


async def test_two_childrens_school_stages_both_stay(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "我儿子上初二。", "我女儿上小学三年级。")
    records = (await store.list(ALICE)).items
    assert len(records) == 2 and not any(r.retired for r in records)


async def test_a_chinese_restatement_merges_into_the_first(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "我在杭州一家互联网公司做UI设计。", "我在杭州做UI设计。")
    records = (await store.list(ALICE)).items
    assert len(records) == 1 and records[0].text.startswith("我在杭州一家互联网公司")
