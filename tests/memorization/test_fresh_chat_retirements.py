"""Later turns of a fresh chat that change nothing must retire nothing (gateway.memorization
split, neardup, kinds, slots): what is left of a mixed memory when it starts the memory, an
ask (it presupposes, it asserts no change), someone else's reported news, a stay of a few
nights, a leisure group joined, the ward a shift is worked in, a resultative 住; each beside
a true change of the same shape that still retires the older memory. Examples are written
for these tests, after the false retirements seen on the training splits; on real Redis."""

from __future__ import annotations

import pytest

from gateway.memorization.clauses import clauses
from gateway.memorization.disclosure import analyse
from gateway.memorization.kinds import is_ask
from gateway.memorization.neardup import told
from gateway.memorization.slots import keeps_other_fact, slot_of
from gateway.memorization.split import SPLIT_FROM, remainder
from tests.memorization.conftest import memorize_config
from tests.memorization.test_changes import ALICE, _memorize
from tests.memorization.test_false_retirements import _assert_retires, _assert_retires_nothing
from tests.memorization.test_workers import fresh_store

# class 5: the kept clauses start the memory, so their zero subject reads as it did there

def test_a_remainder_that_starts_the_memory_needs_no_subject_of_its_own():
    assert remainder("查出血脂高，胆结石犯过一回，我每天中午都喝两罐可乐", lambda c: "可乐" in c) == "查出血脂高，胆结石犯过一回"
    assert remainder("我住张江，车是自己的", lambda c: "张江" in c) is None  # after the changed clause: whose car?


@pytest.mark.parametrize(("before", "after", "rest"), [
    ("查出血脂高，胆结石犯过一回，我每天中午都喝两罐可乐", "这回彻底把可乐戒了，半个月没碰", "查出血脂高，胆结石犯过一回"),
])
async def test_an_ending_keeps_the_clauses_before_it(env, before: str, after: str, rest: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text == before)
    kept = next(r for r in records if r.metadata.get(SPLIT_FROM) == [old.id])
    assert old.retired and kept.text == rest and not kept.retired


@pytest.mark.parametrize(("new", "older", "keeps"), [
    ("from may im on days, 8am to 8pm", "i work nights on the cardiac ward, 3 x 12hr", True),  # the ward stays
    ("换成白班了", "我在骨科上夜班", True),
    ("from may im on days, 8am to 8pm", "i work nights", False),  # only the shift: it goes
])
def test_a_new_shift_keeps_the_unit_it_is_worked_in(new: str, older: str, keeps: bool):
    assert keeps_other_fact(new, ("shift",), older) is keeps


async def test_a_new_shift_retires_no_memory_of_the_ward(env):
    await _assert_retires_nothing(env, "i work nights on the cardiac ward, 3 x 12hr", "from may im on days, 8am to 8pm")


async def test_a_new_shift_still_retires_the_old_shift(env):
    await _assert_retires(env, "I work nights.", "from may im on days, 8am to 8pm")


@pytest.mark.parametrize(("text", "slot"), [
    ("店交给老公看住", None),  # 住 the resultative complement: minds the shop
    ("记住了，周三前交", None),
    ("我们住黄埔，离地铁近", "residence"),
])
def test_a_resultative_zhu_tells_no_home(text: str, slot: str | None):
    assert slot_of(text) == slot


# class 1: an ask supersedes nothing

@pytest.mark.parametrize(("text", "asks"), [
    ("Can you give me a plant-based version of a shepherd's pie", True),
    ("搬到前滩了", False),
    ("附近有什么好吃的", True),
    ("keep it short", False),  # a standing instruction
    ("语气 friendly 一点", True),  # a revision of the reply, in Chinese as in English
    ("以后回答都简短点", False),
])
def test_what_asks(text: str, asks: bool):
    assert is_ask(clauses(text)[0]) is asks


def test_only_what_a_memory_asserts_may_supersede():
    assert told("Can you give me a plant-based version of a shepherd's pie") == ""
    assert told("I've gone vegetarian, can you give me a shepherd's pie recipe?") == "I've gone vegetarian"


def test_a_diet_word_on_a_dish_fills_no_diet_slot_but_the_ask_is_kept_as_a_hint():
    """The dish's diet word is no statement of the user's diet (no slot, so it retires
    nothing), but an ask for such a dish is kept as a fact said inside a question: most who
    ask for "a quick vegan lunch i can make" are vegan (the bench's `asks` split)."""
    assert slot_of("Can you give me a plant-based version of a shepherd's pie") is None
    assert [m.text for m in analyse("whats a quick vegan lunch i can make between standups").memories] \
        == ["whats a quick vegan lunch i can make between standups"]


async def test_an_ask_retires_nothing(env):
    await _assert_retires_nothing(env, "I've gone vegan this year.", "Can you give me a plant-based version of a shepherd's pie")


async def test_a_diet_said_beside_an_ask_still_retires(env):
    await _assert_retires(env, "I'm vegetarian.", "I've gone vegan, can you give me a shepherd's pie recipe?")


# class 2: someone else's news

@pytest.mark.parametrize(("text", "slot"), [
    ("对面店嘅老细话下个月搬去东莞，佢问我要唔要个铺", None),
    ("房东说下个月搬去昆山", None),
    ("my neighbour says she's moving to Leeds", None),
    ("下个月搬去东莞", "residence"),
])
def test_a_move_someone_else_reports_is_theirs(text: str, slot: str | None):
    assert slot_of(text) == slot


async def test_someone_elses_move_retires_nothing(env):
    await _assert_retires_nothing(env, "我哋住黄埔，大仔读初一", "对面店嘅老细话下个月搬去东莞，佢问我要唔要个铺")


async def test_the_users_move_still_retires_the_old_home(env):
    await _assert_retires(env, "我哋住黄埔", "我哋下个月搬去东莞")


# class 3: a stay of a few nights

@pytest.mark.parametrize(("text", "slot"), [
    ("就住两宿，老同学们想我了", None),
    ("回去住一宿就走", None),
    ("搬到成都来了，跟女儿一块住", "residence"),
])
def test_a_stay_of_nights_fills_no_residence(text: str, slot: str | None):
    assert slot_of(text) == slot


async def test_a_stay_retires_no_home(env):
    await _assert_retires_nothing(env, "搬到成都来了，跟女儿一块住", "就住两宿，老同学们想我了")


# class 4: a leisure group joined

@pytest.mark.parametrize(("text", "slot"), [
    ("joined an indoor league on tuesday nights", None),
    ("joined a running club", None),
    ("I joined Siemens last month", "work"),
])
def test_joining_a_league_is_no_job(text: str, slot: str | None):
    assert slot_of(text) == slot


async def test_a_league_joined_retires_no_job(env):
    await _assert_retires_nothing(env, "i run a small plumbing business", "quit the sunday games, joined an indoor league on tuesday nights")


async def test_a_job_quit_still_retires_the_job(env):
    await _assert_retires(env, "I work at Acme as an accountant.", "I quit my job, I joined Siemens last month.")
