"""Chinese verbatim formation: statements whose subject is dropped (the speaker, pro-drop),
by grammar category (gateway/memorization/kinds.py, :func:`clause_kind`). Each example
is the user's fact before a question in the same turn, or a statement on its own; the
negatives are replies of the moment, calendar talk and talk about the other side."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import Clause, analyse, clause_kind, clauses
from gateway.memorization.verbatim import verbatim_plan
from tests.memorization.test_worth_remembering import _job


def _kept(text: str) -> str:
    return " / ".join(m.text for m in analyse(text).memories)


@pytest.mark.parametrize(("text", "kept"), [
    # sentence-final 了: a currently relevant state (a change), the opening clause's zero subject is the speaker
    ("驾照考下来了 周末想去自驾游 有什么路线推荐", "驾照考下来了"),
    ("论文终于投出去了 接下来该干嘛", "论文终于投出去了"),
    ("好的 论文投出去了 接下来该干嘛", "论文投出去了"),  # after small talk the clause still opens the turn
    # durative 在 / 还在: an ongoing activity of the speaker
    ("还在喂夜奶 怎么断比较好", "还在喂夜奶"),
    # a future time word before a verb of motion: a planned trip, the speaker's
    ("下周末去成都出差 有什么必吃的", "下周末去成都出差"),
    # a trade named by verb-object + 的 with no copula: "(我是)干装修的"
    ("干装修的 手上老起茧 有什么护手霜推荐", "干装修的"),
    # a pseudo-cleft V的(是) X: "what (I) use is ..."
    ("快递用的顺丰 寄生鲜要注意啥", "快递用的顺丰"),
    # a disease named by its -炎 suffix, verbless: the speaker's condition
    ("中耳炎 坐飞机要注意什么", "中耳炎"),
    # a slot's own words (study) with no subject
    ("二刷考研 专业课怎么复习", "二刷考研"),
    ("读研二 论文写不出来怎么办", "读研二"),
])
def test_a_chinese_statement_with_its_subject_dropped_is_the_speakers(text: str, kept: str):
    assert kept in _kept(text)


def test_a_future_trip_is_a_plan_and_lasts_until_it_happens():
    (memory,) = analyse("下个月去大连开会 穿什么合适").memories
    assert memory.text == "下个月去大连开会" and memory.durable


@pytest.mark.parametrize("text", [
    "吃饱了 谢谢",  # too short to be news: a reply of the moment
    "太好了 帮大忙了",  # the exclamative 太…了
    "快过年了 有什么年货推荐",  # calendar, and 快…了 has not happened
    "快到周末了",
    "就这个了",  # a choice among the options talked about
    "哈哈行 就这家了",
    "好的好的 辛苦你了",  # about the other side
    "卖得挺好的",  # 卖 + the complement 得: no trade
    "你用的是什么",
    "天气炎热 推荐个避暑地",  # 炎热 is the weather, no -炎 disease
    "在吗 在不在",
])
def test_replies_calendar_talk_and_the_other_side_form_nothing(text: str):
    assert not analyse(text).memories


def test_still_before_a_negation_is_no_alternative_question():
    # 还是 + 没 / 不 is the adverb "still", not "A or B"
    assert clause_kind(Clause("失眠还是没好", "", False), first=True) == "disclosure"
    assert "失眠还是没好" in _kept("失眠还是没好 换了个枕头")
    assert clause_kind(Clause("早上量好还是晚上量好", "", False)) == "question"


def test_a_space_after_a_latin_word_glued_to_chinese_is_a_comma():
    texts = [c.text for c in clauses("做前端的 主要写vue 最近想学flutter 有什么教程")]
    assert texts == ["做前端的", "主要写vue", "最近想学flutter", "有什么教程"]
    assert "主要写vue" in _kept("做前端的 主要写vue 最近想学flutter 有什么教程")
    # spaces around a Latin word (the writer spaces Latin words): no cut
    assert [c.text for c in clauses("我用 Python 写爬虫")] == ["我用 Python 写爬虫"]


def test_an_ask_led_by_qiu_is_a_request():
    assert clause_kind(Clause("求个书单", "", False)) == "request"
    assert clause_kind(Clause("求推荐", "", False)) == "request"


@pytest.mark.parametrize(("question", "answer"), [
    ("你家猫几岁了？", "7"),  # a bare number answers a how-many question: no small talk
    ("你一天喝几杯咖啡？", "三四杯吧"),  # an estimate closed by 吧 asks nothing
    ("How many kids do you have?", "3"),
])
def test_a_bare_number_or_an_estimate_keeps_the_question_it_answers(question: str, answer: str):
    plan = verbatim_plan(_job(("user", answer), context=f"好的。{question}"), [answer], ["user"], skip_small_talk=True,
                         profile=True, formation="disclosure")
    assert [op.memory.text for op in plan.ops if op.memory] == [f"{question} — {answer}"]


def test_a_question_closed_by_ba_without_a_number_still_asks():
    assert clause_kind(Clause("应该没事吧", "", False)) == "question"


@pytest.mark.parametrize(("question", "answer", "memory"), [
    # the reply names no subject: what it is about is what was asked (object and topic left out)
    ("你午饭一般吃什么？", "基本不吃 偶尔一个苹果", "你午饭一般吃什么？ — 基本不吃，偶尔一个苹果"),
    ("你开的是什么车？", "大众的 开了五年了", "你开的是什么车？ — 大众的，开了五年了"),
])
def test_a_chinese_reply_without_its_subject_keeps_the_question(question: str, answer: str, memory: str):
    plan = verbatim_plan(_job(("user", answer), context=f"好的。{question}"), [answer], ["user"], skip_small_talk=True,
                         profile=True, formation="disclosure")
    (op,) = plan.ops
    assert op.memory is not None and op.memory.text == memory
    assert op.memory.metadata["confirmed"]["question"] == question


@pytest.mark.parametrize(("context", "answer"), [
    ("好的。你平时早饭一般吃什么？", "我基本不吃早饭"),  # it names its subject: it stands on its own
    ("需要我帮你列个清单吗？", "基本不吃 偶尔一个苹果"),  # an offer, no question about the user
    ("在的，有什么可以帮你的？", "血压有点高 晚饭怎么吃比较好"),  # an offer of help, not a question about the user
])
def test_a_reply_that_names_its_subject_or_follows_an_offer_stands_alone(context: str, answer: str):
    plan = verbatim_plan(_job(("user", answer), context=context), [answer], ["user"], skip_small_talk=True,
                         profile=True, formation="disclosure")
    assert [op.memory.text for op in plan.ops if op.memory] == [m.text for m in analyse(answer).memories]
