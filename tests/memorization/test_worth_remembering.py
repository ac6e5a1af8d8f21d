"""What verbatim mode stores (issue 11, item 4): measured on the labelled turns of
``tests/fixtures/worth_remembering.jsonl`` (``python -m bench verbatim`` prints the same
figures), a user's "yes" kept with the question it confirms, near-identical memories
merged with both sources kept, and a preference stated to one friend personalizing the
answers of another, through the real gateway."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx

from bench.verbatim import load_rows, measure
from gateway.memorization.jobs import Job, Turn
from gateway.memorization.neardup import is_near_duplicate, normalised
from gateway.memorization.salience import PROPOSITION_CHARS, proposition
from gateway.memorization.verbatim import verbatim_plan
from gateway.memory.records import MemoryType, Scope, Tenant
from tests.memorization.conftest import REGISTRY, memorize_config
from tests.support.gateway import ALICE_KEY

AT = datetime(2026, 5, 1, 12, tzinfo=UTC)


def test_worth_remembering_precision_recall_and_profile_accuracy_on_labelled_turns():
    # thresholds a little under the measured figures (README "What verbatim mode stores"):
    # all 210 rows P 0.949 R 1.000 type 0.931; held-out 61 rows P 0.841 R 1.000 type 0.757
    rows = load_rows()
    assert len(rows) == 210 and sum(r["worth"] for r in rows) == 130
    assert {r["lang"] for r in rows} == {"en", "zh"} and sum(r.get("split") == "held-out" for r in rows) == 61
    figures = measure(rows)
    everything, held_out = figures["all"], figures["held-out"]
    assert everything.recall >= 0.98, everything.errors
    assert everything.precision >= 0.93, everything.errors
    assert everything.type_accuracy >= 0.90, everything.errors
    assert held_out.recall >= 0.95 and held_out.precision >= 0.80 and held_out.type_accuracy >= 0.70
    for lang in ("en", "zh"):
        assert figures[lang].recall >= 0.95 and figures[lang].precision >= 0.90


def _job(*turns: tuple[str, str], context: str = "") -> Job:
    made = tuple(
        Turn(role=role, text=text, at=AT, hash=f"h{i}", index=i, context=context if i == 0 else turns[i - 1][1],
             metadata={"msg": i})
        for i, (role, text) in enumerate(turns))
    return Job(job_id="j" * 32, user_id="alice", friend_id="tutor", enqueued_at=AT, turns=made)


def _stored(plan: Any) -> list[tuple[str, Scope, MemoryType]]:
    return [(op.memory.text, op.memory.scope, op.memory.type) for op in plan.ops if op.memory]


def test_a_bare_yes_keeps_the_question_it_confirms():
    # chat path: the question was the previous reply (memorized before), only its end is the context
    job = _job(("user", "yes"), context="Got it. So your flight to Tokyo is on May 3rd?")
    plan = verbatim_plan(job, ["yes"], ["user"], skip_small_talk=True, profile=True)
    assert _stored(plan) == [("So your flight to Tokyo is on May 3rd? — yes", Scope.EVENT, MemoryType.EPISODIC)]
    (op,) = plan.ops
    assert op.memory.metadata["confirmed"] == {"question": "So your flight to Tokyo is on May 3rd?", "answer": "yes",
                                               "position": 0}
    assert op.memory.metadata["source_messages"] == [{"msg": 0}] and plan.skipped == 0
    # a confirmed fact about the user, in the second person, is a profile memory
    job = _job(("user", "是的"), context="你是说你对芒果过敏？")
    plan = verbatim_plan(job, ["是的"], ["user"], skip_small_talk=True, profile=True)
    assert _stored(plan) == [("你是说你对芒果过敏？ — 是的", Scope.PROFILE, MemoryType.SEMANTIC)]


def test_only_the_end_of_a_long_message_is_read_for_the_question():
    assert proposition("x" * 100_000 + ". So your flight is on May 3rd?") == "So your flight is on May 3rd?"
    assert len(proposition("x" * 100_000 + "?") or "") <= PROPOSITION_CHARS


def test_a_yes_to_an_offer_or_a_feedback_question_is_small_talk():
    for question in ("Would you like me to explain it in more detail?", "Did that help?", "需要我再详细解释一下吗？",
                     "Here is the recipe.", ""):
        job = _job(("user", "yes"), context=question)
        plan = verbatim_plan(job, ["yes"], ["user"], skip_small_talk=True, profile=True)
        assert plan.ops == () and plan.skipped == 1, question


def test_a_confirmed_question_stored_from_the_same_chunk_becomes_question_and_answer():
    # conversation ingest of both speakers: the question's own memory gains the answer and both sources
    texts = ["Just to check: you're allergic to shellfish, not peanuts?", "yep, that's right", "ok"]
    job = _job(("assistant", texts[0]), ("user", texts[1]), ("user", texts[2]))
    plan = verbatim_plan(job, texts, ["user", "assistant"], skip_small_talk=True, profile=True)
    assert _stored(plan) == [(f"{texts[0]} — {texts[1]}", Scope.PROFILE, MemoryType.SEMANTIC)]
    assert plan.ops[0].memory.metadata["source_messages"] == [{"msg": 0}, {"msg": 1}]
    assert plan.ops[0].memory.metadata["position"] == 0 and plan.skipped == 1
    # a user's yes after the user's own message confirms nothing
    job = _job(("user", "Is my flight on May 3rd?"), ("user", "yes"))
    plan = verbatim_plan(job, ["Is my flight on May 3rd?", "yes"], ["user"], skip_small_talk=True, profile=True)
    assert [t for t, _, _ in _stored(plan)] == ["Is my flight on May 3rd?"] and plan.skipped == 1


def test_near_duplicate_rules():
    assert normalised("I'm allergic to peanuts") == normalised("i am allergic to peanuts.")
    assert is_near_duplicate("我对花粉过敏", "我对花粉过敏。", 0.0)
    assert is_near_duplicate("I really love hiking in the mountains.", "I love hiking in the mountains!", 0.973)
    # same words, other facts: numbers, negation, other characters (cosine 1.0 for CJK with MiniLM)
    assert not is_near_duplicate("My flight is on May 3rd", "My flight is on May 4th", 0.977)
    assert not is_near_duplicate("I like cats", "I don't like cats", 0.95)
    assert not is_near_duplicate("我喜欢科幻电影", "我喜欢恐怖电影", 1.0)
    assert not is_near_duplicate("I really love hiking in the mountains.", "I love hiking in the mountains!", 0.85)


def _client(gw: Any, key: str) -> httpx.Client:
    return httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}"}, timeout=60)


COACH_KEY = "sk-test-alice-coach-0123456789"
CLIENTS = [{"key": ALICE_KEY, "user_id": "alice", "friend_id": "tutor", "key_id": "alice"},
           {"key": COACH_KEY, "user_id": "alice", "friend_id": "coach", "key_id": "alice-coach"}]


def test_near_identical_memories_merge_keeping_both_sources(start_gateway, upstream):
    config = memorize_config("verbatim", verbatim_merge_duplicates="all")
    gw = start_gateway(registry=REGISTRY, clients=CLIENTS,
                       plugins=[{"name": "memorize", "config": config.model_dump(mode="json")}])
    said = "2026-05-01T10:00:00+00:00"
    with _client(gw, ALICE_KEY) as tutor, _client(gw, COACH_KEY) as coach:
        first = tutor.post("/v1/memories", json={"session_id": "s1", "messages": [
            {"role": "user", "content": "I'm allergic to peanuts", "occurred_at": said, "metadata": {"msg": "a"}}]})
        assert first.status_code == 201, first.text
        (kept,) = first.json()["ids"]
        # the same fact told to another friend (profile memories are shared): merged, not stored again
        second = coach.post("/v1/memories", json={"session_id": "s2", "messages": [
            {"role": "user", "content": "I am allergic to peanuts.", "occurred_at": said, "metadata": {"msg": "b"}}]})
        assert second.status_code == 201, second.text
        assert second.json()["ids"] == [kept] and "1 merged" in second.json()["decision"]
        record = coach.get(f"/v1/memories/{kept}").json()
        assert record["text"] == "I'm allergic to peanuts" and record["scope"] == "profile"
        assert record["metadata"]["source_messages"] == [{"msg": "a"}, {"msg": "b"}]
        (entry,) = record["metadata"]["merged"]
        assert entry["text"] == "I am allergic to peanuts." and entry["conversation_id"] == "s2"
        # replayed: nothing added twice
        again = coach.post("/v1/memories", json={"session_id": "s2", "messages": [
            {"role": "user", "content": "I am allergic to peanuts.", "occurred_at": said, "metadata": {"msg": "b"}}]})
        assert again.json()["ids"] == [kept]
        assert len(coach.get(f"/v1/memories/{kept}").json()["metadata"]["merged"]) == 1
        # the same words on another day are another episode
        for day in ("2026-05-01", "2026-05-01", "2026-05-02"):
            tutor.post("/v1/memories", json={"messages": [
                {"role": "user", "content": f"I went running, day {day[-2:]}", "occurred_at": f"{day}T07:00:00+00:00"},
                {"role": "user", "content": "I went running", "occurred_at": f"{day}T08:00:00+00:00"}]})
        events = [r for r in tutor.get("/v1/memories", params={"scope": "event"}).json()["items"]
                  if r["text"] == "I went running"]
        assert sorted(r["occurred_at"][:10] for r in events) == ["2026-05-01", "2026-05-02"]


async def test_a_preference_confirmed_to_one_friend_personalizes_another_friends_answers(start_gateway, env, upstream):
    # seed 002: profile memories are shared by all of a user's friends, events stay with one
    from plugins.personalization import Personalization

    config = memorize_config("verbatim")
    gw = start_gateway(registry={**REGISTRY, "personalization": Personalization}, clients=CLIENTS, plugins=[
        {"name": "personalization", "config": {"cache_ttl_s": 0}},
        {"name": "memorize", "config": config.model_dump(mode="json")},
    ])

    async def chat(key: str, messages: list[dict[str, Any]]) -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            response = await client.post(gw.base_url + "/chat/completions", headers={"authorization": f"Bearer {key}"},
                                         json={"model": "gpt-4o-mini", "messages": messages})
        assert response.status_code == 200, response.text

    await chat(ALICE_KEY, [{"role": "user", "content": "My cat threw up this morning."}])
    await chat(ALICE_KEY, [
        {"role": "user", "content": "Explain recursion."},
        {"role": "assistant", "content": "Sure. Before I start: you prefer short answers without theory?"},
        {"role": "user", "content": "yes"}])
    deadline = asyncio.get_running_loop().time() + 60
    while sum(s.name == "plugin memorize.on_complete" for s in gw.spans.get_finished_spans()) < 2:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.01)
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    coach_view = (await store.list(Tenant("alice", "coach"), limit=20)).items
    assert [(r.text, r.scope.value, r.type.value) for r in coach_view] == [
        ("Before I start: you prefer short answers without theory? — yes", "profile", "preference")]
    upstream.requests.clear()
    await chat(COACH_KEY, [{"role": "user", "content": "How do I stay motivated to run?"}])
    system = upstream.chat_requests()[-1].json["messages"][0]
    assert system["role"] == "system" and "Be concise" in system["content"]
    assert "cat" not in system["content"]


def test_by_default_events_are_merged_within_their_job_only(start_gateway, upstream):
    config = memorize_config("verbatim")
    assert config.verbatim_merge_duplicates == "profile"
    gw = start_gateway(registry=REGISTRY, plugins=[{"name": "memorize", "config": config.model_dump(mode="json")}])
    at = "2026-05-01T08:00:00+00:00"
    with _client(gw, ALICE_KEY) as tutor:
        one = tutor.post("/v1/memories", json={"messages": [
            {"role": "user", "content": "I went running", "occurred_at": at, "metadata": {"n": 1}},
            {"role": "user", "content": "i went running!", "occurred_at": at, "metadata": {"n": 2}}]}).json()
        assert len(one["ids"]) == 1 and "1 merged" in one["decision"]
        assert tutor.get(f"/v1/memories/{one['ids'][0]}").json()["metadata"]["source_messages"] == [{"n": 1}, {"n": 2}]
        two = tutor.post("/v1/memories", json={"session_id": "other", "messages": [
            {"role": "user", "content": "I went running", "occurred_at": at, "metadata": {"n": 3}}]}).json()
        assert len(two["ids"]) == 1 and two["ids"] != one["ids"]


async def test_duplicates_within_a_plan_are_found_in_linear_time(monkeypatch):
    """A plan's adds are compared with its earlier adds through one normalised key each:
    ``normalised`` runs once per add, not once per pair (a 300-message ingest made 22,000
    calls, seconds on the event loop); the third copy still merges onto the first."""
    import gateway.memorization.neardup as neardup
    from gateway.memorization.plan import Op, Plan
    from gateway.memory.records import NewMemory

    calls = []
    real = neardup.normalised
    monkeypatch.setattr(neardup, "normalised", lambda text: calls.append(text) or real(text))
    texts = [f"Event number {i} happened at the lake" for i in range(200)] + ["Event number 0 happened at the lake!"]
    ops = tuple(Op(kind="add", id=f"m{i:03d}", memory=NewMemory(scope=Scope.EVENT, type=MemoryType.EPISODIC, text=t,
                                                                  occurred_at=AT)) for i, t in enumerate(texts))
    plan = await neardup.merge_near_duplicates(object(), Tenant("alice", "tutor"), Plan(ops=ops), events=False)
    assert len(calls) == len(texts)
    assert [(op.kind, op.target) for op in plan.ops if op.kind == "merge"] == [("merge", "m000")]
