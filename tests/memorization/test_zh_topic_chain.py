"""A bare verb phrase inside a Chinese topic chain about the speaker is what the speaker does,
not an imperative: its zero subject is the chain's topic (我). Controls: an imperative with an
indefinite object, one that names its addressee, and one that ends the sentence stay asks."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse


def test_a_verb_phrase_inside_the_speakers_topic_chain_is_kept():
    found = analyse("我在杭州做后端，写支付系统的接口，晚上还得轮流值班，有没有提神的办法")
    assert found.kinds[1] == "disclosure"
    assert [m.text for m in found.memories] == ["我在杭州做后端，写支付系统的接口，晚上还得轮流值班"]


def test_the_verb_of_writing_in_a_topic_chain_is_no_request():
    found = analyse("我在成都做嵌入式，写空调的控制程序，天天对着示波器")
    assert "写空调的控制程序" in found.memories[0].text
    assert found.kinds[1] == "disclosure"


@pytest.mark.parametrize(("turn", "ask"), [
    ("我是会计，写个辞职信模板，语气客气点", "写个辞职信模板"),  # an indefinite object: what the ask wants made
    ("我是会计，帮我写辞职信，语气客气点", "帮我写辞职信"),  # names who is to act
    ("我是会计，写一下年终总结，突出加班", "写一下年终总结"),  # 一下: the delimitative of an ask
])
def test_an_imperative_after_a_self_description_is_still_a_request(turn: str, ask: str):
    found = analyse(turn)
    assert found.kinds[1] == "request"
    assert all(ask not in m.text for m in found.memories)
    assert found.memories[0].text.startswith("我是会计")


def test_an_imperative_closing_the_sentence_is_still_a_request():
    found = analyse("我是会计，写辞职信")
    assert found.kinds == ("disclosure", "request")
    assert [m.text for m in found.memories] == ["我是会计"]
