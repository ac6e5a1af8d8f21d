"""A supersede must not retire a memory whose fact still holds (gateway.memorization.disclosure
slot rules, gateway.memorization.changes, gateway.memorization.neardup): a clause about someone
else of the user's (a sibling after 我, a bare kin word), an organisation's move, a class the
user teaches, a grade said after the school, retirement said again; each beside a true change of
the same shape that still retires the older memory. Examples are written for these tests; the
supersedes run on real Redis."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.memorization.changes import ended_of
from gateway.memorization.disclosure import about_someone, keeps_other_fact, slot_of, slots_of
from tests.memorization.conftest import memorize_config
from tests.memorization.test_slot_rules import ALICE, _memorize
from tests.memorization.test_workers import fresh_store


async def _assert_retires_nothing(env: Any, kept: str, after: str) -> None:
    """``kept`` then ``after`` memorized: ``kept`` is stored and no memory is retired."""
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, kept, after)
    records = (await store.list(ALICE)).items
    assert any(r.text.startswith(kept) for r in records), [r.text for r in records]
    assert not any(r.retired for r in records), [(r.text, r.retired) for r in records]


async def _assert_retires(env: Any, before: str, after: str) -> None:
    """``before`` then ``after`` memorized: ``before``'s memory is retired, superseded by a live one."""
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith(before))
    assert old.retired and old.superseded_by in {r.id for r in records if not r.retired}, \
        [(r.text, r.retired) for r in records]


@pytest.mark.parametrize(("text", "someone"), [
    ("我弟上个月搬去成都了", True),  # a sibling said with one character after 我
    ("我姐在杭州当老师", True),
    ("女朋友小雨在浙大读博", True),  # kin with no 我 before it
    ("老公下个月调去武汉", True),
    ("我上个月搬去成都了", False),
    ("哥们儿推荐的这家店不错", False),  # 哥 alone is no person of the user's
])
def test_who_a_chinese_clause_is_about(text: str, someone: bool):
    assert about_someone(text) is someone


@pytest.mark.parametrize(("text", "slots"), [
    ("我弟上个月搬去成都了", ()),  # the brother's home, not the user's
    ("女朋友小雨在浙大读博", ("relationship",)),  # says a partner exists; not the user's studies
    ("公司搬到虹桥以后我改骑电动车了", ("vehicle",)),  # the company moved, the user's home did not
    ("Our office moved to Salford so I take the tram to work now", ("vehicle",)),
    ("我上个月搬去成都了", ("residence",)),
    ("我们搬到虹桥以后改骑电动车了", ("residence", "vehicle")),
    ("We moved to Salford and I take the tram to work now", ("residence", "vehicle")),
])
def test_whose_move_and_whose_studies_fill_the_users_slot(text: str, slots: tuple[str, ...]):
    assert slots_of(text) == slots


@pytest.mark.parametrize(("text", "slot"), [
    ("带三年级两个班，天天改作业到半夜", None),  # the class a teacher teaches
    ("教初二数学，今年第五年了", None),
    ("女儿上三年级了", "school:daughter"),
    ("朵朵升初二了", "school"),
])
def test_a_class_the_user_teaches_is_no_childs_school_stage(text: str, slot: str | None):
    assert slot_of(text) == slot


@pytest.mark.parametrize(("new", "older", "keeps"), [
    ("儿子上五年级了", "儿子转学到了育才小学", True),  # a grade keeps the school
    ("My daughter's in fifth grade now", "My daughter goes to Hillcrest Elementary", True),
    ("儿子转学去了东风小学", "儿子在育才小学上三年级", False),  # a new school replaces the old
    ("儿子上五年级了", "儿子上四年级", False),
    ("Took the grandkids to Cornwall, first trip since I retired", "I'm a retired nurse, thirty years on the wards", True),
    ("I came out of retirement, I work at the pharmacy part-time now", "I'm a retired nurse, thirty years on the wards", False),
])
def test_a_new_statement_keeps_the_fact_it_does_not_change(new: str, older: str, keeps: bool):
    slots = slots_of(new) or ((slot_of(new),) if slot_of(new) else ())
    assert slots, new
    assert keeps_other_fact(new, slots, older) is keeps


def test_an_ending_by_someone_named_without_wo_is_theirs():
    (ended,) = [e for e in ended_of("男朋友不读研了，去工作了")]
    assert ended.who  # the boyfriend's: it never retires the user's own statement


@pytest.mark.parametrize(("kept", "after"), [
    ("我住在江宁，离公司二十分钟", "我弟上个月搬去成都了，在一家游戏公司上班"),
    ("我读研一，方向是图像分割", "女朋友小雨在浙大读博，我们周末才见面"),
    ("我住在闵行，离地铁站很近", "公司搬到虹桥以后我改骑电动车了"),
    ("女儿上二年级，数学还行", "带三年级两个班，天天改作业到半夜"),
    ("儿子转学到了育才小学，离家近", "儿子上五年级了"),
])
async def test_a_statement_that_changes_nothing_of_the_users_retires_nothing(env: Any, kept: str, after: str):
    await _assert_retires_nothing(env, kept, after)


