"""End to end: the memory_search loop is invisible to the client, streamed or not, with
the official SDK (sync and async); the gateway runs the search for the caller's tenant."""

import asyncio
import json

import openai

from gateway.memory.records import Tenant
from tests.recall.conftest import REGISTRY, memory
from tests.recall.conftest import TOOL_CHAIN as CHAIN
from tests.recall.streams import CLIENT_CALL_ID, ROUND1_ID, SEARCH_CALL_ID, answer_round, tool_round
from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import COMPLETION, JSONReply, SSEReply

LOW_Q = "Recommend me a movie for tonight"
SCIFI = "The user likes science fiction movies and mystery novels."
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}


def tool_call_completion(*calls):
    message = {"role": "assistant", "content": None, "refusal": None, "annotations": [], "tool_calls": list(calls)}
    return {**COMPLETION, "id": "chatcmpl-round1", "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls"}]}


def search_call(query="science fiction"):
    return {"id": SEARCH_CALL_ID, "type": "function", "function": {"name": "memory_search", "arguments": json.dumps({"query": query})}}


def seeded(start_gateway, seed):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    seed(gw, Tenant("alice", "tutor"), memory(SCIFI))
    seed(gw, Tenant("bob", "tutor"), memory("The user likes science fiction movies, especially Dune."))
    return gw


def assert_second_round_carries_the_search(upstream):
    first, second = upstream.chat_requests()
    assert [t["function"]["name"] for t in first.json["tools"]] == ["memory_search"]
    assistant, tool = second.json["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"] == SEARCH_CALL_ID
    found = json.loads(tool["content"])["memories"]
    assert [m["content"] for m in found] == [SCIFI]  # alice's memory only, never bob's


def test_non_stream_the_client_sees_only_the_final_answer(start_gateway, upstream, seed):
    gw = seeded(start_gateway, seed)
    upstream.enqueue(JSONReply(tool_call_completion(search_call())), JSONReply())
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": LOW_Q}])
    assert reply.id == "chatcmpl-round1"
    assert reply.choices[0].message.content == COMPLETION["choices"][0]["message"]["content"]
    assert reply.choices[0].message.tool_calls is None and reply.choices[0].finish_reason == "stop"
    assert_second_round_carries_the_search(upstream)
    assert reply.model_extra["memgate"]["hybrid_injection"]["searches"][0]["query"] == "science fiction"


def test_stream_the_client_sees_one_id_and_only_the_final_text(start_gateway, upstream, seed):
    gw = seeded(start_gateway, seed)
    upstream.enqueue(SSEReply(tool_round()), SSEReply(answer_round()))

    async def run():
        client = openai.AsyncOpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
        stream = await client.chat.completions.create(model="gpt-4o", stream=True, messages=[{"role": "user", "content": LOW_Q}])
        return [chunk async for chunk in stream]

    chunks = asyncio.run(run())
    assert {c.id for c in chunks} == {ROUND1_ID}
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(not c.choices or c.choices[0].delta.tool_calls is None for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("The capital of")
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert_second_round_carries_the_search(upstream)
    assert upstream.chat_requests()[1].json["stream"] is True


def test_client_tool_calls_in_the_same_turn_reach_the_client_intact(start_gateway, upstream, seed):
    gw = seeded(start_gateway, seed)
    upstream.enqueue(SSEReply(tool_round(client_call=True)))
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    chunks = list(client.chat.completions.create(model="gpt-4o", stream=True, tools=[WEATHER_TOOL],
                                                 messages=[{"role": "user", "content": LOW_Q}]))
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert calls[0].id == CLIENT_CALL_ID and calls[0].function.name == "get_weather" and calls[0].index == 0
    assert "".join(tc.function.arguments or "" for tc in calls) == '{"city":"Paris"}'
    assert len(upstream.chat_requests()) == 1
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_non_stream_mixed_turn_returns_the_clients_calls_only(start_gateway, upstream, seed):
    gw = seeded(start_gateway, seed)
    weather = {"id": CLIENT_CALL_ID, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    upstream.enqueue(JSONReply(tool_call_completion(search_call(), weather)))
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", tools=[WEATHER_TOOL], messages=[{"role": "user", "content": LOW_Q}])
    assert [c.id for c in reply.choices[0].message.tool_calls] == [CLIENT_CALL_ID]


def test_the_loop_stops_after_max_rounds_and_asks_for_an_answer(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=[*CHAIN[:2], {"name": "hybrid_injection", "config": {"max_rounds": 1}}])
    seed(gw, Tenant("alice", "tutor"), memory(SCIFI))
    upstream.enqueue(JSONReply(tool_call_completion(search_call())), JSONReply(tool_call_completion(search_call("again"))))
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": LOW_Q}])
    assert reply.choices[0].message.tool_calls is None and reply.choices[0].finish_reason == "stop"
    assert upstream.chat_requests()[1].json["tool_choice"] == "none"


def test_no_tool_is_offered_when_the_client_says_tool_choice_none_or_the_model_has_no_tools(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN[1:3], upstream={"supports_tools": ["gpt-4o*"]})
    seed(gw, Tenant("alice", "tutor"), memory(SCIFI))
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    client.chat.completions.create(model="gpt-4o", tool_choice="none", tools=[WEATHER_TOOL], messages=[{"role": "user", "content": LOW_Q}])
    assert [t["function"]["name"] for t in upstream.chat_requests()[-1].json["tools"]] == ["get_weather"]
    client.chat.completions.create(model="llama3", messages=[{"role": "user", "content": LOW_Q}])
    assert "tools" not in upstream.chat_requests()[-1].json
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": LOW_Q}])
    assert "tools" in upstream.chat_requests()[-1].json
