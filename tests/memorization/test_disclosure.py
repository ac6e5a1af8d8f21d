"""Verbatim memory formation from self-disclosure (gateway.memorization.disclosure) and
its reconcile rules on real Redis: a repeat refreshes, a change of the same slot
supersedes (gateway.memorization.neardup)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.memorization.disclosure import analyse, clauses, slot_of
from gateway.memorization.jobs import job_from_fields
from gateway.memorization.processor import JobProcessor
from gateway.memorization.runtime import queue_for
from gateway.memory.records import Tenant
from tests.memorization.conftest import memorize_config, user_stream
from tests.memorization.test_workers import enqueue, fresh_store

ALICE = Tenant("alice", "tutor")


@pytest.mark.parametrize(("turn", "memory"), [
    ("I've been vegetarian since last year, what can I cook with lentils?", "I've been vegetarian since last year"),
    ("Since I work night shifts as a nurse, how can I sleep better?", "Since I work night shifts as a nurse"),
    ("My son Leo is 7. Can you suggest a birthday cake?", "My son Leo is 7."),
    ("Any ideas for a gift for my wife, she loves gardening", "Any ideas for a gift for my wife, she loves gardening"),
    ("我女儿对花生过敏，零食带什么好？", "我女儿对花生过敏"),
    ("我最近搬到了杭州，附近有什么好玩的？", "我最近搬到了杭州"),
    ("在深圳做产品经理，帮我写个周报模板", "在深圳做产品经理"),
    ("我不喜欢太长的回答，请回答简洁一点", "我不喜欢太长的回答，请回答简洁一点"),
])
def test_a_fact_said_inside_a_request_is_kept_in_the_users_words_without_the_request(turn: str, memory: str):
    found = analyse(turn)
    assert found.text == memory
    assert "question" in found.kinds or "request" in found.kinds or memory == turn


@pytest.mark.parametrize(("turn", "why"), [
    ("What snacks should I pack for a school trip?", "question"),
    ("Can you write me a haiku about autumn?", "request"),
    ("I'd like a recipe for dinner", "request"),
    ("I'm looking for a cheap flight to Rome", "request"),
    ("Thanks, that's all for now!", "small_talk"),
    ("I'll try that.", "meta"),
    ("帮我写一封请假邮件", "request"),
    ("今晚吃什么好呢", "question"),
    ("好的谢谢", "small_talk"),
])
def test_a_pure_request_question_or_small_talk_forms_no_memory(turn: str, why: str):
    found = analyse(turn)
    assert found.memories == () and found.statement is None
    assert found.dropped == why


@pytest.mark.parametrize(("turn", "profile", "slot"), [
    ("I live in Lisbon with my partner.", True, "residence"),
    ("I moved to Berlin last month.", True, "residence"),  # a change of a lasting thing keeps its date
    ("I'm not vegetarian anymore.", True, "diet"),
    ("I left Acme and now work at Globex.", True, "work"),
    ("My wife works at Globex.", True, None),  # about the wife: no slot of the user's
    ("I work night shifts.", True, "shift"),  # the schedule, not the employer
    ("I went to a jazz concert yesterday.", False, None),
    ("我在腾讯上班", True, "work"),
    ("我昨天去看了一场电影", False, None),
    ("我们成都人离不开辣", True, "residence"),  # we <place> people: the locals
    ("我们年轻人都熬夜", True, None),  # an age group, no place: no residence slot (a habit: profile)
    ("We moved into a flat in Leeds.", True, "residence"),
    ("We split up in March.", True, "relationship"),
    ("我换工作了", True, "work"),
    ("我把车卖了", True, "vehicle"),
])
def test_lasting_facts_are_profile_and_name_their_slot(turn: str, profile: bool, slot: str | None):
    (found,) = analyse(turn).memories
    assert found.durable is profile
    assert found.slot == slot


def test_a_slot_statement_is_its_own_statement_so_a_change_retires_only_it():
    (memory,) = analyse("我在深圳一家电商公司做后端，天天加班，腰椎间盘突出又犯了，有什么缓解的办法？").memories
    assert memory.text == "我在深圳一家电商公司做后端，天天加班，腰椎间盘突出又犯了" and memory.slot == "work" and memory.durable
    job, back = memory.statement_texts
    assert (job, slot_of(job)) == ("我在深圳一家电商公司做后端，天天加班", "work")  # 天天加班: no subject, the job's
    assert back == "腰椎间盘突出又犯了" and slot_of(back) is None


def test_clauses_mark_only_the_last_clause_of_a_question_as_asked():
    parts = clauses("I'm vegan, my husband isn't, what can we cook? Thanks.")
    assert [(p.text, p.asked) for p in parts] == [
        ("I'm vegan", False), ("my husband isn't", False), ("what can we cook", True), ("Thanks", False)]
    assert slot_of("My husband is vegan") is None


def test_analysis_is_linear_in_the_text():
    long = "I live in Lisbon, " * 2000 + "what now?"
    assert analyse(long).text  # bounded: the text is cut at MAX_CHARS before any pattern runs


async def _memorize(env: Any, config: Any, store: Any, *texts: str) -> None:
    for text in texts:
        await enqueue(env, config, text)
        await env.drain(config, store)


async def test_a_repeated_fact_refreshes_the_memory_instead_of_storing_a_copy(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "I'm allergic to peanuts, what's a good snack?",
                    "I'm allergic to peanuts! Any dessert ideas?")
    live = [r for r in (await store.list(ALICE)).items if not r.retired]
    assert [r.text for r in live] == ["I'm allergic to peanuts"]
    assert live[0].scope.value == "profile" and live[0].metadata["mentions"] == 2
    assert live[0].updated_at > live[0].created_at


@pytest.mark.parametrize(("before", "after"), [
    ("I live in Lisbon.", "I moved to Berlin last month, any cafés you'd recommend?"),
    ("I've been vegetarian since 2019.", "I'm not vegetarian anymore, I eat fish and chicken now."),
    ("我在阿里巴巴工作", "我上个月跳槽到字节了"),
])
async def test_a_changed_fact_supersedes_the_old_one_which_is_never_recalled_again(env, before: str, after: str):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, before, after)
    records = (await store.list(ALICE)).items
    old = next(r for r in records if r.text.startswith(before.rstrip(".")))
    new = next(r for r in records if not r.retired)
    assert old.retired and old.superseded_by == new.id and new.supersedes == old.id
    hits = await store.search(ALICE, before, top_k=5)
    assert old.id not in [h.record.id for h in hits]


async def test_a_fact_about_someone_else_does_not_supersede_the_users_own(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await _memorize(env, config, store, "I work at Acme as a designer.", "My wife works at Globex.")
    assert not any(r.retired for r in (await store.list(ALICE)).items)


async def test_a_request_is_not_stored_and_the_reason_is_counted(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    await enqueue(env, config, "Can you recommend a podcast about history?", "What about one on science?")
    (_entry, fields), = await env.redis.xrange(user_stream(queue))
    outcome, plan, written = await JobProcessor(config, store, queue).run(job_from_fields(fields))
    assert outcome == "done" and written == [] and plan is not None
    assert plan.dropped == {"request": 1, "question": 1} and plan.skipped == 2
    assert (await store.list(ALICE)).items == []


@pytest.mark.parametrize(("turn", "profile"), [
    # a first-person disclosure holds (profile) whatever its topic...
    ("heads up I'm colorblind (red-green).", True),
    ("My son just got braces.", True),
    ("Our daughter got into a university in Beijing!", True),
    ("I've been exhausted for weeks.", True),  # a state: "for weeks"
    ("我是做平面设计的", True),
    ("我女儿牛奶蛋白过敏", True),
    ("我昨天开始戒糖了", True),  # dated, but a change: 开始
    ("我上个月开始学钢琴", True),
    # ...unless it tells an episode: a one-off time, a one-off activity, a passing feeling
    ("We had a lovely dinner at my mum's last weekend.", False),
    ("I watched Dune with my brother.", False),
    ("I saw my doctor on Monday.", False),
    ("amazing, we saw whales", False),  # a sighting: saw + a bare plural, said on its own
    ("we saw humpbacks off the coast!", False),
    ("I keep chickens", True),  # a bare plural after a verb that holds
    ("I love whales", True),
    ("I saw this coming, my knee is shot", True),  # "this" ends in s but is no plural
    ("我今天早上跑了五公里", False),
    ("我前几天跟同事吃了火锅", False),
])
def test_a_disclosure_is_profile_unless_it_tells_an_episode(turn: str, profile: bool):
    (found,) = analyse(turn).memories
    assert found.durable is profile


def test_a_habit_on_a_weekday_is_not_a_one_off_time():
    (found,) = analyse("I'm taking a pottery class on Thursday nights.").memories
    assert found.durable


@pytest.mark.parametrize(("turn", "memory", "slot"), [
    ("Went fully vegan last month… any easy swap for my Sunday omelette?", "Went fully vegan last month", "diet"),
    ("血压有点高，饮食上要注意什么", "血压有点高", None),
    ("车卖了 现在坐地铁上班 通勤路上听什么好", "车卖了，现在坐地铁上班", "vehicle"),
    ("闺女考起了！北京的大学", "闺女考起了！北京的大学", "school:daughter"),  # 考起 (dialect 考上): an entrance exam passed
    ("在杭州做会计，月底特别忙，有什么提神的办法吗", "在杭州做会计，月底特别忙", "work"),  # a job title
])
def test_an_update_before_a_question_and_a_chinese_statement_without_subject_are_kept(
        turn: str, memory: str, slot: str | None):
    (found,) = analyse(turn).memories
    assert (found.text, found.slot, found.durable) == (memory, slot, True)


@pytest.mark.parametrize("turn", [
    "奶茶可以喝么 珍珠那种",  # a question without its question mark, then a fragment
    "燕麦片可以吃吗～",
    "在家做饭有什么简单的菜",
    "Any easy swap for my Sunday omelette…",
])
def test_a_question_without_a_question_mark_forms_nothing(turn: str):
    found = analyse(turn)
    assert found.memories == () and found.dropped == "question"


def test_a_statement_told_beside_a_disclosure_is_as_lasting_as_the_disclosure():
    found = analyse("The internship is at Siemens, I'm working on embedded firmware.").memories
    assert [m.durable for m in found] == [True] * len(found) and "Siemens" in found[0].text
    alone = analyse("The internship is at Siemens.")  # no disclosure in the turn: a statement
    assert alone.memories == () and alone.statement is not None and not alone.statement.durable


@pytest.mark.parametrize(("turn", "profile"), [
    # a death among the user's people or pets changes who they are for good, whatever its day
    ("We lost Biscuit on Saturday, the house feels empty.", True),
    ("my grandpa passed away last week.", True),
    ("We had to put our old cat to sleep yesterday.", True),
    ("外婆上周去世了", True),
    # "lost" without one of the user's people or a name is no death
    ("I lost my keys at the gym yesterday.", False),
    ("We lost the match on Saturday.", False),
])
def test_a_death_among_the_users_people_is_lasting_whatever_its_date(turn: str, profile: bool):
    found = analyse(turn).memories
    assert found and found[0].durable is profile


@pytest.mark.parametrize(("turn", "kept"), [
    # a time of day and a decimal point are no clause or sentence ends: the user's words stay whole
    ("I'm a nurse, school drop off is 8:15. how do I fit in a run", "school drop off is 8:15"),
    ("I shoot on a 50 1.8, never use zoom lenses", "a 50 1.8, never use zoom lenses"),
])
def test_a_time_of_day_and_a_decimal_are_kept_whole(turn: str, kept: str):
    assert kept in analyse(turn).text
