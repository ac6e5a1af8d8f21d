"""Memorization of ``/v1/responses`` turns through the real gateway: the user's input and
the output items' text, stream or not; with ``previous_response_id`` only the new turn
(the client sends only the new input), never the earlier ones again."""

from __future__ import annotations

import json
from typing import Any

import openai

from gateway.memorization.runtime import queue_for
from gateway.memory.records import Tenant
from tests.memorization.conftest import memorize_config, user_stream
from tests.memorization.test_memorize_end_to_end import settle, start
from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import JSONReply, SSEReply, fixture, fixture_json

ALICE = Tenant("alice", "tutor")


async def jobs(env: Any, config: Any) -> list[list[tuple[str, str]]]:
    """Each queued job's turns as ``(role, text)``."""
    entries = await env.redis.xrange(user_stream(queue_for(config, env.redis)))
    return [[(t["role"], t["text"]) for t in json.loads(fields[b"t"])] for _, fields in entries]


async def test_a_turn_and_its_follow_up_by_previous_response_id_are_memorized_once_each(start_gateway, env, upstream):
    config = memorize_config("verbatim", worker={"in_serve": 0})  # jobs stay queued to be read
    gw = start(start_gateway, config)
    client = openai.AsyncOpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    upstream.enqueue(JSONReply(fixture_json("responses_text")))
    first = await client.responses.create(model="gpt-4.1", instructions="Be kind.", input="I adopted a puppy named Rex.")
    await settle(gw, 1)
    upstream.enqueue(SSEReply(fixture("responses_memory_search_answer"), pieces=150))
    stream = await client.responses.create(
        model="gpt-4.1", previous_response_id=first.id, stream=True,
        input=[{"role": "user", "content": [{"type": "input_text", "text": "Rex loves the beach."}]}],
    )
    assert [e.type async for e in stream][-1] == "response.completed"
    await settle(gw, 2)
    assert await jobs(env, config) == [
        [("user", "I adopted a puppy named Rex."), ("assistant", "The capital of France is Paris.")],
        [("user", "Rex loves the beach."), ("assistant", "Since you like science fiction, try Arrival.")],
    ]
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    texts = sorted(r.text for r in (await store.list(ALICE, limit=50)).items)
    assert texts == ["I adopted a puppy named Rex.", "Rex loves the beach."]


async def test_a_resent_history_is_not_memorized_twice(start_gateway, env, upstream):
    """Clients without ``previous_response_id`` (the Agents SDK's default) resend every
    item, earlier outputs included: the turns already queued are recognised."""
    config = memorize_config("verbatim", worker={"in_serve": 0})
    gw = start(start_gateway, config)
    client = openai.AsyncOpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    history: list[Any] = [{"role": "user", "content": "I adopted a puppy named Rex."}]
    first = await client.responses.create(model="gpt-4.1", input=history)
    history += [item.model_dump(exclude_none=True) for item in first.output]
    history.append({"role": "user", "content": "Rex loves the beach."})
    upstream.enqueue(JSONReply(fixture_json("responses_memory_search_answer")))
    await client.responses.create(model="gpt-4.1", input=history)
    await settle(gw, 2)
    assert await jobs(env, config) == [
        [("user", "I adopted a puppy named Rex."), ("assistant", "The capital of France is Paris.")],
        [("user", "Rex loves the beach."), ("assistant", "Since you like science fiction, try Arrival.")],
    ]
