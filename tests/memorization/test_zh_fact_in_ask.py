"""Chinese facts said inside an ask (gateway/memorization/kinds.py, asks.py): by grammar category,
each with negatives of the same shape that are pure asks and must still form nothing.

1. A verb of the ask that is only the first morpheme of a word (设计师, 算法岗, 算是, 出差) is
   no request: the clause is a statement or an answer.
2. The speaker with a chronic condition as the comment of the topic 我 ("我痛风能吃海鲜吗"):
   the question presupposes the condition.
3. A bare kin term leading the clause ("妈糖尿病...", "弟弟不是蛋白过敏嘛") names the speaker's
   own relative, as "my mother" does.
"""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import Clause, analyse, clause_kind
from gateway.memorization.verbatim import verbatim_plan
from tests.memorization.conftest import kept_texts as _kept
from tests.memorization.test_worth_remembering import _job

# -- 1. a verb of the ask inside a word -------------------------------------------------

@pytest.mark.parametrize("text", [
    "设计师，在杭州一家广告公司",  # -师 makes a noun: a job title
    "分析师 天天写SQL",
    "算是唯一的爱好了",  # the copula 算是, "counts as"
    "出差去了三亚，这周都不在家",  # 出差, a word: a trip, no "produce (something)"
    "出国读研了",
])
def test_a_word_that_starts_with_a_verb_of_the_ask_is_no_request(text: str):
    assert clause_kind(Clause(text.split("，")[0].split(" ")[0], "", False), first=True) != "request"


@pytest.mark.parametrize("text", [
    "设计一个logo", "分析一下这段代码", "算一下房贷月供", "帮我算算", "出个题考考我", "出一套数学卷子",
    "整理一下会议纪要", "安排个三天的行程", "比较一下这两款手机",
])
def test_the_verbs_of_the_ask_still_ask(text: str):
    assert clause_kind(Clause(text, "", False), first=True) == "request"
    assert not analyse(text).memories


@pytest.mark.parametrize(("question", "answer"), [
    ("你投的是什么岗位？", "算法岗，视觉方向"),
    ("你是做什么的？", "设计师，做包装的"),
])
def test_a_bare_noun_answer_led_by_a_verb_morpheme_keeps_the_question(question: str, answer: str):
    plan = verbatim_plan(_job(("user", answer), context=f"好的。{question}"), [answer], ["user"], skip_small_talk=True,
                         profile=True, formation="disclosure")
    texts = [op.memory.text for op in plan.ops if op.memory]
    assert len(texts) == 1 and answer.split("，")[0] in texts[0]


# -- 2. 我 + a chronic condition before the question ---------------------------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("我痛风能吃海鲜吗", "我痛风"),
    ("这边烧烤摊特别多，我高血压能吃烧烤吗？", "我高血压"),
    ("我血压高能喝咖啡吗", "我血压高"),
])
def test_a_chronic_condition_of_the_speaker_inside_a_question_is_kept(text: str, kept: str):
    memories = _kept(text)
    assert memories and kept in memories[0]


@pytest.mark.parametrize("text", [
    "痛风能吃海鲜吗",  # no one's: a general question
    "高血压的人能喝咖啡吗",
    "我痛风的话能吃海鲜吗",  # 的话: supposed, "if I had gout"
    "要是我痛风能吃海鲜吗",
    "我头疼怎么办",  # a passing symptom, no condition
    "我嗓子发炎了吃什么好",
])
def test_a_general_supposed_or_passing_condition_in_a_question_forms_nothing(text: str):
    assert _kept(text) == []


# -- 3. a bare kin term is the speaker's relative ----------------------------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("妈糖尿病能吃西瓜吗", "妈糖尿病"),
    ("弟弟不是蛋白过敏嘛 加辅食的时候奶酪能吃吗", "弟弟不是蛋白过敏嘛"),
    ("老婆乳糖不耐受能喝酸奶吗", "老婆乳糖不耐受"),
])
def test_a_bare_kin_term_with_a_lasting_condition_is_the_speakers_relative(text: str, kept: str):
    memories = _kept(text)
    assert memories and kept in memories[0]


@pytest.mark.parametrize("text", [
    "孩子过敏怎么办",  # 孩子: children at large, no kin term of the speaker's
    "妈妈们都在问糖尿病能吃什么水果",  # 妈妈们: a group, not "my mother"
    "姐妹们过敏体质用什么面霜",
    "弟子规怎么背",  # 弟子, a word, no kin term
    "妈发烧了怎么办",  # a passing symptom of the relative: no lasting condition
])
def test_groups_generic_people_and_passing_symptoms_form_nothing(text: str):
    assert _kept(text) == []
