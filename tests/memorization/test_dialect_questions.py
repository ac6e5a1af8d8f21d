"""Dialect and colloquial question forms without a question mark ask as their standard forms do
(gateway/memorization/asks.py ``QUESTION_WORD_ZH``, ``QUESTION_END_ZH``, ``QUESTION_START_EN``):
Cantonese 咩 / 乜(嘢) / 点样 / 边度, the A-not-A with 唔 (会唔会, 可唔可以) and 有冇, a final 冇; the
northern 嘛 for 什么 after a verb (喝点嘛好, 都学嘛呀); the Wuhan 么样 (怎样); an English wh-word
with its apostrophe dropped ("hows ..."). The user's facts beside them stay, and 冇乜 ("not much")
asks nothing.
"""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse
from tests.memorization.conftest import kept_texts as _kept


@pytest.mark.parametrize("text", [
    "褪黑素食得多会唔会上瘾",
    "我同事问 打完HPV疫苗可唔可以饮酒",
    "厕所同冲凉房要装乜嘢扶手同防滑",
    "倒车入库有冇口诀",
    "闲下来不知道干嘛 老年大学都学嘛呀",
    "热干面自己在屋里么样做才好吃",
    "hows mileage tracked for taxes in canada",
])
def test_a_dialect_question_forms_nothing(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.dropped in ("request", "question")


@pytest.mark.parametrize(("text", "kept"), [
    ("我系急诊科护士 夜班落班之后成日瞓唔着 有冇咩办法", "我系急诊科护士，夜班落班之后成日瞓唔着"),
    ("我养咗只乌龟叫慢慢 搬屋嘅话点样运佢先安全", "我养咗只乌龟叫慢慢"),
    ("我在长沙做美甲的 想学画那种日系的晕染 有冇教程推荐", "我在长沙做美甲的，想学画那种日系的晕染"),
])
def test_the_question_is_cut_off_the_users_fact(text: str, kept: str) -> None:
    assert _kept(text) == [kept]


def test_not_much_is_no_question() -> None:
    assert any("冇乜力" in m for m in _kept("我阿爸上个礼拜中风咗，而家喺中山一院住院，右边手脚冇乜力，话都讲唔清楚"))
