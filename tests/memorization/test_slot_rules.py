"""Category rules of verbatim formation (gateway.memorization.disclosure,
gateway.memorization.changes): which clauses are no memory (colloquial questions,
reactions to the assistant), which facts hold whatever their date (conditions found
out), which statements fill a supersede slot and whose they are, and habits switched
within a class; the supersedes run on real Redis. Examples are written for these tests."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.memorization.changes import ended_of, is_about
from gateway.memorization.disclosure import analyse, slot_of
from gateway.memory.records import Tenant
from tests.memorization.conftest import memorize_config
from tests.memorization.test_workers import enqueue, fresh_store

ALICE = Tenant("alice", "tutor")


@pytest.mark.parametrize("turn", [
    "周末带孩子去公园要准备啥",      # 啥: colloquial 什么
    "晚饭吃点啥好",
    "ok love it, thanks x",          # a reaction with its "I" dropped
    "你说得太对了",                   # the assistant's words judged: about the conversation
    "哈哈哈你太懂我了",
    "说到我心坎里了",
])
def test_colloquial_questions_and_reactions_form_no_memory(turn: str):
    found = analyse(turn)
    assert found.memories == () and found.statement is None, found


def test_a_statement_with_an_everything_word_is_no_question():
    (found,) = analyse("我啥都吃，就是不吃香菜").memories
    assert "香菜" in found.text


@pytest.mark.parametrize(("turn", "needle"), [
    ("just found out I'm lactose intolerant?!", "lactose intolerant"),
    ("turns out my son is allergic to kiwi??", "allergic to kiwi"),
])
def test_news_told_with_a_question_mark_is_a_statement(turn: str, needle: str):
    (found,) = analyse(turn).memories
    assert needle in found.text and found.durable


@pytest.mark.parametrize("turn", [
    "Last weekend I ate shrimp at a wedding and found out I'm allergic to shellfish.",
    "上周吃了一次虾，才发现自己对虾过敏",
])
def test_a_condition_found_out_on_a_day_is_profile(turn: str):
    (found,) = analyse(turn).memories
    assert found.durable


@pytest.mark.parametrize(("text", "slot"), [
    ("I quit my retail job last month", "work"),
    ("They made me team lead in March", "work"),
    ("I'm a stay-at-home dad now", "work"),
    ("I got a design internship at a studio", "work"),
    ("我升主管了", "work"),
    ("我现在是家庭主妇", "work"),
    ("我是做前端的", "work"),
    ("we split up in the spring", "relationship"),
    ("I'm seeing someone new", "relationship"),
    ("the band split up", None),
    ("My cousin moved to Denver", None),
    ("our bassist lives in Leeds", None),
    ("our new townhouse is near the river in Ghent", "residence"),
    ("我们在青岛买了套房", "residence"),
    ("My Toyota needs new tires", "vehicle"),
    ("I bike to work most days", "vehicle"),
    ("现在坐公交上班", "vehicle"),
    ("She's at Oakridge Elementary now", "school"),
    ("My girl changed schools in March", "school:daughter"),
    ("我博二，导师管得很严", "study"),
    ("I had a course of antibiotics for a chest infection", None),
])
def test_slot_vocabulary_and_whose_statement_it_is(text: str, slot: str | None):
    assert slot_of(text) == slot


@pytest.mark.parametrize(("new", "old", "about"), [
    ("Switched to decaf last week, my sleep is so much better.", "I drink three espressos a day.", True),
    ("膝盖不行了，现在改骑行了", "我每天早上都去跑步", True),
    ("I took up rowing instead, easier on my back", "I go running every evening", True),
    ("Switched to decaf last week.", "I love green tea.", False),        # a liking, no habit
    ("现在改骑行了", "我每天早上喝咖啡", False),                            # another class
])
def test_a_habit_switched_ends_the_older_habit_of_its_class(new: str, old: str, about: bool):
    assert any(is_about(e, old) for e in ended_of(new)) is about


def test_an_added_habit_switches_nothing():
    assert ended_of("I also play tennis on Sundays now.") == ()


async def _memorize(env: Any, config: Any, store: Any, *texts: str) -> None:
    for text in texts:
        await enqueue(env, config, text)
        await env.drain(config, store)


@pytest.mark.parametrize(("before", "after"), [
    ("I drink three espressos a day.", "Switched to decaf last week, my sleep is so much better."),
    ("我每天早上都去跑步", "膝盖不行了，现在改骑行了"),
    ("My Subaru is in the shop again.", "Sold the car, I bike to work now."),
    ("I'm dating a guy from my climbing gym.", "We split up over the summer."),
    ("我现在是全职妈妈", "下个月回公司上班，还是做会计"),
])
async def test_a_new_value_of_the_same_attribute_supersedes_the_old(env, before: str, after: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith(before.rstrip(".")))
    live = [r for r in records if not r.retired]
    assert old.retired and old.superseded_by in {r.id for r in live}, [(r.text, r.retired) for r in records]


async def test_another_habit_added_retires_nothing(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "I go running every morning.", "I also play tennis on Sundays now.")
    assert not any(r.retired for r in (await store.list(ALICE)).items)


@pytest.mark.parametrize(("turn", "memories"), [
    # a pronoun-led clause continues the memory of its antecedent, slot and all
    ("My girl changed schools in March, she's at Oakridge now", ["My girl changed schools in March, she's at Oakridge now"]),
    # what a colon announces belongs to it
    ("Good news from the office: they made me team lead.", ["Good news from the office: they made me team lead."]),
    # a request after a dash is cut off
    ("got promoted to shift supervisor — can you help me plan the rota?", ["got promoted to shift supervisor"]),
    # "I'm" dropped before a role
    ("Need a weekly plan please. nursing student at McGill, second year", ["nursing student at McGill, second year"]),
])
def test_what_one_memory_holds(turn: str, memories: list[str]):
    assert [m.text for m in analyse(turn).memories] == memories


def test_hoping_it_goes_right_is_talk_about_the_chat():
    assert analyse("I hope I'm doing this right").memories == ()


@pytest.mark.parametrize(("text", "slots"), [
    ("公司把我派到成都了", ("work", "residence")),
    ("我调去急诊科了", ()),                            # a department: job and home stay
    ("I got transferred to Phoenix", ("work", "residence")),
    ("I got transferred to the billing team", ()),
])
def test_a_transfer_fills_work_and_residence_unless_it_is_to_a_department(text: str, slots: tuple[str, ...]):
    from gateway.memorization.disclosure import slots_of
    assert slots_of(text) == slots


async def test_a_transfer_to_a_city_retires_the_old_city(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "我们住在苏州，离园区很近", "公司把我派到成都了，下个月就过去")
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith("我们住在苏州"))
    assert old.retired


def test_and_with_a_subject_and_verb_of_its_own_starts_another_statement():
    (memory,) = analyse("We rent a flat in Porto and the twins are starting nursery soon.").memories
    # the twins' nursery is a school stage of theirs (``school``), another slot than the home
    home, twins = memory.statement_texts
    assert (slot_of(home), slot_of(twins)) == ("residence", "school") and "twins" in twins and memory.slot == "residence"


def test_as_a_job_title_fills_the_work_slot():
    assert slot_of("As a night-shift pharmacist at a hospital, my sleep is a mess.") == "work"


@pytest.mark.parametrize(("new", "old"), [
    ("吉他先放一放了，最近忙", "我在学吉他，每天练半小时"),
    ("I'm taking a break from choir this term", "I sing in a choir on Tuesdays"),
])
def test_putting_something_aside_ends_it(new: str, old: str):
    assert any(is_about(e, old) for e in ended_of(new))


@pytest.mark.parametrize(("text", "slot"), [
    ("we ended up going with the Mazda", "vehicle"),
    ("I took a job at the city library", "work"),
    ("I accepted the offer from Stripe", "work"),
    ("他转行做销售了", None),                          # someone else's
    ("转行做销售了", "work"),
    ("我们搬回老家了", "residence"),
    ("我们上个月领证了", "relationship"),
    ("我住学校宿舍，六人间", "residence"),               # housing: where the user lives
    ("跟同学在地铁站旁边合租", "residence"),
    ("still in the dorms this year", "residence"),
])
def test_more_ways_to_say_a_new_value(text: str, slot: str | None):
    assert slot_of(text) == slot


def test_a_pet_that_died_ends_what_was_said_about_it():
    (ended,) = ended_of("our cat Miso died last week")
    assert is_about(ended, "Our cat Miso sleeps on my keyboard")


@pytest.mark.parametrize(("before", "after", "retired"), [
    ("My girlfriend Ana is a huge board game nerd.", "I proposed to Ana and we are engaged!", True),  # named again
    ("My girlfriend Ana is a huge board game nerd.", "We got engaged last weekend!", False),    # who she is stays
    ("我男朋友小周是个球迷", "我们下个月领证", False),
    ("I'm single and honestly loving it.", "We got engaged last weekend!", True),             # the old status
    ("My boyfriend Leo cooks every night.", "We broke up, I'm single again.", True),          # an ending
])
async def test_a_new_relationship_status_retires_the_older_one_but_not_who_the_partner_is(
        env, before: str, after: str, retired: bool):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    old = next(r for r in (await store.list(ALICE)).items if r.text.startswith(before[:12]))
    assert old.retired is retired


@pytest.mark.parametrize(("new", "old", "about"), [
    ("Change of plans: we're doing the Amalfi coast trip in June instead.", "We're going to the Amalfi coast in May.", True),
    ("Plans changed, I signed up for the Porto half marathon.", "I'm training for the Lisbon half marathon.", True),
    ("Change of plans: we're doing the Amalfi coast trip in June instead.", "We're going to Oslo in June.", False),
    ("Change of plans: we're doing the Amalfi coast trip in June instead.", "The Amalfi coast is gorgeous.", False),  # no plan
])
def test_a_changed_plan_ends_the_older_plan_it_shares_a_term_with(new: str, old: str, about: bool):
    assert any(is_about(e, old) for e in ended_of(new)) is about


@pytest.mark.parametrize("turn", [
    "That's a lot of sugar for one cake.",
    "those look way too hard for a beginner",
    "这个太贵了",
    "那也太麻烦了吧",
])
def test_a_reaction_to_the_reply_forms_no_memory(turn: str):
    found = analyse(turn)
    assert found.memories == () and found.statement is None, found


@pytest.mark.parametrize("turn", ["That's my husband's old car, I drive it to work now.", "这是我女儿第一次出国"])
def test_a_demonstrative_that_names_the_user_is_still_a_fact(turn: str):
    assert analyse(turn).memories


@pytest.mark.parametrize(("text", "slot"), [
    ("I went freelance in the spring", "work"),
    ("我辞职出来自己创业了", "work"),
    ("我们在大理安家了", "residence"),
])
def test_freelancing_and_settling_down_are_slots(text: str, slot: str):
    assert slot_of(text) == slot


def test_a_rehomed_pet_ends_what_was_said_about_it():
    (ended,) = ended_of("We rehomed Biscuit with my aunt")
    assert is_about(ended, "Biscuit is a very needy tabby")


@pytest.mark.parametrize(("turn", "attribute"), [
    ("I've got bad knees, stairs are a nightmare", "health"),
    ("我有痛风，海鲜不敢吃", "condition"),
    ("I'm allergic to penicillin", "condition"),
    ("I moved to Leeds last year", None),     # a slot, not an attribute
    ("I love hiking in the fells", None),
])
def test_a_lasting_health_fact_is_marked_for_the_profile_pick(turn: str, attribute: str | None):
    (found,) = analyse(turn).memories
    assert found.attribute == attribute


def test_the_chinese_car_makes_of_the_vehicle_slot_are_the_lexicon_table():
    from gateway.memorization.lexicon import CAR_MAKES_ZH

    makes = CAR_MAKES_ZH.removeprefix("(?:").removesuffix(")").split("|")
    assert "比亚迪" in makes and "小鹏" in makes
    for make in makes:
        assert slot_of(f"{make}开着挺顺手") == "vehicle", make
        assert slot_of(f"{make}股价又跌了") is None, make  # a share, not a car


@pytest.mark.parametrize("text", [
    "我们小区门口新开了一家店",  # a shop that opened near the user's home: nobody's business of the user's
    "周末回老家看我妈",  # a visit home, not a move
    "春节回老家了",  # going home says no move unless it says what the user settles there to do
    "我们回老家了",
    "回老家了两天",
    "过年回老家住了半个月",  # a stay, with 了
    "丈母娘过来帮忙坐月子，住一个多月就回去",
    "暑假回我妈家住两周",  # a stay of two weeks
    "先在朋友家住几天",
    "我家住六楼没电梯",  # the floor, not the place of the home
])
def test_a_chinese_visit_stay_floor_or_new_shop_fills_no_home_or_work_slot(text: str):
    assert slot_of(text) is None


@pytest.mark.parametrize(("text", "slot"), [
    ("我在成都开了家火锅店", "work"),
    ("回老家发展了", "residence"),
    ("搬回老家了", "residence"),  # a move home
    ("回老家定居了", "residence"),
    ("我们回老家工作了", "residence"),
    ("回老家住，不走了", "residence"),
    ("我现在租的房子在宝安", "residence"),
    ("在这住了三年", "residence"),
    ("住了两个月了", "residence"),
])
def test_a_chinese_business_home_or_move_still_fills_its_slot(text: str, slot: str):
    assert slot_of(text) == slot
