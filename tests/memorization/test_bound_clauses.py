"""Clauses that hold no fact of their own stay with the statement they depend on, or are
not stored (gateway/memorization/disclosure.py, :func:`analyse`, :func:`_groups`).

A turn that fills a slot ("they promoted me to head nurse") forms one memory for the slot
and one for the rest, so that a new value of the slot retires only what it replaces. A
clause that only gives the result or the reason of the statement before it ("so I run the
whole ward now", "because my cholesterol was high"), or judges the thing that statement
named (离我爸妈家近多了), holds no fact without it: stored apart, it is served as a memory
that says nothing. A passing state that is only the topic of a question about whether it
matters (最近爬完楼梯膝盖有点疼，要不要紧？) is part of the ask. A label announcing what
follows ("Quick heads up before my question:") is no part of the fact.

Beside each category: true disclosures of a similar shape that stay their own memory
(losing a fact, or retiring it with an unrelated slot, is worse than a junk line)."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse


def _memories(text: str) -> list[str]:
    return [m.text for m in analyse(text).memories]


def _statements(text: str) -> list[str]:
    """The statements of the turn's memory (one memory per turn; a change retires only the
    statement it changes)."""
    memories = analyse(text).memories
    assert len(memories) <= 1
    return [s for m in memories for s in m.statement_texts]


@pytest.mark.parametrize(("text", "joined"), [
    # a result clause (so) after the slot clause it follows
    ("they promoted me to head nurse last week, so I run the whole ward now.",
     "they promoted me to head nurse last week, so I run the whole ward now."),
    ("I drive a forklift on nights so I sleep till 3pm. any tips for blackout blinds",
     "I drive a forklift on nights so I sleep till 3pm."),
    # a reason clause (because), also after an adverb left of it ("mainly")
    ("I went vegetarian last spring, mainly because my cholesterol was high.",
     "I went vegetarian last spring, mainly because my cholesterol was high."),
    # 所以: the same link in Chinese
    ("我在杭州做程序员，所以经常加班到很晚", "我在杭州做程序员，所以经常加班到很晚"),
])
def test_a_result_or_reason_clause_stays_with_the_statement_before_it(text: str, joined: str):
    assert _memories(text) == [joined]


@pytest.mark.parametrize(("text", "apart"), [
    # a result clause with a slot of its own is its own memory (a new job must not retire the diet)
    ("I work as a nurse, so I'm vegetarian now", ["I work as a nurse", "so I'm vegetarian now"]),
    # a statement of its own in the next sentence is another fact
    ("they promoted me to head nurse last week. My daughter is allergic to peanuts.",
     ["they promoted me to head nurse last week.", "My daughter is allergic to peanuts."]),
    # a condition with no link word after a slot clause is another fact
    ("我现在在深圳做后端开发，腰椎间盘突出又犯了", ["我现在在深圳做后端开发", "腰椎间盘突出又犯了"]),
])
def test_a_statement_of_its_own_after_a_slot_clause_stays_apart(text: str, apart: list[str]):
    assert _statements(text) == apart


@pytest.mark.parametrize(("text", "joined"), [
    # a subjectless judgement of the place just named (离 X 近 / 远) or a comparative (多了)
    ("上个月搬到上海闵行区了 离我爸妈家近多了 周末好回去吃饭", "上个月搬到上海闵行区了，离我爸妈家近多了，周末好回去吃饭"),
    ("去年年底从宝山搬到了浦东新区 离公司和孩子学校都很近", "去年年底从宝山搬到了浦东新区，离公司和孩子学校都很近"),
])
def test_a_chinese_judgement_of_the_slot_value_stays_with_it(text: str, joined: str):
    assert _memories(text) == [joined]


@pytest.mark.parametrize(("text", "apart"), [
    # a subjectless clause that tells another lasting thing is no judgement: its own memory
    ("上个月搬到上海闵行区了 养了一只三岁的橘猫叫团子", ["上个月搬到上海闵行区了", "养了一只三岁的橘猫叫团子"]),
    # a comparative led by a subject of its own (someone of the user's) is about them
    ("上个月搬到上海闵行区了 我婆婆身体比以前好多了", ["上个月搬到上海闵行区了", "我婆婆身体比以前好多了"]),
])
def test_a_chinese_clause_of_its_own_after_the_slot_clause_stays_apart(text: str, apart: list[str]):
    assert _statements(text) == apart


@pytest.mark.parametrize("text", [
    # the zero subject of 要不要紧 / 正常不 / 严重吗 is the clause before it: the state asked about
    "最近爬完楼梯膝盖有点疼，要不要紧？",
    "坐久了偶尔头晕 正常不",
    "最近一到晚上就胃胀 严不严重",
    # the English deictic subject of "is that normal" points back the same way
    "my knee hurts after running, is that normal?",
    "my eye keeps twitching lately, should I be worried?",
])
def test_a_state_asked_about_is_part_of_the_question(text: str):
    assert _memories(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    # a diagnosed or chronic condition holds whatever is asked about it
    ("我有高血压 偶尔头晕 正常吗", "我有高血压"),
    ("I have asthma, is that a problem for scuba diving?", "I have asthma"),
    ("I was diagnosed with migraines last year, is that normal?", "I was diagnosed with migraines last year"),
    # a question with a subject or an object of its own asks about something else
    ("我在医院上夜班，这样对身体影响大吗", "我在医院上夜班"),
])
def test_a_lasting_fact_before_a_question_is_kept(text: str, kept: str):
    assert kept in " / ".join(_memories(text))


@pytest.mark.parametrize(("text", "memory"), [
    ("Quick heads up before my question: my son is allergic to tree nuts.", "my son is allergic to tree nuts."),
    ("Reminder for later: I don't eat pork, never have.", "I don't eat pork, never have."),
    ("context: 3rd year nursing student in Leeds.", "3rd year nursing student in Leeds."),
    ("提醒一下：我对青霉素过敏", "我对青霉素过敏"),
])
def test_a_label_announcing_what_follows_is_not_stored(text: str, memory: str):
    assert _memories(text) == [memory]


@pytest.mark.parametrize(("text", "memory"), [
    # a preface that names the topic is part of the statement
    ("Allergies: peanuts and shellfish, for me and my son.", "Allergies: peanuts and shellfish, for me and my son."),
    ("My kids are both grown now: one lives in Perth and one is in the army.",
     "My kids are both grown now: one lives in Perth and one is in the army."),
])
def test_a_preface_that_names_the_topic_stays(text: str, memory: str):
    assert " ".join(_memories(text)) == memory


def test_an_a_not_a_question_of_any_verb_asks_but_the_adverbs_do_not():
    # X不X of an adjective's first syllable asks (严不严重); 动不动 / 时不时 are adverbs of frequency
    assert _memories("最近晚上老磨牙 严不严重") == []
    assert _memories("我儿子动不动就发脾气 时不时还摔东西") == ["我儿子动不动就发脾气，时不时还摔东西"]


@pytest.mark.parametrize(("text", "joined"), [
    # a clause inside a parenthesis opened in the clause before is an aside to it
    ("got promoted to team lead (same team, we're 12 people now). any tips for 1:1s?",
     "got promoted to team lead (same team, we're 12 people now)."),
])
def test_a_parenthetical_stays_with_the_clause_it_interrupts(text: str, joined: str):
    assert _memories(text) == [joined]


@pytest.mark.parametrize("text", [
    # who set up or suggested the app: talk about the conversation's medium, not a fact
    "Hi. My nephew installed this app for me.",
    "Good evening, my daughter said I should try this chatbot.",
    "你好 我孙女给我装的这个软件",
])
def test_talk_about_the_app_itself_forms_nothing(text: str):
    assert _memories(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    # the same people in a statement about something else stay
    ("My nephew installed solar panels on our roof.", "My nephew installed solar panels on our roof."),
    ("my daughter said I should try swimming for my back", "my daughter said I should try swimming for my back"),
])
def test_the_same_shape_about_something_else_stays(text: str, kept: str):
    assert _memories(text) == [kept]


def test_a_state_of_someone_of_the_users_asked_about_keeps_who_they_are():
    # the question is about the state, but the clause tells that the user has a dog named 豆豆
    assert _memories("我家狗狗豆豆最近老挠耳朵，要紧吗？") == ["我家狗狗豆豆最近老挠耳朵"]


def test_a_label_that_announces_a_change_stays():
    # "change of plans" says that what follows replaces a plan (read by the supersede rules)
    assert _memories("Also change of plans: we're driving to Denver instead of flying.")[0].startswith("Also change of plans")


@pytest.mark.parametrize(("text", "joined"), [
    # only how the speaker feels about what was just told: the evaluation of the news
    ("儿子考上市重点高中了 我这当妈的比他还激动", "儿子考上市重点高中了，我这当妈的比他还激动"),
    ("they finally made me shift supervisor at the depot, I'm so relieved!",
     "they finally made me shift supervisor at the depot, I'm so relieved!"),
])
def test_a_feeling_about_the_news_stays_with_it(text: str, joined: str):
    assert _memories(text) == [joined]


@pytest.mark.parametrize(("text", "apart"), [
    # a feeling that names its own matter is another thing the user tells
    ("they finally made me shift supervisor at the depot, I'm nervous about my knee surgery next week",
     ["they finally made me shift supervisor at the depot", "I'm nervous about my knee surgery next week"]),
])
def test_a_feeling_with_its_own_matter_stays_apart(text: str, apart: list[str]):
    assert _statements(text) == apart


def test_a_chinese_demonstrative_points_back_at_the_slot_value():
    # 原来那台: "the old one", the thing the change replaced, and a judgement of the new one
    assert _statements("上个月换了辆理想L6 原来那台两万块卖了 开起来稳多了") == [
        "上个月换了辆理想L6，原来那台两万块卖了，开起来稳多了"]
    # 这个 + a time word is no thing named before: a plan of its own
    assert _statements("上个月换了辆理想L6 这个周末我带女儿去千岛湖自驾") == [
        "上个月换了辆理想L6", "这个周末我带女儿去千岛湖自驾"]


def test_so_after_a_copula_is_a_degree_not_a_cut():
    # "I'm so relieved": the clause is not cut before "so" (a degree adverb, not the conjunction)
    assert _memories("I'm so relieved, my mom's biopsy came back clear") == ["I'm so relieved, my mom's biopsy came back clear"]


def test_a_replacement_ending_in_instead_stays_with_the_change():
    assert _statements("We moved to Leeds in the summer, I'm doing night classes at the college instead.") == [
        "We moved to Leeds in the summer, I'm doing night classes at the college instead."]
    # without "instead" a statement of its own after the change stays apart
    assert _statements("We moved to Leeds in the summer, my sister moved in with us.") == [
        "We moved to Leeds in the summer", "my sister moved in with us."]


def test_a_thousands_separator_cuts_no_clause() -> None:
    from gateway.memorization.clauses import clauses
    assert [c.text for c in clauses("I walk 12,000 steps a day, every day")] == ["I walk 12,000 steps a day", "every day"]
    assert [c.text for c in clauses("rent is $2,100 now, ouch")] == ["rent is $2,100 now", "ouch"]
    assert len(clauses("we have 2,3 or 4 kids coming")) == 2  # "2,3": no thousands, a cut as before
