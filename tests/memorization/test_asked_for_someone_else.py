"""Asks that tell nothing of the user's form no memory (gateway/memorization/kinds.py,
``_asked_for_someone_else``), English and Chinese, with facts of the same shape that stay:

1. A supposition before an ask ("If I had to teach online again, ...", "if i were a carpenter
   would my hands ...", 如果以后再养只狗，…): what is supposed has not happened. Not a hedge
   ("if it helps, I have two kids").
2. An acquaintance's thing as the subject before an ask ("my mate's tenant stopped paying
   rent, what should he do", 闺蜜的猫绝育后胖了好多，要怎么减肥): theirs, asked on their behalf.
   Not the contraction "my sister's visiting", not a clause that also names the user ("my
   friend's wedding is in June and I'm the best man"), not a turn that asks nothing, not an
   acquaintance's own plan (闺蜜下个月要去深圳工作了).
3. Someone of the user's telling them off with no content (媳妇老说我, gateway/memorization/
   disclosure.py) keeps the clause before it, what it is about, as a pronoun keeps its antecedent.
"""

from __future__ import annotations

import pytest

from gateway.memorization.clause_classifier import candidates
from gateway.memorization.disclosure import analyse
from tests.memorization.conftest import kept_texts as _kept


@pytest.mark.parametrize("text", [
    "如果以后再养只狗，猫会不会吃醋啊",
    "要是以后换电动自行车通勤，哪款靠谱",
    "假如我辞职在家带娃，家里开销够不够啊",
    "my mate's tenant stopped paying rent, what should he do first?",
    "My friend's parakeet is plucking feathers, should she be worried?",
    "my labmate's gf wants a surprise trip, where should he take her",
    "My neighbor's cat keeps digging up everybody's flower beds on the street, any humane way to deter it?",
    "我哥们家狗咬了人，要赔多少钱啊",
    "闺蜜的猫绝育后胖了好多，要怎么减肥",
    "同事家孩子三岁还不会说整句，要不要去看看",
    "隔壁王姐家的狗老叫，怎么跟她说不伤和气",
    "老铁家饭馆被差评了，咋回复显得大气",
])
def test_a_supposition_or_an_acquaintances_thing_before_an_ask_forms_nothing(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.dropped in ("request", "question")


@pytest.mark.parametrize("text", [
    "If I had to teach online again, what platform is least painful?",
    "if i were a carpenter would my hands be strong enough for v7",
    "if i was to go back to college would that be mad",
    "If a retired fella sold his house and rented instead, would that be dumb?",
])
def test_an_english_supposition_is_part_of_the_ask_not_a_statement_to_promote(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.statement is None  # no statement about something else to keep either
    assert candidates(text) == []  # a learned classifier never sees it as a dropped statement


@pytest.mark.parametrize(("text", "kept"), [
    ("if it helps, I have two kids under 5, what car should we get", "I have two kids under 5"),
    ("my sister's visiting from pune in april, her first time in europe, what should she pack for dutch weather",
     "pune"),
    ("my friend's wedding is in June and I'm the best man, what should I say", "best man"),
    ("also turns out im allergic to cats?? my friend's cat and i cannot be in the same room", "allergic to cats"),
    ("闺蜜下个月要去深圳工作了，好舍不得呜呜，走之前我俩去哪儿玩一趟好", "深圳"),
    ("我闺蜜的婚礼我当伴娘，穿什么好", "伴娘"),
    ("我家猫最近老吐毛球，要紧吗", "我家猫"),
    ("我对花生过敏，如果去泰国玩，吃东西要注意啥", "花生过敏"),
    ("I'm vegetarian, if that matters, what can I cook tonight?", "vegetarian"),
])
def test_the_users_own_facts_beside_them_stay(text: str, kept: str) -> None:
    assert any(kept in m for m in _kept(text))


def test_an_acquaintances_thing_in_a_turn_that_asks_nothing_is_read_as_before() -> None:
    assert _kept("my mate's tenant stopped paying rent") == ["my mate's tenant stopped paying rent"]
    assert _kept("闺蜜的猫绝育后胖了好多") == ["闺蜜的猫绝育后胖了好多"]


@pytest.mark.parametrize(("text", "kept"), [
    ("血脂高的人能天天吃猪蹄不，媳妇老说我", "血脂高的人能天天吃猪蹄不，媳妇老说我"),
    ("痛风的人能喝啤酒吗，我妈天天念叨我", "痛风的人能喝啤酒吗，我妈天天念叨我"),
])
def test_being_told_off_keeps_what_it_is_about(text: str, kept: str) -> None:
    """媳妇老说我 alone is a bare piece: what the user is told off for is the clause before it."""
    assert _kept(text) == [kept]


def test_being_told_something_with_its_own_content_stays_alone() -> None:
    assert _kept("我老婆说我胖了，有啥减肥方法") == ["我老婆说我胖了"]
