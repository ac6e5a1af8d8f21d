"""A request to revise the last answer (tone, length, format, register) forms nothing
(gateway/memorization/asks.py ``REVISION_EN`` / ``REVISION_ZH``, gateway/memorization/kinds.py
``_part_of_the_request``); a lasting instruction about how the user always wants answers is a
preference and stays ("I prefer short answers", "以后回答都简短点", "always reply in Chinese").
"""

from __future__ import annotations

import pytest

from gateway.memorization.clause_classifier import candidates
from gateway.memorization.disclosure import analyse
from tests.memorization.conftest import kept_texts as _kept


@pytest.mark.parametrize("text", [
    "Lovely. Could you make it a touch shorter, it's only a little card",
    "ok put that in a table",
    "And drop 'unfortunately'",
    "更 practical 一点，别写那种空话",
    "再平啲",
    "tone 再 professional 一点",
    "再加个随叫随到的意思",
    "再简单点 我就要三条",
    "帮我写个群公告，说晚上九点以后不回消息，要客气但是要硬气",
    "帮我写条朋友圈 庆祝搬新屋 唔好太肉麻",
    "帮我写个朋友圈 就说家里添丁了 逗一点",
    "搞个几张图的步骤噻",
])
def test_a_revision_of_the_reply_forms_nothing(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.statement is None
    assert candidates(text) == []  # nor is any clause left for a learned classifier to promote


@pytest.mark.parametrize("text", [
    "帮我写一封英文邮件给海外 KOL，约一个 collab，语气 friendly 一点",
    "中，那你给俺写几句跟业主解释的话，说人话，别整太专业",
])
def test_a_revision_beside_a_request_forms_nothing(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.statement is None


@pytest.mark.parametrize(("text", "kept"), [
    ("I prefer short answers", "I prefer short answers"),
    ("以后回答都简短点", "以后回答都简短点"),
    ("always reply in Chinese", "always reply in Chinese"),
    ("就我们兄弟俩，再加上他女朋友", "我们兄弟俩"),
    ("帮我写个朋友圈，说我考上研究生了", "考上研究生"),
    ("我骑的崔克，碳架的，有啥推荐不，别太重", "崔克"),
])
def test_a_standing_instruction_and_the_users_facts_stay(text: str, kept: str) -> None:
    assert any(kept in m for m in _kept(text))
