"""Chinese turns whose grammar the clause rules misread: a bare negator answering the other
side's question, an estimate or a statement softened by 吧, a situation that goes on closed by
呢, a pseudo-clef with 种 / 学, 我这 + a lasting state and a 不是…吗 rhetorical question inside an
ask; whose statement a friend's or colleague's is (我闺蜜 without 的); and a commute that names no
vehicle, which keeps the car. Each with controls that must stay as they were: real questions,
suppositions, generic asks and questions about someone else."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import Clause, analyse, clause_kind
from gateway.memorization.slots import keeps_other_fact, slot_of, slots_of
from tests.memorization.test_answer_kind import _answer_memory


def _kind(text: str) -> str:
    return clause_kind(Clause(text, "", False), first=True)


@pytest.mark.parametrize(("question", "answer"), [
    ("你家里有烤箱吗？", "没有，只有一个微波炉"),
    ("你们家附近有地铁吗？", "没，得坐公交"),
    ("你一天大概练多久？", "四个小时吧 中午歇一会"),
    ("你一般睡几个钟头？", "五个钟头吧"),
])
def test_a_bare_negator_or_an_estimate_with_ba_answers_the_question(question: str, answer: str):
    text, _, _ = _answer_memory(question, answer)
    assert text == f"{question} — {answer}"


@pytest.mark.parametrize("text", ["没有", "没", "不", "还没呢", "不是"])
def test_a_bare_negator_asks_nothing(text: str):
    assert _kind(text) != "question"


@pytest.mark.parametrize("text", ["正常不", "伤电池没", "你吃了没有", "能喝啤酒不"])
def test_a_negator_after_a_verb_still_asks(text: str):
    assert _kind(text) == "question"


@pytest.mark.parametrize(("text", "kept"), [
    ("儿子在读高一，成绩一般吧。", "儿子在读高一，成绩一般吧。"),
    ("换到新部门了，每天准点下班，工资比以前高一点吧", "换到新部门了，每天准点下班，工资比以前高一点吧"),
    ("我弟也要去北京读研了，问我租房经验呢，我咋跟他说", "我弟也要去北京读研了，问我租房经验呢"),
])
def test_a_softened_or_durative_statement_stays_with_its_fact(text: str, kept: str):
    assert analyse(text).text == kept


@pytest.mark.parametrize("text", ["成绩一般吧", "人生赢家好吧", "还在装修呢", "问我意见呢"])
def test_ba_after_a_statement_and_durative_ne_ask_nothing(text: str):
    assert _kind(text) != "question"


@pytest.mark.parametrize("text", [
    "能吃吧", "你是老师吧", "明天该下雨了吧", "海鲜呢", "你呢", "学啥好呢", "该去呢", "有没有推荐的呢",
])
def test_ba_and_ne_that_ask_still_ask(text: str):
    assert _kind(text) == "question"


@pytest.mark.parametrize(("text", "kept"), [
    ("种的阳光玫瑰，最近叶子发黄，是不是缺肥了", "种的阳光玫瑰，最近叶子发黄"),
    ("学的是护理 好找工作吗", "学的是护理"),
])
def test_a_pseudo_cleft_of_growing_or_study_before_an_ask_is_the_speakers(text: str, kept: str):
    assert analyse(text).text == kept


@pytest.mark.parametrize("text", [
    "种的什么好，大棚里", "邻居种的阳光玫瑰，是不是缺肥了", "朋友学的是护理，好找工作吗",
])
def test_a_cleft_that_asks_or_names_someone_else_forms_nothing(text: str):
    assert not analyse(text).memories


@pytest.mark.parametrize(("text", "kept"), [
    ("我这孕晚期了能坐高铁吗", "我这孕晚期了能坐高铁吗"),
    ("我这四十岁了还能学钢琴吗", "我这四十岁了还能学钢琴吗"),
    ("我这乳糖不耐受能喝酸奶吗", "我这乳糖不耐受能喝酸奶吗"),
    ("我腰间盘突出能游泳吗", "我腰间盘突出能游泳吗"),
    ("我这腰突还能跑步吗", "我这腰突还能跑步吗"),
])
def test_i_this_with_a_lasting_state_inside_an_ask_is_kept(text: str, kept: str):
    assert analyse(text).text == kept


@pytest.mark.parametrize("text", [
    "我这两天有点累怎么办", "我这周能去吗", "我这头疼怎么办", "如果我怀孕了能坐高铁吗",
    "腰椎间盘突出的话能游泳吗", "孕晚期能坐高铁吗",
])
def test_times_passing_symptoms_suppositions_and_generic_asks_form_nothing(text: str):
    assert not analyse(text).memories


@pytest.mark.parametrize(("text", "kept"), [
    ("我不是在减肥吗，晚上吃啥", "我不是在减肥吗"),
    ("我们不是搬到苏州了吗 附近有啥好玩的", "我们不是搬到苏州了吗"),
    ("我老公不是痛风嘛 海鲜还能吃吗", "我老公不是痛风嘛"),
])
def test_a_rhetorical_bu_shi_question_tells_the_fact(text: str, kept: str):
    assert analyse(text).text == kept


@pytest.mark.parametrize("text", ["我不是说了吗", "我不是跟你讲过吗", "不是说喝咖啡伤胃吗", "我是不是胖了"])
def test_talk_about_the_talk_hearsay_and_real_questions_form_nothing(text: str):
    assert not analyse(text).memories


@pytest.mark.parametrize(("text", "slot"), [
    ("我闺蜜倒是搬去杭州了", None),
    ("我同事在腾讯上班", None),
    ("我大学同学搬到深圳了", None),
    ("我搬去杭州了", "residence"),
    ("我在腾讯上班", "work"),
])
def test_a_friend_or_colleague_without_de_is_the_subject(text: str, slot: str | None):
    assert slot_of(text) == slot


def test_a_friends_move_retires_no_home_of_the_users():
    """End to end through the rules: the friend's move forms a memory with no slot."""
    (memory,) = analyse("我闺蜜倒是搬去杭州了，以后约饭都难").memories
    assert memory.slot is None


