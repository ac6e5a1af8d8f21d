"""A question someone else asked, reported by the user, forms nothing (gateway/memorization/kinds.py,
``_reported_asks``): the asker is an acquaintance or a person of the user's work (同事, 室友, 老乡,
哥们, colleague, buddy, manager, client, coursemate) and the verb is one of asking with the question
after it (问, 问我, "asked (me) if / whether / wh-"). The clauses about the asker around it and the
user's own answer ("i said no", 我帮他问问) go with it; the user's own facts beside it stay, and so
does an ask *to do* ("my doctor asked me to cut salt"), a directive that changes what the user does.
"""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse
from tests.memorization.conftest import kept_texts as _kept


@pytest.mark.parametrize("text", [
    "my buddy asked if u can run two delivery apps at once is that allowed",
    "My manager asked whether we should move our dashboards to Power BI or stay on Tableau - I don't have to decide, "
    "I'm just curious what the main pros and cons are",
    "A client asked whether her ex can move the kids out of state without telling her. General info only, Oklahoma.",
    "my coworker asked if he needs a different visa to work remote from mexico for a month, do u know",
    "a colleague asked me whether you can refreeze breast milk once it's thawed, i said no but now im doubting myself",
    "my coworker is pregnant too and she asked if she can still get her hair relaxed, is that safe?",
    "我同事问 东北冬天电车续航掉多少 他想买个比亚迪",
    "我们组一哥们问 设计师转产品经理靠谱不 您怎么看",
    "室友问我 西瓜霜喷剂治口腔溃疡是真的有用吗",
    "我 colleague 问我，如果他 non-compete 签了两年，跳去竞对会怎么样，你帮我 brainstorm 一下他该注意什么",
    "我一个老乡问 骑手能交社保不 咋交",
    "我们办公室有个老师问，武汉哪些民办初中好考一点",
    "同事问我 杭州产假是多少天 她也怀了",
    "室友下个月要搬出去住 他问我校外租房合同要注意啥 我帮他问问",
    "俺老哥们儿问，他那个前列腺增生，能不能吃锯棕榈",
])
def test_a_reported_question_forms_nothing(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.dropped in ("request", "question")


@pytest.mark.parametrize(("text", "kept"), [
    ("my doctor asked me to cut salt", "my doctor asked me to cut salt"),
    ("my manager asked me to lead the migration team", "lead the migration team"),
    ("同事问我 杭州产假是多少天 我也怀孕了", "我也怀孕了"),
    ("我同事问 港股开户要不要去香港，我在深圳上班", "我在深圳上班"),
    ("my coworker asked if he needs a visa for mexico, I'm moving to Lisbon in May", "moving to Lisbon"),
])
def test_the_users_own_facts_and_directives_stay(text: str, kept: str) -> None:
    assert any(kept in m for m in _kept(text))
