"""Venting and talk of the news form nothing lasting (gateway/memorization/salience.py
``is_closing``, gateway/memorization/kinds.py ``is_news``, gateway/memorization/disclosure.py).

- A clause that only closes the speaker's own telling ("不说了", "不想说了", "谢谢你听我念叨",
  "rant over", "thanks for listening", "just needed to vent") or addresses a vent to an audience
  (家人们, 谁懂啊) is small talk; the telling it closes, when it is only the day's episodes or
  names no fact of the user's, forms nothing. The user's lasting facts beside it stay.
- A clause led by the news or a feed (看新闻说, 刷到, 热搜上说, "the news about", "saw on the
  news") is small talk (talk of the world, not of the user), and so are the comments on it in
  the same turn; news about what is the user's own ("新闻说我们小区要拆迁") is read as before.
- A passing mood (闹心, 心塞, "emo") is no lasting fact; a friend "of mine" leads a memory about
  that friend, not the user (no profile).
"""

from __future__ import annotations

import pytest

from gateway.memorization.clause_classifier import candidates
from gateway.memorization.clauses import clauses
from gateway.memorization.disclosure import analyse
from gateway.memorization.kinds import clause_kind, is_news
from gateway.memorization.salience import is_closing


@pytest.mark.parametrize("text", [
    "不说了", "不说这些了", "算了不提了", "不想说了", "不想说话了", "就想找个地方吐槽一下", "谢谢你听我念叨", "谢谢你听我唠叨这么多",
    "说出来好受多了", "家人们", "谁懂啊", "rant over", "ok rant over lol", "sorry for the rant", "thanks for listening",
    "just needed to vent", "I don't need advice", "not trying to be dramatic",
])
def test_closings_are_recognised(text: str) -> None:
    assert is_closing(text)


@pytest.mark.parametrize("text", [
    "他什么都不说了", "我妈不让我说", "thanks for the recipe", "I need advice on my lease", "我想说说我的情况",
])
def test_other_clauses_are_no_closing(text: str) -> None:
    assert not is_closing(text)


@pytest.mark.parametrize("text", [
    "今天被领导骂了一下午，不想说了",
    "今天被客户怼了一下午，不想说话了",
    "家人们谁懂啊，考试周真的破防了",
    "嗐，不提了，倍儿闹心",
    "不说这些了，谢谢你听我念叨",
    "the bus was late again this morning and I got soaked, rant over",
    "honestly tonight was grim. lost a patient at 4am. dont need advice, just needed to say it somewhere",
    "emo了",
    "心塞",
])
def test_a_vent_forms_nothing(text: str) -> None:
    assert analyse(text).memories == ()
    assert analyse(text).statement is None


@pytest.mark.parametrize(("text", "kept"), [
    ("I got laid off today. don't need advice, just needed to say it", "laid off"),
    ("我上个月确诊了糖尿病，不说了，谢谢你听我念叨", "糖尿病"),
])
def test_the_users_own_fact_beside_a_closing_stays(text: str, kept: str) -> None:
    assert any(kept in m.text for m in analyse(text).memories)


@pytest.mark.parametrize("text", [
    "看新闻说又要延迟退休了",
    "刷到热搜说房贷利率又降了",
    "新闻说下周要大降温",
    "唉今天看新闻说又有设计院裁员，建筑这行真的是一眼望到头",
    "the news about the rail strike has me fuming, they never learn do they",
    "ugh the transit news again today, honestly the whole network should be nationalised",
    "saw on the news that petrol is going up again",
])
def test_talk_of_the_news_forms_nothing(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.statement is None
    assert found.dropped == "small_talk"


@pytest.mark.parametrize("text", ["新闻说我们小区要拆迁", "the news about my company's layoffs came out today"])
def test_news_of_the_users_own_is_read_as_before(text: str) -> None:
    assert not is_news(text)


def test_a_news_clause_is_small_talk_and_the_users_clause_after_it_stays() -> None:
    parts = clauses("看新闻说又要降温了，我下周去哈尔滨出差")
    assert clause_kind(parts[0], first=True) == "small_talk"
    assert any("哈尔滨" in m.text for m in analyse("看新闻说又要降温了，我下周去哈尔滨出差").memories)


@pytest.mark.parametrize("text", ["a buddy of mine is moving to calgary", "friend of mine just got engaged"])
def test_a_friend_of_mine_is_no_profile_fact(text: str) -> None:
    assert all(not m.durable for m in analyse(text).memories)
    statement = analyse(text).statement
    assert statement is None or not statement.durable


@pytest.mark.parametrize("text", [
    "ugh the transit news again today, honestly the whole network should be nationalised",
    "the bus was late again this morning and the driver was rude, rant over",
])
def test_no_clause_of_a_vent_is_a_candidate_for_the_learned_clause_classifier(text: str) -> None:
    assert candidates(text) == []