@pytest.mark.parametrize(("new", "kept"), [
    ("搬到通州以后去国贸通勤太远了", True),
    ("现在通勤要一个半小时", True),
    ("现在改骑电动车通勤了", False),
    ("车卖了，现在坐地铁通勤", False),
])
def test_a_commute_that_names_no_vehicle_keeps_the_car(new: str, kept: bool):
    older = "旧车卖了换了辆比亚迪汉"
    assert "vehicle" in slots_of(new)
    assert keeps_other_fact(new, slots_of(new), older) is kept


def test_a_new_commute_still_replaces_an_old_commute():
    new = "现在通勤十分钟"
    assert keeps_other_fact(new, slots_of(new), "每天通勤一个半小时，挤地铁") is False



@pytest.mark.parametrize(("text", "kept"), [
    ("搬到苏州了附近有啥好吃的", "搬到苏州了附近有啥好吃的"),
    ("我老婆怀孕了晚上吃点啥好", "我老婆怀孕了晚上吃点啥好"),
    ("我确诊痛风了海鲜还能吃吗", "我确诊痛风了海鲜还能吃吗"),
    ("儿子上初一了该报什么班", "儿子上初一了该报什么班"),
])
def test_a_change_closed_by_le_runs_on_into_the_ask(text: str, kept: str):
    assert analyse(text).text == kept


@pytest.mark.parametrize("text", [
    "要是搬到苏州了附近有啥好吃的",  # a supposition
    "咖啡喝多了手抖正常吗",  # 了 of a condition, nobody named
    "褪黑素吃多了会不会有依赖",
    "那个买了怎么用",  # a demonstrative: the reply's thing
    "感觉每天就是吃了吗睡了吗",  # 了 before a particle closes nothing
    "我最近感冒了吃什么好",  # a passing state, no lasting fact
])
def test_a_le_that_closes_no_statement_forms_nothing(text: str):
    assert not analyse(text).memories


def test_a_place_with_zhe_bian_opening_a_statement_places_the_speaker():
    assert analyse("宁波这边梅雨季 被子都是潮的 有啥办法").text == "宁波这边梅雨季，被子都是潮的"


@pytest.mark.parametrize("text", ["南方这边梅雨季 被子都是潮的 有啥办法", "这边梅雨季 被子都是潮的 有啥办法", "你们那边梅雨季 被子潮吗"])
def test_a_place_that_is_not_the_speakers_forms_nothing(text: str):
    assert not analyse(text).memories


@pytest.mark.parametrize(("text", "n"), [
    ("两个人根本忙不过来", 1), ("我打不过他", 1), ("挺好的，不过有点贵", 2), ("不过他也同意了", 1),
])
def test_bu_guo_as_a_potential_complement_is_no_clause_break(text: str, n: int):
    from gateway.memorization.clauses import clauses
    assert len(clauses(text)) == n


@pytest.mark.parametrize(("assistant", "question"), [
    ("改好了。顺便问一下，你们住哪个区？我可以帮你留意附近的活动。", "顺便问一下，你们住哪个区？"),
    ("Done. Where are you based? I can suggest a few spots nearby.", "Where are you based?"),
])
def test_a_question_followed_by_why_it_was_asked_is_still_the_question(assistant: str, question: str):
    from gateway.memorization.salience import proposition
    assert proposition(assistant) == question


@pytest.mark.parametrize("assistant", [
    "你们住哪个区？附近有很多公园。",  # a statement after the question, no purpose of asking
    "需要我帮你改一下吗？我可以帮你改得更正式。",  # the question offers help
    "Where are you based? Paris has great parks.",
])
def test_a_question_followed_by_other_talk_is_no_proposition(assistant: str):
    from gateway.memorization.salience import proposition
    assert proposition(assistant) is None


def test_an_answer_to_a_question_before_why_it_was_asked_is_kept_with_it():
    job_question = "顺便问一下，你们住哪个区？我可以帮你留意附近的活动。"
    text, _, _ = _answer_memory(job_question, "园区，湖东那边")
    assert text == "顺便问一下，你们住哪个区？ — 园区，湖东那边"


@pytest.mark.parametrize(("text", "kept"), [
    ("周末去哪玩好呢我们刚搬到苏州", "周末去哪玩好呢我们刚搬到苏州"),
    ("宝宝十个月了辅食怎么加", "宝宝十个月了辅食怎么加"),
])
def test_a_statement_run_on_after_the_ask_or_an_age_with_le_is_kept(text: str, kept: str):
    assert analyse(text).text == kept


@pytest.mark.parametrize("text", [
    "十个月的宝宝辅食怎么加",  # a generic ask: no age reached
    "要是宝宝十个月了辅食怎么加",  # a supposition
    "去哪玩好呢最近天气不错",  # nothing of the user's after the ask
    "这个好吃吗我试试",  # talk about the reply
])
def test_a_generic_or_supposed_ask_and_talk_after_it_form_nothing(text: str):
    assert not analyse(text).memories