@pytest.mark.parametrize(("before", "after"), [
    ("我住在江宁，离公司二十分钟", "我上个月搬去成都了，在一家游戏公司上班"),
    ("我读研一，方向是图像分割", "我读研二了，方向没变"),
    ("我住在闵行，离地铁站很近", "我们搬到虹桥了，改骑电动车上班"),
    ("女儿上二年级，数学还行", "女儿上三年级了"),
    ("儿子在育才小学上三年级", "儿子转学去了东风小学"),
])
async def test_the_same_shape_said_of_the_user_still_retires(env: Any, before: str, after: str):
    await _assert_retires(env, before, after)


def test_a_formality_of_joining_is_no_new_job():
    assert slots_of("入职体检要复查血糖偏高那个") == ()
    assert slots_of("上周在华为入职了") == ("work",)


@pytest.mark.parametrize(("text", "study"), [
    ("my supervisor signed off my ethics form today", False),  # the advisor mentioned, not said
    ("导师让我周五前改完论文", False),
    ("my supervisor is Dr Okafor, very hands-off", True),  # who the advisor is
    ("换导师了，新导师做推荐系统", True),
    ("我读研一，方向是图像分割", True),
    ("租了个考研公寓，离图书馆近", False),  # 考研 naming a kind of flat, not the user's studies
])
def test_an_advisor_mention_states_no_study(text: str, study: bool):
    assert ("study" in slots_of(text)) is study


@pytest.mark.parametrize(("new", "older", "keeps"), [
    # the advisor alone changed: the programme stays
    ("换导师了，新导师做推荐系统", "我读研一，计算机专业，导师做NLP", True),
    ("my supervisor is Dr Okafor now", "second-year phd student in hydrology", True),
    ("换导师了，新导师做推荐系统", "我导师做NLP，挺严的", False),
    # the course changed: the university stays; a leaving takes it too
    ("I switched courses, doing history now", "I'm a first-year law student at Durham", True),
    ("I dropped out of my law course, doing an apprenticeship now", "I'm a first-year law student at Durham", False),
    # a new employer: the occupation stays; a career change or a quit takes it too
    ("I started at Leeds General on Monday", "I'm a pharmacist at a high-street chain", True),
    ("公司把我派到成都了", "我在苏州做软件测试，天天加班", True),
    ("I quit, I'm a full-time dad now", "I'm a pharmacist at a high-street chain", False),
    ("I work as a teacher at a primary school now", "I'm a pharmacist at a high-street chain", False),
    ("上个月在华为入职了，还是做测试", "我在博世做软件测试，主要测车机", False),  # the new workplace named in the same frame
    ("我跳槽了，现在在一家游戏公司做测试", "我在深圳一家电商公司做测试", True),  # no workplace named: the city stays
    ("我入职了字节，还是做测试", "我在深圳一家电商公司做测试", True),  # the city around the old workplace stays
    # a new shift: the job stays
    ("换成夜班了", "我开货车的，白班，一天跑四百公里", True),
    ("换成夜班了", "我现在上白班", False),
])
def test_a_change_of_one_attribute_keeps_the_others(new: str, older: str, keeps: bool):
    slots = slots_of(new)
    assert slots, new
    assert keeps_other_fact(new, slots, older) is keeps


@pytest.mark.parametrize(("kept", "after"), [
    ("phd student at Lund, soil chemistry, 3rd year", "my supervisor is Dr Okafor, very hands-off"),
    ("my supervisor is Dr Okafor, very hands-off", "my supervisor signed off my ethics form today"),
    ("I'm a pharmacist at a high-street chain", "I started at Leeds General on Monday"),
])
async def test_a_change_of_one_attribute_retires_no_memory_holding_another(env: Any, kept: str, after: str):
    await _assert_retires_nothing(env, kept, after)


@pytest.mark.parametrize(("before", "after"), [
    ("my supervisor is Dr Okafor, very hands-off", "switched supervisors, my new supervisor is Dr Lin"),
    ("I'm a pharmacist at a high-street chain", "I quit the pharmacy, I'm a full-time dad now"),
    ("我现在上白班", "换成夜班了，晚上八点到早上八点"),
    ("我在博世做软件测试，主要测车机", "上个月在华为入职了，还是做测试"),
])
async def test_a_change_of_the_attribute_itself_still_retires(env: Any, before: str, after: str):
    await _assert_retires(env, before, after)


def test_only_a_call_off_is_marked_as_cancelling():
    assert [e.cancel for e in ended_of("Cancelled the kayaking on the Wye, the river is flooded.")] == [True]
    assert [e.cancel for e in ended_of("取消了千岛湖露营，下大雨")] == [True]
    assert [e.cancel for e in ended_of("Sold the kayak, my shoulder is done with it.")] == [False]


