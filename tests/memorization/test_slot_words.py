"""Slot words (gateway/memorization/slots.py ``_SLOTS``, ``_TRANSFER``): a break-up said the
short way fills the relationship slot (跟阿杰分了, 我们分了, Cantonese 同阿杰分咗手, 我哋分咗), so it
retires the partner it ends; a rotation to another department (轮岗轮到手术室, 轮转到ICU) is a
transfer to a unit: the job and the home stay; a live-in helper (住家保姆, 住家阿姨) names no
home of the user's; a genre of love stories (恋爱类的, 恋爱剧) or 恋爱脑 is no relationship; beside a disclosure, a measure that moved is told with its verb dropped
("LDL down to 131": disclosure._TELLS_EN). On real Redis for the retirements."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse
from gateway.memorization.slots import slot_of, slots_of
from tests.memorization.test_false_retirements import _assert_retires, _assert_retires_nothing


@pytest.mark.parametrize("text", ["跟阿杰分了", "我们分了，三观不合", "同阿杰分咗手，上个礼拜嘅事", "我俩已经分开了"])
def test_a_short_break_up_fills_the_relationship_slot(text: str) -> None:
    assert slot_of(text) == "relationship"
    assert analyse(text).memories


@pytest.mark.parametrize("text", ["蛋糕分了吗", "奖金分了一半给我妈", "我们分了三组讨论"])
def test_sharing_out_is_no_break_up(text: str) -> None:
    assert slot_of(text) != "relationship"


@pytest.mark.parametrize("text", ["不要恋爱类的", "推荐几部恋爱剧", "恋爱题材的小说有啥好看的", "他就是个恋爱脑"])
def test_a_genre_of_love_stories_is_no_relationship(text: str) -> None:
    assert "relationship" not in slots_of(text) and slot_of(text) != "relationship"


@pytest.mark.parametrize("text", ["我们恋爱三年了", "最近在谈恋爱"])
def test_being_in_love_still_fills_the_relationship_slot(text: str) -> None:
    assert slot_of(text) == "relationship"


@pytest.mark.parametrize("text", ["轮岗轮到手术室了", "下个月轮转到ICU病房"])
def test_a_rotation_to_a_department_changes_neither_job_nor_home(text: str) -> None:
    assert "work" not in slots_of(text) and "residence" not in slots_of(text)


async def test_a_short_break_up_retires_the_boyfriend(env) -> None:
    await _assert_retires(env, "我和男朋友阿杰在一起四年了", "跟阿杰分了，三观不合")


async def test_a_rotation_retires_no_job(env) -> None:
    await _assert_retires_nothing(env, "我在一家三甲医院当护士", "轮岗轮到手术室了")


@pytest.mark.parametrize("text", ["去年请过一个住家保姆", "家里住家阿姨让我帮她看看体检报告"])
def test_a_live_in_helper_names_no_home(text: str) -> None:
    assert "residence" not in slots_of(text)


@pytest.mark.parametrize(("text", "kept"), [
    ("Update: went fully vegetarian six weeks ago. LDL down to 131.", "LDL down to 131"),
    ("Moved into the new flat last week. Rent up to $2,100, ouch.", "Rent up to $2,100"),
])
def test_a_measure_that_moved_is_told_beside_a_disclosure(text: str, kept: str) -> None:
    assert any(kept in m.text for m in analyse(text).memories)
