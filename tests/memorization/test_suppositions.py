"""What a supposition says is no fact (gateway/memorization/kinds.py ``is_supposed``,
``_goes_on_supposing``; gateway/memorization/disclosure.py's statement path).

- A clause led by a supposition (if / suppose / say / 如果 / 假如 / 要是) is no disclosure and
  never kept as a statement about something else, also when no question follows it ("if i
  moved to berlin instead would backend ppl make more there" named a home slot before,
  "要是明年调去上海的话工资能涨不少" a job); one that tells a habit ("如果不加班的话我每天都去游泳") stays.
- The clauses that go on from a supposition to its ask, naming no user, are part of it
  ("假如搬到婆婆家附近，通勤一个多小时，孕晚期扛得住吗": the hour's commute is the move's); a
  clause that names the user there stays ("我现在通勤才二十分钟").
"""

from __future__ import annotations

import pytest

from gateway.memorization.clause_classifier import candidates
from gateway.memorization.disclosure import analyse
from gateway.memorization.kinds import is_supposed


@pytest.mark.parametrize("text", [
    "if i moved to berlin instead would backend ppl make more there",
    "if we sold the house and rented for a year",
    "要是明年调去上海的话工资能涨不少",
])
def test_a_supposition_alone_forms_nothing(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.statement is None


@pytest.mark.parametrize("text", [
    "假如搬到婆婆家附近，通勤一个多小时，孕晚期扛得住吗",
    "要是换到夜班，每天睡六个小时，身体吃得消吗",
    "if we moved out to the suburbs, a ninety minute commute each way, would that be worth it",
])
def test_what_a_supposition_entails_before_its_ask_forms_nothing(text: str) -> None:
    assert analyse(text).memories == ()


@pytest.mark.parametrize(("text", "kept"), [
    ("假如搬到婆婆家附近，我现在通勤才二十分钟，以后要一个多小时，扛得住吗", "二十分钟"),
    ("If I'm honest, I've been vegan since May", "vegan"),
    ("如果不加班的话我每天都去游泳", "游泳"),
])
def test_the_users_own_words_beside_a_supposition_stay(text: str, kept: str) -> None:
    assert any(kept in m.text for m in analyse(text).memories)


def test_a_hedge_is_no_supposition() -> None:
    assert is_supposed("假如搬到婆婆家附近")
    assert is_supposed("say we moved to Leeds")
    assert not is_supposed("if I'm honest")
    assert not is_supposed("I moved to Leeds")


def test_a_supposition_is_no_candidate_for_the_learned_clause_classifier() -> None:
    assert candidates("if i started a second army which faction is easiest for a beginner") == []