@pytest.mark.parametrize(("episode", "after", "retired"), [
    # a possession sold leaves what happened with it true
    ("Kayaking on the Wye next Saturday with my brother.", "Sold the kayak, my shoulder is done with it.", False),
    # the episode itself called off is retired
    ("Kayaking on the Wye next Saturday with my brother.", "Cancelled the kayaking on the Wye, the river is flooded.", True),
])
async def test_an_ending_retires_an_episode_only_when_it_calls_it_off(env: Any, episode: str, after: str, retired: bool):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, episode, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith(episode))
    assert old.scope.value == "event"
    assert old.retired is retired, [(r.text, r.retired) for r in records]


@pytest.mark.parametrize(("text", "slots"), [
    ("they've put me on lates", ("shift",)),           # someone at work puts the user on a shift
    ("my manager switched me to nights", ("shift",)),
    ("I got transferred to nights", ("shift",)),       # to a shift: no new job, no new home
    ("领导排我上夜班了", ("shift",)),
    ("公司把我调到夜班了", ("shift",)),
    ("公司把我调到重庆了", ("work", "residence")),     # to a place: still a transfer
    ("I moved to Denver", ("residence",)),
    ("my brother put me up at his flat in Leeds", ()),  # "put me" without a shift: his flat
    ("my wife switched to nights", ()),                # her shift
])
def test_a_shift_the_user_is_put_on_is_the_users_shift_only(text: str, slots: tuple[str, ...]):
    assert slots_of(text) == slots


@pytest.mark.parametrize(("new", "older", "keeps"), [
    ("they've put me on lates", "I'm a nurse at St Mary's, early shifts mostly", True),  # the job stays
    ("they've put me on lates", "I'm on earlies at the moment", False),
    ("领导排我上夜班了", "我现在上白班", False),
])
def test_a_shift_the_user_is_put_on_keeps_the_job_beside_the_old_shift(new: str, older: str, keeps: bool):
    assert keeps_other_fact(new, slots_of(new), older) is keeps


@pytest.mark.parametrize(("before", "after"), [
    ("I'm on earlies at the moment", "they've put me on lates"),
    ("我现在上白班", "领导排我上夜班了"),
])
async def test_a_shift_the_user_is_put_on_retires_the_older_shift(env: Any, before: str, after: str):
    await _assert_retires(env, before, after)


@pytest.mark.parametrize(("kept", "after"), [
    ("I work at Tesco on the tills", "I got transferred to nights"),
    ("我在一家物流公司上班", "公司把我调到夜班了"),
])
async def test_a_transfer_to_a_shift_retires_no_job(env: Any, kept: str, after: str):
    await _assert_retires_nothing(env, kept, after)


@pytest.mark.parametrize(("text", "slots"), [
    ("thinking about taking a staff job and quitting the travel life once we're married", ()),
    ("when we get married we will move to Ohio", ()),
    ("等我们结婚了再买房", ()),
    ("since we got married we live in Ohio", ("residence", "relationship")),  # a past verb: it happened
    ("after we moved to Denver I sold my car", ("residence", "vehicle")),
    ("we got engaged last week", ("relationship",)),
])
def test_a_state_to_come_in_a_temporal_clause_fills_no_slot(text: str, slots: tuple[str, ...]):
    assert slots_of(text) == slots


async def test_a_plan_for_after_the_wedding_keeps_the_engagement(env: Any):
    await _assert_retires_nothing(env, "HE PROPOSED!! we're engaged", "thinking about taking a staff job once we're married")


async def test_the_wedding_told_still_retires_the_engagement(env: Any):
    await _assert_retires(env, "we're engaged!!", "we got married last weekend!!")


@pytest.mark.parametrize(("text", "slot"), [
    ("my son Oscar started reception at St Werburgh's", "school:son"),
    ("my daughter is in year 3 now", "school:daughter"),
    ("the wedding reception was lovely", None),
])
def test_english_school_years_fill_the_school_slot(text: str, slot: str | None):
    assert slot_of(text) == slot


@pytest.mark.parametrize(("new", "older", "again"), [
    ("班主任话仔仔上堂坐唔定，啱啱读小学嘅细路系咪都系咁", "仔仔升咗一年级，功课多到喊", True),  # the level of the grade
    ("女儿上二年级了", "女儿上小学了", True),  # the grade within the level said before
    ("my son is in elementary school, any tips", "my son is in 2nd grade", True),
    ("儿子上初中了", "儿子上五年级", False),  # another level: a change
    ("my son started middle school", "my son is in 5th grade", False),
])
def test_a_school_level_and_a_grade_of_it_are_one_stage(new: str, older: str, again: bool):
    from gateway.memorization.slots import says_again
    assert says_again(new, (slot_of(new),), older) is again


async def test_a_level_said_after_its_grade_keeps_the_grade(env: Any):
    await _assert_retires_nothing(env, "仔仔升咗一年级，功课多到喊", "班主任话仔仔上堂坐唔定，啱啱读小学嘅细路系咪都系咁")
