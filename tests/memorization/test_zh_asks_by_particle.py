"""Chinese asks and acknowledgements read by their grammar, not their punctuation: an A-not-A
question whose dropped negative takes a modal particle, 几 before a verbal measure word, and
the dialects' word for "got it". Each forms no memory; controls keep the facts around them."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse


@pytest.mark.parametrize("turn", ["现在还有人办那种储值卡不哦", "楼下新开的健身房靠谱不啊", "周末去爬山累不呀"])
def test_a_question_closed_by_a_negative_and_a_particle_forms_nothing(turn: str):
    found = analyse(turn)
    assert found.memories == ()
    assert found.dropped == "question"
    assert found.statement is None  # a question is no statement about something else


def test_the_fact_before_such_a_question_is_kept_without_it():
    found = analyse("我对芒果过敏，菠萝能吃不哦")
    assert [m.text for m in found.memories] == ["我对芒果过敏"]
    assert found.kinds == ("disclosure", "question")


@pytest.mark.parametrize("turn", ["降压药一天吃几回来着", "这个药膏一天抹几回"])
def test_how_many_times_asked_with_a_verbal_measure_word_is_a_question(turn: str):
    found = analyse(turn)
    assert found.memories == ()
    assert found.dropped == "question"


@pytest.mark.parametrize(("turn", "kept"), [
    ("我一天吃两回降压药", "我一天吃两回降压药"),  # a count told, no question word
    ("我好几回半夜被腿抽筋疼醒", "我好几回半夜被腿抽筋疼醒"),  # 好几回: "many times", no question
])
def test_a_count_of_times_told_is_still_a_fact(turn: str, kept: str):
    assert [m.text for m in analyse(turn).memories] == [kept]


@pytest.mark.parametrize("turn", ["好嘛晓得了", "我晓得了", "晓得啦"])
def test_got_it_in_dialect_is_small_talk(turn: str):
    found = analyse(turn)
    assert found.memories == ()
    assert found.dropped == "small_talk"
    assert found.statement is None


def test_a_fact_after_got_it_in_dialect_is_kept():
    found = analyse("晓得了，我下个月搬去成都")
    assert found.kinds[0] == "small_talk"
    assert [m.text for m in found.memories] == ["我下个月搬去成都"]
