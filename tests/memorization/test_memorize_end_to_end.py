"""Memorization through the real gateway: chat requests in, memories out (issue 5)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from gateway.memorization.capture import CONTEXT_AFTER_CHARS
from gateway.memorization.runtime import queue_for
from gateway.memory.records import Tenant
from tests.memorization.conftest import REGISTRY, memorize_config, user_stream
from tests.memorization.memory_model import fact
from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import SSEReply

ALICE = Tenant("alice", "tutor")


def start(start_gateway: Any, config: Any) -> Any:
    return start_gateway(registry=REGISTRY, plugins=[{"name": "memorize", "config": config.model_dump(mode="json")}])


async def chat(gw: Any, messages: list[dict[str, Any]], **extra: Any) -> httpx.Response:
    headers = {"authorization": f"Bearer {ALICE_KEY}", **extra.pop("headers", {})}
    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.post(gw.base_url + "/chat/completions", headers=headers,
                                     json={"model": "gpt-4o-mini", "messages": messages, **extra})
    assert response.status_code == 200, response.text
    return response


async def settle(gw: Any, n: int) -> None:
    """Completion observers run after the reply: wait until the ``n``-th memorize
    ``on_complete`` of this gateway has finished (its span ended). Not "nothing pending":
    that is also true before the server has submitted the work. The deadline is generous
    (a loaded machine); it is no timing assertion."""
    deadline = asyncio.get_running_loop().time() + 60

    def done() -> int:
        return sum(s.name == "plugin memorize.on_complete" for s in gw.spans.get_finished_spans())

    while done() < n:
        assert asyncio.get_running_loop().time() < deadline, f"{done()} of {n} completions ran"
        await asyncio.sleep(0.01)


async def test_a_fact_told_in_one_conversation_is_found_from_a_new_one(start_gateway, env):
    config = memorize_config("extract")
    gw = start(start_gateway, config)
    env.model_double.on("memorize_extraction", {"facts": [fact("The user is allergic to peanuts", keywords=["allergy", "peanuts"])]})
    await chat(gw, [{"role": "user", "content": "Heads up: I'm allergic to peanuts."}])
    await settle(gw, 1)
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    hits = await store.search(Tenant("alice", "another-friend"), "what food should I avoid? nuts", top_k=3)
    assert hits and hits[0].record.text == "The user is allergic to peanuts"
    assert hits[0].record.metadata["speaker"] == "user"
    assert hits[0].record.source.value == "conversation"


async def test_a_contradiction_supersedes_the_old_memory_which_stays_auditable(start_gateway, env):
    config = memorize_config("extract")
    gw = start(start_gateway, config)
    store = await env.store(gw.config.memory.key_prefix)
    env.model_double.on("memorize_extraction", {"facts": [fact("The user lives in Berlin")]})
    await chat(gw, [{"role": "user", "content": "I live in Berlin."}])
    await settle(gw, 1)
    await env.drain(config, store)
    env.model_double.on("memorize_extraction", {"facts": [fact("The user lives in Paris")]})
    env.model_double.on("memorize_reconcile", {"decisions": [{"fact": 0, "event": "UPDATE", "target": "m1", "text": "The user lives in Paris (moved from Berlin)"}]})
    await chat(gw, [{"role": "user", "content": "I moved to Paris last month."}])
    await settle(gw, 2)
    await env.drain(config, store)
    live = await store.search(ALICE, "where does the user live", top_k=5)
    assert [h.record.text for h in live] == ["The user lives in Paris (moved from Berlin)"]
    old = await store.get(ALICE, live[0].record.supersedes)
    assert old.text == "The user lives in Berlin" and old.retired and old.superseded_by == live[0].record.id
    reconcile_prompt = env.model_double.calls["memorize_reconcile"][0]["messages"][-1]["content"]
    assert "[m1] The user lives in Berlin" in reconcile_prompt


async def test_resending_the_whole_history_does_not_re_extract_old_turns(start_gateway, env):
    config = memorize_config("extract")
    gw = start(start_gateway, config)
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a tutor."}]
    for text in ["I study Rust.", "I prefer concise answers.", "My exam is on Friday."]:
        history.append({"role": "user", "content": text})
        reply = (await chat(gw, history)).json()["choices"][0]["message"]["content"]
        history.append({"role": "assistant", "content": reply})
    await settle(gw, 3)
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    decisions = env.model_double.calls["memorize_decision"]
    assert len(decisions) == 3
    conversations = [call["messages"][-1]["content"] for call in decisions]
    # each turn reaches the model in exactly one decision (jobs of a read batch may be
    # decided in any order, so no decision is assumed to be the n-th)
    for text in ["I study Rust.", "I prefer concise answers.", "My exam is on Friday."]:
        assert sum(text in c for c in conversations) == 1, (text, conversations)


async def test_verbatim_mode_stores_each_user_turn_once(start_gateway, env):
    config = memorize_config("verbatim")
    gw = start(start_gateway, config)
    history: list[dict[str, Any]] = []
    for text, stream in [("I adopted a puppy named Rex.", False), ("Rex loves the beach.", True), ("We walked to the beach at 7am today.", False)]:
        history.append({"role": "user", "content": text})
        if stream:
            await chat(gw, history, stream=True)
            reply = "streamed"
        else:
            reply = (await chat(gw, history)).json()["choices"][0]["message"]["content"]
        history.append({"role": "assistant", "content": reply})
    await chat(gw, history[:-1])  # a regenerate: same history again
    await settle(gw, 4)
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    items = (await store.list(ALICE, limit=50)).items
    assert sorted(r.text for r in items) == sorted(["I adopted a puppy named Rex.", "Rex loves the beach.", "We walked to the beach at 7am today."])
    rex = next(r for r in items if "puppy" in r.text)
    assert rex.scope.value == "profile" and rex.type.value == "semantic"  # a pet is a lasting fact
    walk = next(r for r in items if "7am" in r.text)
    assert walk.scope.value == "event" and walk.type.value == "episodic"  # an episode: a one-off day (today), no state cue
    assert {"adopted", "puppy", "rex"} <= set(rex.keywords)
    assert not env.model_double.calls


async def test_the_job_is_enqueued_after_the_reply_and_a_cancelled_stream_is_partial(start_gateway, env, upstream):
    config = memorize_config("verbatim", worker={"in_serve": 0})  # no worker may take the job first
    gw = start(start_gateway, config)
    queue = queue_for(config, env.redis)
    upstream.enqueue(SSEReply(pieces=40, delay=0.05))
    async with httpx.AsyncClient(timeout=60) as client:
        body = {"model": "gpt-4o-mini", "stream": True, "messages": [{"role": "user", "content": "Tell me a story"}]}
        async with client.stream("POST", gw.base_url + "/chat/completions", json=body,
                                 headers={"authorization": f"Bearer {ALICE_KEY}"}) as response:
            chunks = response.aiter_bytes()
            await chunks.__anext__()
            assert await env.redis.xlen(user_stream(queue)) == 0  # nothing while the reply streams
    await settle(gw, 1)
    assert await env.redis.xlen(user_stream(queue)) == 1  # enqueued by the completion hook
    entries = await env.redis.xrange(user_stream(queue))
    header = json.loads(entries[0][1][b"h"])
    assert header["partial"] is True and header["user_id"] == "alice" and header["friend_id"] == "tutor"


async def test_memorize_off_header_skips_the_call(start_gateway, env):
    config = memorize_config("verbatim", worker={"in_serve": 0})  # a job would stay queued
    gw = start(start_gateway, config)
    stream = user_stream(queue_for(config, env.redis))
    await chat(gw, [{"role": "user", "content": "secret diary"}], headers={"x-memgate-memorize": "off"})
    await settle(gw, 1)
    assert await env.redis.xlen(stream) == 0
    await chat(gw, [{"role": "user", "content": "public diary"}])  # the same call without the header
    await settle(gw, 2)
    assert await env.redis.xlen(stream) == 1


async def test_redaction_runs_before_the_memory_model_and_the_store(start_gateway, env):
    config = memorize_config("extract")
    gw = start(start_gateway, config)
    env.model_double.on("memorize_extraction", lambda body: {"facts": [fact("The user's work email is " + (
        "[email]" if "[email]" in body["messages"][-1]["content"] else "LEAKED"))]})
    secret = "Mail me at jane.doe@example.com, my key is sk-live0123456789abcdefXYZ"
    await chat(gw, [{"role": "user", "content": secret}])
    await settle(gw, 1)
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    seen = env.model_double.prompt_texts()
    assert "jane.doe@example.com" not in seen and "sk-live0123456789abcdefXYZ" not in seen
    assert "[email]" in seen and "[api_key]" in seen
    items = (await store.list(ALICE)).items
    assert [r.text for r in items] == ["The user's work email is [email]"]


async def test_a_stated_preference_memorized_verbatim_personalizes_later_answers(start_gateway, env, upstream):
    # issue 11: verbatim mode files "请回答简洁一点"-like statements as profile preferences,
    # so personalization (seed 000 P3) works without a memory model
    from plugins.personalization import Personalization

    config = memorize_config("verbatim")
    gw = start_gateway(registry={**REGISTRY, "personalization": Personalization}, plugins=[
        {"name": "personalization", "config": {"cache_ttl_s": 0}},
        {"name": "memorize", "config": config.model_dump(mode="json")},
    ])
    await chat(gw, [{"role": "user", "content": "好的谢谢"}])
    await chat(gw, [{"role": "user", "content": "我不喜欢太长的回答，请回答简洁一点"}])
    await settle(gw, 2)
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    items = (await store.list(Tenant("alice"), limit=10)).items
    assert [(r.text, r.scope.value, r.type.value) for r in items] == [("我不喜欢太长的回答，请回答简洁一点", "profile", "preference")]
    upstream.requests.clear()
    await chat(gw, [{"role": "user", "content": "怎么用 Python 读取一个文件？"}])
    system = upstream.chat_requests()[-1].json["messages"][0]
    assert system["role"] == "system" and "简洁" in system["content"]


async def test_a_turn_is_memorized_with_the_message_it_answers_redacted(start_gateway, env):
    config = memorize_config("verbatim")
    gw = start(start_gateway, config)
    reply = (await chat(gw, [{"role": "assistant", "content": "Write to me at bob@example.com. Which city did you move to?"},
                             {"role": "user", "content": "Lisbon, last spring."}])).json()
    await settle(gw, 1)
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    (record,) = (await store.list(ALICE, limit=10)).items
    assert record.text == "Which city did you move to? — Lisbon, last spring."
    assert record.context is not None and record.context.endswith("Which city did you move to?")
    assert "bob@example.com" not in record.context
    assert record.context_after == reply["choices"][0]["message"]["content"][:CONTEXT_AFTER_CHARS].strip()  # the reply it got
    hits = await store.search(ALICE, "which city did the user move to", top_k=1)
    assert [h.record.id for h in hits] == [record.id]
