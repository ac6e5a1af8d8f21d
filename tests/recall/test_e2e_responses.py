"""``/v1/responses`` end to end with recall: memories go into ``instructions`` after the
client's own (its prefix byte-identical, its input untouched), and the memory_search loop
runs in the Responses form, invisible to the client, stream or not (official SDK)."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
import redis
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from gateway.memory.records import Tenant
from gateway.proxy.sse import SSEDecoder
from tests.recall.conftest import CHAIN, REGISTRY, TOOL_CHAIN, memory
from tests.support.gateway import ALICE_KEY, BOB_KEY
from tests.support.responses_double import own_items, own_response, stream_events
from tests.support.upstream_double import JSONReply, SSEReply, fixture, fixture_json

HIGH_Q = "How old is my daughter Emma? She is seven, right?"
EMMA = "The user's daughter Emma is seven years old."
LOW_Q = "Recommend me a movie for tonight"
SCIFI = "The user likes science fiction movies and mystery novels."
INSTRUCTIONS = "You are a helpful tutor. Answer in one sentence."
IMAGE = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}
WEATHER = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
           "strict": False}
EVENTS = TypeAdapter(ResponseStreamEvent)
AUTH = {"authorization": f"Bearer {ALICE_KEY}", "content-type": "application/json"}


def sdk(gw) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)


def decoded(raw: bytes) -> list:
    decoder = SSEDecoder()
    return [*decoder.feed(raw), *decoder.flush()]


@pytest.mark.parametrize("placement", ["separate", "append"])
def test_memories_are_appended_to_the_clients_instructions(start_gateway, upstream, seed, placement):
    gw = start_gateway(registry=REGISTRY, plugins=[CHAIN[1], {"name": "hybrid_injection", "config": {"placement": placement}}])
    seed(gw, Tenant("alice", "tutor"), memory(EMMA))
    history = [
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"role": "user", "content": [{"type": "input_text", "text": HIGH_Q}, IMAGE]},
    ]
    own_items(gw, ["rs_1"], "alice", "tutor")  # a reasoning item of an earlier response of alice's
    sdk(gw).responses.create(model="gpt-4.1", instructions=INSTRUCTIONS, input=history, tools=[WEATHER])
    sent = upstream.responses_requests()[-1]
    instructions = sent.json["instructions"]
    assert instructions.startswith(INSTRUCTIONS + "\n\nHere is what you remember about the user")
    assert f": {EMMA}" in instructions and "\n1. 20" in instructions  # "1. <date>: <text>"
    # the client's own instructions, byte for byte, start the upstream's
    assert b'"instructions":' + json.dumps(INSTRUCTIONS).encode()[:-1] + b"\\n\\n" in sent.body
    assert sent.json["input"] == history  # items, image and reasoning included, untouched
    assert sent.json["tools"] == [WEATHER]  # only high-relevance hits: no memory_search


def test_without_client_instructions_the_memories_are_the_instructions(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN[1:3])
    seed(gw, Tenant("alice", "tutor"), memory(EMMA))
    body = b'{"model":"gpt-4.1","input":"' + HIGH_Q.encode() + b'","seed_field":7}'
    httpx.post(gw.base_url + "/responses", content=body, headers=AUTH, timeout=30)
    sent = upstream.responses_requests()[-1].json
    assert sent["instructions"].startswith("Here is what you remember about the user") and EMMA in sent["instructions"]
    assert sent["input"] == HIGH_Q and sent["seed_field"] == 7


def test_nothing_recalled_means_the_exact_bytes_go(start_gateway, upstream):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)  # no memories stored: nothing to inject
    body = b'{"model":"gpt-4.1","instructions":"Be brief.","input":[{"role":"user","content":"hello there"}]}'
    reply = httpx.post(gw.base_url + "/responses", content=body, headers=AUTH, timeout=30)
    assert reply.status_code == 200 and reply.content == fixture_json("responses_text")
    assert upstream.responses_requests()[-1].body == body and "x-memgate-degraded" not in reply.headers
    streamed = body[:-1] + b',"stream":true}'
    upstream.enqueue(SSEReply(fixture("responses_text"), pieces=77))
    with httpx.stream("POST", gw.base_url + "/responses", content=streamed, headers=AUTH, timeout=30) as reply:
        assert b"".join(reply.iter_raw()) == fixture("responses_text")
    assert upstream.responses_requests()[-1].body == streamed


# --- the memory_search loop -----------------------------------------------------------------


def seeded(start_gateway, seed, **hybrid):
    plugins = [*TOOL_CHAIN[:2], {"name": "hybrid_injection", "config": hybrid}, *TOOL_CHAIN[3:]]
    gw = start_gateway(registry=REGISTRY, plugins=plugins)
    seed(gw, Tenant("alice", "tutor"), memory(SCIFI))
    seed(gw, Tenant("bob", "tutor"), memory("The user likes science fiction movies, especially Dune."))
    own_response(gw, "resp_prev", "alice", "tutor")  # the requests continue alice's earlier response
    return gw


def assert_second_round_carries_the_search(upstream, stream: bool):
    first, second = upstream.responses_requests()
    offered = first.json["tools"]
    assert [t["name"] for t in offered] == ["memory_search"] and offered[0]["strict"] is False
    assert "function" not in offered[0]  # the Responses form of a function tool
    call = json.loads(fixture_json("responses_memory_search_call"))["output"][0]
    *sent_input, fc, output = second.json["input"]
    assert sent_input == first.json["input"] == [{"role": "user", "content": LOW_Q}]
    assert fc == call and output["type"] == "function_call_output" and output["call_id"] == call["call_id"]
    assert [m["content"] for m in json.loads(output["output"])["memories"]] == [SCIFI]  # alice's only
    assert second.json["instructions"] == first.json["instructions"] == "Be brief."
    assert second.json["previous_response_id"] == "resp_prev" and second.json["stream"] is stream


def test_non_stream_the_loop_is_invisible(start_gateway, upstream, seed):
    gw = seeded(start_gateway, seed)
    upstream.enqueue(JSONReply(fixture_json("responses_memory_search_call")),
                     JSONReply(fixture_json("responses_memory_search_answer")))
    body = {"model": "gpt-4.1", "instructions": "Be brief.", "previous_response_id": "resp_prev",
            "input": [{"role": "user", "content": LOW_Q}]}
    reply = httpx.post(gw.base_url + "/responses", json=body, headers=AUTH, timeout=30)
    assert reply.content == fixture_json("responses_memory_search_answer")  # the final round, byte for byte
    assert_second_round_carries_the_search(upstream, stream=False)
    upstream.requests.clear()
    upstream.enqueue(JSONReply(fixture_json("responses_memory_search_call")),
                     JSONReply(fixture_json("responses_memory_search_answer")))
    answer = sdk(gw).responses.create(**body)
    assert answer.output_text == "Since you like science fiction, try Arrival."
    assert [item.type for item in answer.output] == ["message"]


def test_stream_the_loop_is_invisible(start_gateway, upstream, seed):
    gw = seeded(start_gateway, seed)
    upstream.enqueue(SSEReply(fixture("responses_memory_search_call"), pieces=113),
                     SSEReply(fixture("responses_memory_search_answer"), pieces=89))
    body = {"model": "gpt-4.1", "instructions": "Be brief.", "previous_response_id": "resp_prev", "stream": True,
            "input": [{"role": "user", "content": LOW_Q}]}
    with httpx.stream("POST", gw.base_url + "/responses", json=body, headers=AUTH, timeout=30) as reply:
        raw = b"".join(reply.iter_raw())
    assert raw == fixture("responses_memory_search_answer")  # no event of the hidden round
    assert_second_round_carries_the_search(upstream, stream=True)
    upstream.requests.clear()
    upstream.enqueue(SSEReply(fixture("responses_memory_search_call")), SSEReply(fixture("responses_memory_search_answer")))
    with sdk(gw).responses.stream(**{k: v for k, v in body.items() if k != "stream"}) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert "response.function_call_arguments.delta" not in kinds
    assert final.output_text == "Since you like science fiction, try Arrival."
    # the id the client saw is alice's (recorded before its first event); the hidden round's is nobody's
    hidden = json.loads(fixture_json("responses_memory_search_call"))["id"]
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        owner = client.get(f"{gw.config.memory.key_prefix}:responses:owner:{final.id}")
        assert json.loads(owner) == {"user": "alice", "friend": "tutor", "from": "resp_prev"}
        assert client.get(f"{gw.config.memory.key_prefix}:responses:owner:{hidden}") is None
        # so are the items: the visible output item is alice's, the hidden call nobody's
        items = f"{gw.config.memory.key_prefix}:responses:item:"
        assert json.loads(client.get(items + final.output[0].id)) == {"user": "alice", "friend": "tutor"}
        hidden_call = json.loads(fixture_json("responses_memory_search_call"))["output"][0]["id"]
        assert client.get(items + hidden_call) is None


@pytest.mark.parametrize("stream", [False, True])
def test_a_mixed_round_reaches_the_client_with_its_own_call_only(start_gateway, upstream, seed, stream):
    gw = seeded(start_gateway, seed)
    upstream.enqueue(SSEReply(fixture("responses_mixed_calls")) if stream else JSONReply(fixture_json("responses_mixed_calls")))
    body = {"model": "gpt-4.1", "input": LOW_Q, "tools": [WEATHER], "stream": stream}
    reply = httpx.post(gw.base_url + "/responses", json=body, headers=AUTH, timeout=30)
    assert len(upstream.responses_requests()) == 1  # the client must answer its call: no round
    if not stream:
        output = reply.json()["output"]
        assert [(i["type"], i["name"]) for i in output] == [("function_call", "get_weather")]
        return
    events = [EVENTS.validate_python(json.loads(e.data)) for e in decoded(reply.content)]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert all(getattr(e, "output_index", 0) == 0 for e in events)  # get_weather moved to index 0
    assert all(getattr(getattr(e, "item", None), "name", "get_weather") == "get_weather" for e in events)
    assert [i.name for i in events[-1].response.output] == ["get_weather"]
    assert [e.type for e in events].count("response.function_call_arguments.delta") == 2  # its own deltas


@pytest.mark.parametrize("stream", [False, True])
def test_a_failed_round_fails_open_without_the_gateways_call(start_gateway, upstream, seed, stream):
    gw = seeded(start_gateway, seed)
    first = SSEReply(fixture("responses_memory_search_call")) if stream else JSONReply(fixture_json("responses_memory_search_call"))
    upstream.enqueue(first, JSONReply({"error": {"message": "boom", "type": "server_error", "param": None, "code": None}}, status=500))
    reply = httpx.post(gw.base_url + "/responses", json={"model": "gpt-4.1", "input": LOW_Q, "stream": stream},
                       headers=AUTH, timeout=30)
    assert reply.status_code == 200 and len(upstream.responses_requests()) == 2
    if stream:
        events = [json.loads(e.data) for e in decoded(reply.content)]
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
        assert events[-1]["type"] == "response.completed" and events[-1]["response"]["output"] == []
        assert not any(e.get("item") for e in events)  # no output item of the gateway's
    else:
        assert reply.json()["output"] == [] and "hybrid_injection:error:UpstreamError" in reply.headers["x-memgate-degraded"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_container_made_in_a_hidden_round_is_the_callers(start_gateway, upstream, seed, stream):
    """A hidden round (the gateway's memory_search call) that also ran the code
    interpreter in a new container: the container is recorded as the caller's, as one of
    the visible reply's is, so alice may name it later and bob may not; the hidden
    round's items stay nobody's."""
    gw = seeded(start_gateway, seed)
    hidden = json.loads(fixture_json("responses_memory_search_call"))
    container = "cntr_" + "7" * 48
    ci = {"id": "ci_hidden", "type": "code_interpreter_call", "status": "completed", "code": "print(6 * 7)",
          "container_id": container, "outputs": [{"type": "logs", "logs": "42"}]}
    hidden["output"].insert(0, ci)
    first = SSEReply(stream_events(hidden, fixture("responses_memory_search_call"))) if stream \
        else JSONReply(json.dumps(hidden).encode())
    answer = SSEReply(fixture("responses_memory_search_answer")) if stream \
        else JSONReply(fixture_json("responses_memory_search_answer"))
    upstream.enqueue(first, answer)
    tools = [{"type": "code_interpreter", "container": {"type": "auto"}}]
    reply = sdk(gw).responses.create(model="gpt-4.1", input=LOW_Q, tools=tools, stream=stream)
    if stream:
        events = list(reply)
        assert events[-1].type == "response.completed"
        assert not any(getattr(getattr(e, "item", None), "container_id", None) for e in events)  # nothing seen
    else:
        assert [item.type for item in reply.output] == ["message"]
    _first, second_round = upstream.responses_requests()
    assert [i.get("container_id") for i in second_round.json["input"] if i.get("type") == "code_interpreter_call"] \
        == [container]  # the next round carried the hidden call
    prefix = gw.config.memory.key_prefix
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        assert json.loads(client.get(f"{prefix}:responses:container:{container}")) == {"user": "alice", "friend": "tutor"}
        assert client.get(f"{prefix}:responses:item:ci_hidden") is None
        assert client.get(f"{prefix}:responses:item:{hidden['output'][1]['id']}") is None
    reuse = [{"type": "code_interpreter", "container": container}]
    bob = openai.OpenAI(base_url=gw.base_url, api_key=BOB_KEY, max_retries=0)
    with pytest.raises(openai.NotFoundError) as caught:
        bob.responses.create(model="gpt-4.1", input="run it", tools=reuse)
    assert caught.value.body["param"] == "tools[0].container"
    assert len(upstream.responses_requests()) == 2  # bob's never went upstream
    upstream.enqueue(JSONReply(fixture_json("responses_text")))
    sdk(gw).responses.create(model="gpt-4.1", input="run it again", tools=reuse)  # alice's own: forwarded
    assert upstream.responses_requests()[-1].json["tools"][0]["container"] == container
