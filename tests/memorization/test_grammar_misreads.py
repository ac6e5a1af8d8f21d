"""Grammar the verbatim rules misread, each beside the shape they must still read as before
(gateway.memorization.kinds, asks, clauses, slots; supersedes on real Redis): "had" + object +
participle is a statement, not an inverted question; a bare name set off by commas inside a
statement is an apposition, not a greeting; 嘛 after the speaker's own statement marks the
obvious, not a question; a person a 我…的 phrase modifies is the subject of their own transfer;
接 + a grade is a class the user takes over teaching; a presentative 有个 clause and a 的 + 那个
noun phrase are no statement of the user's; a slot word premodifying a noun fills no slot; the
same home said again retires nothing. Examples are written for these tests."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.memorization.disclosure import about_someone, analyse, keeps_other_fact, slot_of, slots_of
from tests.memorization.conftest import memorize_config
from tests.memorization.test_slot_rules import ALICE, _memorize
from tests.memorization.test_workers import fresh_store


@pytest.mark.parametrize(("turn", "memory"), [
    ("my hip's been dodgy for years, had the right one replaced in 2021", "had the right one replaced in 2021"),
    ("had my gallbladder removed last spring", "had my gallbladder removed last spring"),
])
def test_had_with_object_and_participle_is_a_statement(turn: str, memory: str):
    found = analyse(turn)
    assert memory in found.text, found


@pytest.mark.parametrize("turn", ["had the vet checked her teeth?", "had you heard of this band", "had my dad called you?"])
def test_an_inverted_had_question_still_asks(turn: str):
    found = analyse(turn)
    assert not found.memories and found.dropped == "question", found


@pytest.mark.parametrize(("turn", "name"), [
    ("hired an assistant, Zoe, so I can finally take weekends off", "Zoe"),  # a short name reads like "ok", "hi"
    ("got a rescue cat, Bo, and she sleeps on my keyboard", "Bo"),
])
def test_a_name_in_apposition_stays_in_the_statement(turn: str, name: str):
    found = analyse(turn)
    assert name in found.text and found.text.startswith(turn.split(",")[0]), found


@pytest.mark.parametrize("turn", ["thanks, Zoe, that helps", "hi, Sam, how do I boil an egg?", "hello, Ana"])
def test_a_name_at_a_greeting_or_thanks_forms_nothing(turn: str):
    assert not analyse(turn).memories


@pytest.mark.parametrize(("turn", "key"), [
    ("我自己也在学游泳嘛，目标是能游一千米", "一千米"),
    ("我本来就是夜猫子嘛，凌晨两点才睡", "夜猫子"),
])
def test_the_speakers_statement_closed_by_ma_is_no_question(turn: str, key: str):
    assert key in analyse(turn).text


@pytest.mark.parametrize("turn", ["我能喝咖啡嘛", "你吃饭了嘛", "我可以带狗进去嘛", "他在家嘛"])
def test_a_question_closed_by_ma_still_asks(turn: str):
    found = analyse(turn)
    assert not found.memories and found.dropped in ("question", "request"), found


@pytest.mark.parametrize(("text", "someone", "slots"), [
    ("我以前带的徒弟调到西安分院当主任了", True, ()),
    ("我大学的室友搬去深圳了", True, ()),
    ("我的同事上个月调到广州了", True, ()),
    ("我以前住的地方拆了，现在搬到了浦东", False, ("residence",)),  # 的 phrase heading a place: the user's
    ("我上个月调到广州了", False, ("work", "residence")),
])
def test_a_person_a_wo_de_phrase_modifies_is_the_subject(text: str, someone: bool, slots: tuple[str, ...]):
    assert about_someone(text) is someone
    assert slots_of(text) == slots


@pytest.mark.parametrize(("text", "slot"), [
    ("下学期学校让我接五年级了，还要当班主任", None),
    ("去学校接三年级的儿子", "school:son"),  # picking a child up: the child's stage
])
def test_taking_over_a_class_is_no_childs_school_stage(text: str, slot: str | None):
    assert slot_of(text) == slot


@pytest.mark.parametrize(("kept", "after"), [
    ("我们住在雁塔区，离地铁站很近", "我以前带的徒弟调到西安分院当主任了"),
    ("终于考上教师编制了，考了三年", "下学期学校让我接五年级了，还要当班主任"),
])
async def test_someone_elses_transfer_or_a_new_class_retires_nothing(env: Any, kept: str, after: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, kept, after)
    records = (await store.list(ALICE)).items
    assert any(r.text.startswith(kept[:6]) and not r.retired for r in records), [(r.text, r.retired) for r in records]


async def test_the_users_own_transfer_still_retires_the_old_home(env: Any):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "我们住在雁塔区，离地铁站很近", "公司把我调到成都分院了")
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith("我们住在雁塔区"))
    assert old.retired, [(r.text, r.retired) for r in records]


@pytest.mark.parametrize("turn", ["楼下有个小孩天天半夜哭，怎么跟他家长说比较好", "单位里有位大姐总迟到，要不要跟领导说"])
def test_a_presentative_clause_is_about_the_one_it_brings_in(turn: str):
    assert not analyse(turn).memories


@pytest.mark.parametrize(("turn", "memory"), [
    ("家里有个老人要照顾，周末出不去", ""),  # the household: no presentative of a stranger, and no fact either way here
    ("我有个女儿，今年五岁", "我有个女儿，今年五岁"),
])
def test_the_users_own_have_still_reads_as_before(turn: str, memory: str):
    assert analyse(turn).text == memory


@pytest.mark.parametrize(("turn", "memory"), [
    ("现在年轻人用的那个剪辑软件，我这个岁数还学得会吗？", ""),  # 的 + 那个 + noun: a noun phrase, the topic of the ask
    ("快递用的中通，一般两天到", "快递用的中通，一般两天到"),  # a pseudo-cleft: what the user uses
])
def test_a_relative_clause_with_a_demonstrative_head_is_no_cleft(turn: str, memory: str):
    assert analyse(turn).text == memory


@pytest.mark.parametrize(("text", "slots"), [
    ("just adopted a retired racing greyhound, she hates the stairs in my student flat", ()),
    ("made a vegan lasagne for the in-laws", ()),
    ("I'm a retired nurse", ("work",)),  # after a copula the noun phrase is the user's own
    ("phd student at Leiden", ("study",)),
    ("I'm vegan now", ("diet",)),
])
def test_a_slot_word_premodifying_a_noun_fills_no_slot(text: str, slots: tuple[str, ...]):
    assert slots_of(text) == slots


@pytest.mark.parametrize(("new", "older", "keeps"), [
    ("since I'm based in York most venues are an hour out", "based in York but my clients are all over the Dales", True),
    ("我还是住滨江，离公司近", "我住滨江，养了只猫", True),  # the same home said again: nothing changed
    ("I live in Leeds now", "I live in York with my two cats", False),  # a new home still retires the old
    ("上周搬家了，现在住余杭", "我住滨江，养了只猫", False),
])
def test_the_same_home_said_again_retires_nothing(new: str, older: str, keeps: bool):
    assert keeps_other_fact(new, slots_of(new), older) is keeps
