"""A lasting fact told with a day is still profile, a true episode stays an event
(gateway.memorization.scope: is_episode, TAKEN_ON, ONGOING, HABIT; the statement path of
gateway.memorization.disclosure._durable). Sans-IO: the rules alone, no store."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import Formed, analyse


def _formed(turn: str) -> list[Formed]:
    found = analyse(turn)
    return list(found.memories) or ([found.statement] if found.statement is not None else [])


@pytest.mark.parametrize("turn", [
    # something taken on: what the user owns, where they work, who supervises them, an age
    "Traded the old hatchback in for a camper van last week.",
    "We closed on a little cabin up north last week!",
    "Professor Lin is taking me over next month.",
    "Our twins turned 5 last week.",
    "We picked out a puppy on Saturday!",
    "上个月接手了隔壁的奶茶店",
    "我被调到总部了，下周一报到",
    "昨天又捡了条小狗回家",
    # a habit or a state that holds over a span, beside the day or the feeling
    "The vet put Rex on eye drops yesterday, three times a day.",
    "I'm on the early bus route from next month.",
    "I'm looking after my sister's cat for the next month.",
    "药一天三次，昨天忘吃了",
    "我一喝咖啡就心慌，今天又喝多了",
    "儿子今年初二，昨天家长会被老师点名了",
    "老胃病又犯了，昨天疼了一晚上",
    "在一家小律所当助理，今天又被骂了，好烦",
    "还在喂夜奶，今天困死了",
    "我老公在工地干活，这周又没回家",
    # a statement about something else that names a lasting topic (a diagnosis in -itis)
    "Physio says it's tendinitis, no climbing for a while.",
])
def test_a_lasting_fact_told_with_a_day_or_a_feeling_is_profile(turn: str):
    formed = _formed(turn)
    assert formed and all(m.durable for m in formed), [(m.text, m.durable) for m in formed]


@pytest.mark.parametrize("turn", [
    "I went to a jazz concert last week.",
    "covering a colleague's run next week, just the one week",
    "Had a great time at the beach on Saturday.",
    "I transferred 200 quid to my brother yesterday.",  # money moved, no post taken on
    "We picked up a pizza last night.",  # no animal picked up
    "I grabbed a hot dog at the game yesterday.",
    "the kids took over the living room yesterday",  # "took over" a place, not a post
    "took the stairs two at a time this morning",  # "at a time" with no span of time
    "昨天去看了电影",
    "昨天跟朋友去吃了火锅",
    "昨天在家做饭做到九点",  # 在家做饭: an errand at home, no post
    "昨天在地铁上读小说，坐过站了",  # 读 a novel, no course of study
])
def test_a_true_episode_stays_an_event(turn: str):
    formed = _formed(turn)
    assert formed and not any(m.durable for m in formed), [(m.text, m.durable) for m in formed]
