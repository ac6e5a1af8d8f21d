"""A later statement of a slot that names the value an older one gave is a repeat, not a change
(gateway.memorization.slots.says_again, neardup's supersede path): the older memory stays live
and the newer follows it (``metadata.follows``); each beside a true change of the same slot
that still retires the older memory. A statement of the slot that names no value and says no
change (its cue words only: "my car needs new tires") is a mention and retires nothing; with
a contrast ("now", "again") or in the diet slot it is a change. Examples are written for these tests, after the repeats
that retired the statement they repeat on the read splits; on real Redis."""

from __future__ import annotations

import pytest

from gateway.memorization.neardup import told
from gateway.memorization.slots import says_again, slot_of, slots_of
from gateway.memory.records import FOLLOWS
from tests.memorization.conftest import memorize_config
from tests.memorization.test_changes import ALICE, _memorize
from tests.memorization.test_false_retirements import _assert_retires
from tests.memorization.test_workers import fresh_store

REPEATS = [
    ("We moved to Portland last month, still unpacking boxes.", "Since I'm in Portland now, where should I get coffee near Alberta Street?"),
    ("旧车卖了，换了台蔚来ES6，周末带娃出去方便多了。", "我那台蔚来在小区充电挺方便的。"),
    ("我系急诊科护士，成日返夜班。", "急诊科呢排好忙，我自己夜班都顶唔顺。"),  # Cantonese: the unit and the shift said again
]
MENTIONS = [  # the slot's cue words only, no value, no change said: a mention, not a new value
    ("I drive a Honda Civic.", "my car needs new tires before winter"),
    ("I drive to work in Leeds every day.", "my commute is killing me"),
]
CONTRASTS = [  # no value, but set against before, or a diet told by what is eaten
    ("I'm vegetarian.", "I eat meat again."),
    ("I'm vegetarian.", "I eat meat."),
]
CHANGES = [
    ("I live in Denver.", "We just moved to Boston."),  # no value shared
    ("We moved to Denver last spring.", "We just moved to Boston from Denver."),  # Denver only as where they came from
    ("上个月换了台比亚迪汉。", "又换了台特斯拉。"),
    ("我开比亚迪汉。", "把比亚迪汉卖了，换了台比亚迪海豹。"),  # the brand shared, but sold and switched
    ("我住在滨江。", "从滨江搬到萧山了。"),  # 滨江 only after 从
]


def _says_again(new: str, older: str) -> bool:
    said = told(new)
    slot = slot_of(said)
    assert slot, new
    return says_again(new, (slot, *slots_of(said)), older)


@pytest.mark.parametrize(("older", "new"), REPEATS)
def test_the_same_value_said_again_is_a_repeat(older: str, new: str):
    assert _says_again(new, older)


@pytest.mark.parametrize(("older", "new"), MENTIONS)
def test_a_mention_with_no_value_is_a_repeat(older: str, new: str):
    assert _says_again(new, older)


@pytest.mark.parametrize(("older", "new"), CONTRASTS)
def test_no_value_but_a_contrast_or_a_diet_is_no_repeat(older: str, new: str):
    assert not _says_again(new, older)


@pytest.mark.parametrize(("older", "new"), CHANGES)
def test_a_new_value_is_no_repeat(older: str, new: str):
    assert not _says_again(new, older)


@pytest.mark.parametrize(("older", "new"), [
    ("My girlfriend Zoe says I should eat more greens.", "I proposed to Zoe and we're engaged!"),  # the status is the value
    ("我女儿朵朵今年上初二。", "朵朵考上市一中了，现在是高一新生。"),  # the child named is whose school, not its stage
    ("我住学校的单身宿舍。", "搬出宿舍啦，在学校旁边租了个一室一厅。"),  # moved out of: the place named is the one left
    ("我读研一，方向是图像分割。", "我读研二了，方向没变。"),  # the research direction is the slot's frame, not the year
])
def test_a_shared_word_that_is_no_value_is_no_repeat(older: str, new: str):
    assert not _says_again(new, older)


@pytest.mark.parametrize(("older", "new"), REPEATS + MENTIONS)
async def test_a_repeat_keeps_the_older_memory_live_and_follows_it(env, older: str, new: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, older, new)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith(older.rstrip(".。")))
    later = next(r for r in records if r.text.startswith(new.rstrip(".。")[:12]))
    assert not any(r.retired for r in records), [(r.text, r.retired) for r in records]
    assert later.metadata.get(FOLLOWS) == old.id


@pytest.mark.parametrize(("older", "new"), CHANGES + CONTRASTS)
async def test_a_change_still_retires_the_older_memory(env, older: str, new: str):
    await _assert_retires(env, older, new)
