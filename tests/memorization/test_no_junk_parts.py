"""Parts of a turn that hold no fact of their own (gateway/memorization/disclosure.py,
:func:`analyse`, :func:`_groups`).

1. A Chinese clause with no subject of its own (a zero pronoun: Li & Thompson 1981, ch. 24)
   says more about the topic of the clause before it, also when it fills a slot of its own
   after a clause about someone of the user's: one memory with it ("车是租的比亚迪秦，一个月
   租金好几千"), not a memory that serves "一个月租金好几千" alone in every prompt.
2. A turn that only tells how the user is right now, a task just finished or a remark
   about the listener (:func:`gateway.memorization.salience.is_passing`) forms no memory:
   a one-off state, dropped as small talk.

Controls: a clause with a subject of its own, a health complaint, a new pet or person, and
an episode or lasting fact beside the state stay memories of their own."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse


def _memories(text: str) -> list[str]:
    return [m.text for m in analyse(text).memories]


def _statements(text: str) -> list[str]:
    """The statements of the turn's memory (one memory per turn)."""
    memories = analyse(text).memories
    assert len(memories) <= 1
    return [s for m in memories for s in m.statement_texts]


@pytest.mark.parametrize(("text", "joined"), [
    ("车是租的比亚迪秦，一个月租金好几千，肉疼", "车是租的比亚迪秦，一个月租金好几千，肉疼"),
    ("上周搬家了，现在住余杭，走路去公司十分钟", "上周搬家了，现在住余杭，走路去公司十分钟"),
    ("辞职了 自己在珠江新城开了个私教工作室 房租两万一个月", "辞职了，自己在珠江新城开了个私教工作室，房租两万一个月"),
    ("在长沙开了家奶茶店，就在大学城旁边", "在长沙开了家奶茶店，就在大学城旁边"),
    # after a clause about someone of the user's, a subjectless clause with a slot is still theirs
    ("我老婆在县医院当护士 女儿4岁 跟着外婆在县城住", "我老婆在县医院当护士，女儿4岁，跟着外婆在县城住"),
])
def test_a_chinese_clause_with_no_subject_stays_with_the_clause_before(text: str, joined: str):
    assert _memories(text) == [joined]


@pytest.mark.parametrize(("text", "apart"), [
    # a health complaint is its own memory: a new job must not retire it
    ("我在深圳一家电商公司做后端，天天加班，腰椎间盘突出又犯了", ["我在深圳一家电商公司做后端，天天加班", "腰椎间盘突出又犯了"]),
    # a clause with the user in it is the user's own statement
    ("孙子读初二数学跟不上，当过三十年小学老师的我还能辅导吗", ["孙子读初二数学跟不上", "当过三十年小学老师的我还能辅导吗"]),
    # a new pet, counted, is another fact
    ("上个月搬到上海闵行区了 养了一只三岁的橘猫叫团子", ["上个月搬到上海闵行区了", "养了一只三岁的橘猫叫团子"]),
    # a clause with a subject of its own
    ("男朋友阿杰在北邮读研，我们一般周末才见。", ["男朋友阿杰在北邮读研", "我们一般周末才见。"]),
])
def test_a_chinese_clause_of_its_own_stays_apart(text: str, apart: list[str]):
    assert _statements(text) == apart


@pytest.mark.parametrize("text", [
    "hi. it's 3am and I'm wide awake again lol",
    "morning! just clocked off, knackered",
    "I'm exhausted.",
    "Thank you love, you're very patient with me.",
    "今天累瘫了哈哈",
    "今天好累 不想说话",
    "论文初稿写完了",
    "数学一刷完了 二刷应该怎么刷",
])
def test_a_turn_that_only_tells_a_passing_state_forms_nothing(text: str):
    found = analyse(text)
    assert found.memories == () and found.statement is None and found.dropped == "small_talk"


@pytest.mark.parametrize("text", [
    "I've been exhausted for weeks.",  # a state over a span
    "I always get nervous before flights.",  # a habit
    "We're moving to Denver, so excited!",  # a plan beside the feeling
    "I'm exhausted, my son started daycare this week.",  # something else beside the state
    "我们在滨江买了套二手房，上周刚搬完，累瘫了。",
    "我今天早上跑了五公里",  # an episode is still an event
])
def test_a_passing_state_beside_something_else_still_forms_it(text: str):
    assert analyse(text).memories


