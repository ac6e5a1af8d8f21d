"""A change the user gives as known inside an ask is told (gateway/memorization/kinds.py
``_PRESUPPOSED_EN``, ``_MY_NEW_EN``, ``_TRANSFERRED_ZH``): a reason or time clause with the user
as subject ("now that we live in Oakland", "since I'm vegan now") or before a change with the
subject dropped ("since switching to nights"), "my new job at Stripe" / "my first week at
Google" inside a question, and a Chinese transfer with its subject dropped (刚调到心内科). Such
an update used to form nothing when it sat inside a request."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse


@pytest.mark.parametrize(("text", "kept"), [
    ("How do I handle the commute now that we live in Oakland?", "Oakland"),
    ("ok so since I'm vegan now, what can I bring to the bbq?", "vegan"),
    ("Since switching to nights, how do I sleep during the day?", "switching to nights"),
    ("What's a good gym near my new place in Austin?", "Austin"),
    ("Any tips for my first week at Google?", "Google"),
    ("With my new job at Stripe starting Monday, what should I wear?", "Stripe"),
    ("刚调到心内科，要看哪些书", "心内科"),
])
def test_a_change_given_as_known_inside_an_ask_is_told(text: str, kept: str) -> None:
    assert any(kept in m.text for m in analyse(text).memories), analyse(text)


@pytest.mark.parametrize("text", [
    "since when is that a thing?",
    "because it's raining, what should we do?",
    "what's a good gym near a new place in Austin?",
    "调到哪个科比较好",
])
def test_no_user_no_change_told(text: str) -> None:
    assert analyse(text).memories == ()


@pytest.mark.parametrize("text", [
    "戒烟以后老想吃零食咋办",
    "生完二胎以后腰一直疼怎么办",
    "离婚以后一直失眠怎么办",
    "升了主管以后怎么管以前的同事",
])
def test_a_chinese_change_fronted_before_an_ask_is_told(text: str) -> None:
    assert [m.text for m in analyse(text).memories] == [text]


@pytest.mark.parametrize("text", [
    "退休以后干点啥好",  # a bare time clause before a generic ask: a plan or anyone's
    "结婚以后要不要跟公婆住",
    "吃了饭以后能马上跑步吗",  # an everyday act, no lasting change
    "如果辞职以后一直没收入怎么办",  # supposed
])
def test_a_time_clause_with_no_lasting_change_told_stays_an_ask(text: str) -> None:
    assert analyse(text).memories == ()
