"""What becomes a profile memory (seen by every friend of the user, picked for every
request): a lasting fact, not how the user is at the moment. A turn that only tells a passing
state, a task just finished or a remark about the listener forms no memory (a one-off state,
dropped as small talk; said beside something else, it is part of that memory);
a real lasting fact, also one said beside a feeling or made lasting by a habit or a
duration, stays profile (gateway/memorization/salience.py :func:`is_passing`, read by
disclosure's durable rule and by :func:`profile_type`)."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse
from gateway.memorization.salience import is_passing, is_small_talk, profile_type
from gateway.memorization.verbatim import verbatim_plan
from gateway.memory.records import MemoryType, Scope
from tests.memorization.test_worth_remembering import _job


def _formed(turn: str) -> list[tuple[str, bool]]:
    return [(m.text, m.durable) for m in analyse(turn).memories]


@pytest.mark.parametrize("turn", [
    # a passing state of body or mind (stage-level: true of the speaker for a while)
    "I'm wide awake again lol",
    "I'm so stressed out lol",
    "我这两天心里有点忐忑",
    "我现在压力山大",
    "我现在好慌",
    # a task just finished (completive V完了 / "clocked off")
    "我论文初稿写完了",
    "I just clocked off, totally drained",
    # a remark about the listener, nothing about the user
    "you're so patient with me",
])
def test_a_passing_state_a_finished_task_or_the_listener_forms_no_memory(turn: str):
    assert _formed(turn) == []
    assert analyse(turn).dropped == "small_talk"


@pytest.mark.parametrize("turn", [
    # a passing state told beside a lasting fact: the memory holds the fact
    "我老公在杭州上班，我一个人带娃，压力山大",
    "We're moving to Denver in May, so excited!",
    # a habit or a duration makes the state the user's own
    "I always get nervous before flights.",
    "I've been exhausted for weeks since the baby came.",
    "我坐飞机总是很紧张",
    "我焦虑好几个月了",
    # lasting facts with no feeling at all (zh + en)
    "I'm colorblind.",
    "My daughter is allergic to peanuts.",
    "我对花生过敏",
    "我在杭州做会计",
    "我养了一只猫，叫年糕",
    "I run a small bakery in Leeds.",
])
def test_a_lasting_fact_stays_profile(turn: str):
    formed = _formed(turn)
    assert formed and all(durable for _, durable in formed), formed


def test_is_passing_needs_every_piece_to_be_of_the_moment():
    assert is_passing("hi. wide awake at 4am again lol")
    assert is_passing("搬完了，累瘫了")
    assert not is_passing("搬到滨江了，累瘫了")  # the move is the lasting part
    assert not is_passing("you're right, I'm vegan")  # the listener's piece says nothing, the other does
    assert not is_passing("you know my dog Rex")  # the user's own in a piece led by "you"
    assert not is_passing("")


def test_turn_formation_types_a_passing_state_as_an_event():
    assert profile_type("I'm a nurse") is MemoryType.SEMANTIC
    assert profile_type("I'm a nervous wreck, just clocked off") is None  # "I'm a ..." alone reads as a fact


@pytest.mark.parametrize(("text", "small_talk"), [
    ("老师好", True), ("老师好～", True), ("亲早上好", True), ("同学晚安", True),
    ("我是老师", False), ("老师让我多喝水", False),
])
def test_a_greeting_with_the_addressee_first_is_small_talk(text: str, small_talk: bool):
    assert is_small_talk(text) is small_talk


def test_a_greeting_to_the_teacher_forms_no_memory():
    assert analyse("老师好～啊不对，是你好哈哈").memories == ()


def test_the_plan_drops_a_passing_state_and_stores_a_lasting_fact_in_the_profile():
    turns = (("user", "我这两天心里有点忐忑"), ("assistant", "怎么了？"), ("user", "我对花生过敏"))
    plan = verbatim_plan(_job(*turns), [t for _, t in turns], ["user"], skip_small_talk=True, profile=True,
                         formation="disclosure")
    stored = [(op.memory.text, op.memory.scope) for op in plan.ops if op.memory]
    assert stored == [("我对花生过敏", Scope.PROFILE)]
    assert plan.dropped == {"small_talk": 1}