@pytest.mark.parametrize("text", [
    "行 知道了 谢了哥",  # thanks with a term of address
    "谢谢姐",
    "邮件语气再软一点呗，毕竟是老客户了",  # a request to change what the assistant wrote
    "再写短一点",
    "稍微正式些吧",
])
def test_thanks_to_a_vocative_and_a_request_for_more_of_a_quality_form_nothing(text: str):
    assert analyse(text).memories == ()


@pytest.mark.parametrize(("text", "kept"), [
    ("我哥在深圳上班", "我哥在深圳上班"),  # 哥 after 我 is the user's brother, no vocative
    ("我想再瘦一点", "我想再瘦一点"),  # the user's own wish about themselves
])
def test_a_brother_and_the_users_own_wish_stay(text: str, kept: str):
    assert [m.text for m in analyse(text).memories] == [kept]


@pytest.mark.parametrize(("text", "joined"), [
    ("网约车我不干了，太熬人，现在给一个公司老板当司机，活少稳定", "网约车我不干了，太熬人，现在给一个公司老板当司机，活少稳定"),
    ("QUIT THE DAY JOB!! streaming + editing for a youtuber full time now",
     "QUIT THE DAY JOB!! streaming + editing for a youtuber full time now"),
    ("明年冬天不去海南了 太贵 跟老姐妹说好了去西双版纳住俩月", "明年冬天不去海南了，太贵，跟老姐妹说好了去西双版纳住俩月"),
])
def test_an_ending_and_what_replaced_it_are_one_memory(text: str, joined: str):
    assert _memories(text) == [joined]


@pytest.mark.parametrize(("text", "apart"), [
    # a new fact of another slot after an ending is its own memory
    ("I quit my job, and my daughter is allergic to peanuts", ["I quit my job", "and my daughter is allergic to peanuts"]),
])
def test_an_ending_beside_another_fact_stays_apart(text: str, apart: list[str]):
    assert _statements(text) == apart


def test_an_ending_alone_is_still_a_memory():
    assert _memories("我不喝咖啡了") == ["我不喝咖啡了"]


@pytest.mark.parametrize("text", [
    "我表哥腰突做了手术，术后多久能开车",
    "兄弟想追他们公司前台，送花会不会太土",
    "闺蜜说她室友的男朋友天天来宿舍，她该咋开口",
    "我闺蜜倒是搬去上海了，以后想约个饭都难",  # no residence slot of the user's: she moved
    "my buddy just got engaged to his girlfriend of ten years",
    "my buddy is ill, no idea what to get him",  # "ill" is no "I'll"
])
def test_news_of_an_acquaintance_is_an_event_not_the_users_profile(text: str):
    (found,) = analyse(text).memories
    assert not found.durable and found.slot is None


@pytest.mark.parametrize("text", [
    "同事小周下个月调去滨江店了，以后没人陪我吃饭了呜呜",  # names the user after the lead
    "my roommate keeps the thermostat on 78 all day and i wake up drenched",
    "兄弟，我在深圳跑美团，一天骑十几个小时",  # 兄弟 is a term of address here
    "我妈有高血压，一直在吃药",  # kin, not an acquaintance
])
def test_an_acquaintance_with_the_user_in_it_or_kin_stays_profile(text: str):
    assert any(m.durable for m in analyse(text).memories)


@pytest.mark.parametrize("text", [
    "今天版本上线 人麻了 加班到三点",
    "今天又被乘客投诉了 心累",
    "今天实验又失败了 好累",
    "had back to back meetings today, totally drained",
    "今天拿到快递了 好开心",  # a parcel got is no credential
])
def test_a_report_of_the_users_day_with_how_they_feel_forms_nothing(text: str):
    assert analyse(text).memories == ()


@pytest.mark.parametrize("text", [
    "县医院麻醉科的，今天连轴转了七台，腿都站麻了",  # who the user is
    "I'm a nurse, did three codes today, totally drained",
    "今天搬家了，累死了",  # a change holds past the day
    "今天膝盖又疼了，好烦",  # a health complaint
    "我今天早上跑了五公里",  # an episode with no feeling: still an event
    "passed my driving test today, so stoked",  # something attained holds past the day
    "今天拿到驾照了 好激动",
    "今天考过科目二了 开心死了",
    "got the offer today!! so happy",
])
def test_a_day_with_who_the_user_is_a_change_or_a_complaint_still_forms_a_memory(text: str):
    assert analyse(text).memories
