"""The commute slot is how the user gets to work: a use named for a thing asked about (主要通勤)
and a feeling about a means of travel (现在骑车还是有点发怵) fill no slot, so they cannot retire
the user's vehicle or commute; controls state the commute and still fill it."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse
from gateway.memorization.slots import slot_of


@pytest.mark.parametrize("text", ["主要通勤+周末接送老人", "主要用来通勤", "现在坐地铁还是有点紧张", "现在骑车有点怕", "现在打车也不敢坐后排"])
def test_a_use_or_a_feeling_about_travel_fills_no_slot(text: str):
    assert slot_of(text) is None


@pytest.mark.parametrize("text", ["我每天通勤两小时", "现在骑车上班", "我现在坐地铁", "现在改骑车了"])
def test_how_the_user_gets_to_work_still_fills_the_vehicle_slot(text: str):
    assert slot_of(text) == "vehicle"


def test_the_use_stays_with_the_fact_of_its_turn():
    found = analyse("新公司离家远，打算买台十五万左右的混动，有啥推荐，主要通勤+周末接送老人")
    assert [m.text for m in found.memories] == ["新公司离家远，打算买台十五万左右的混动。主要通勤+周末接送老人"]
    assert found.memories[0].slot != "vehicle"


def test_a_feeling_about_riding_stays_with_the_injury_it_follows():
    found = analyse("膝盖的半月板还没长好，医生说再养两个月，现在骑车还是有点发怵")
    assert [(m.text, m.slot) for m in found.memories] == [("膝盖的半月板还没长好，医生说再养两个月，现在骑车还是有点发怵", None)]
