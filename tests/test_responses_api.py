"""``/v1/responses`` through the real gateway with the official SDK: idle byte-exactness
(stream and not), errors passed through, bad input as 400 naming the field, the
stored-response routes passed through (tenancy: tests/test_responses_tenancy.py); and the constructed fixtures checked against the
SDK's own types."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import httpx
import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from gateway.proxy.sse import SSEDecoder
from tests.support import plugins as tp
from tests.support.gateway import ALICE_KEY
from tests.support.responses_double import own_response
from tests.support.upstream_double import FIXTURES, JSONReply, SSEReply, fixture, fixture_json

AUTH = {"authorization": f"Bearer {ALICE_KEY}", "content-type": "application/json"}
STREAMS = sorted(p.stem for p in FIXTURES.glob("responses_*.sse"))
EVENTS = TypeAdapter(ResponseStreamEvent)


def sdk(gw) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)


def events(raw: bytes) -> list:
    decoder = SSEDecoder()
    return [*decoder.feed(raw), *decoder.flush()]


# --- the constructed fixtures follow the SDK's types ------------------------------------


@pytest.mark.parametrize("name", STREAMS)
def test_every_fixture_event_parses_as_the_sdks_stream_event_type(name):
    decoded = events(fixture(name))
    assert decoded and all(e.complete and e.event and e.data for e in decoded)
    parsed = [EVENTS.validate_python(json.loads(e.data)) for e in decoded]
    assert [p.type for p in parsed] == [e.event for e in decoded]  # event: line == data type
    assert [p.sequence_number for p in parsed] == list(range(len(parsed)))
    assert parsed[0].type == "response.created" and parsed[-1].type == "response.completed"
    assert b"[DONE]" not in fixture(name)
    body = Response.model_validate_json(fixture_json(name))
    assert body.model_dump(mode="json") == parsed[-1].response.model_dump(mode="json")


# --- idle: byte for byte ------------------------------------------------------------------


def test_idle_non_stream_is_byte_exact_both_ways(start_gateway, upstream):
    gw = start_gateway()
    request = b'{"model":"gpt-4.1","input":"What is the capital of France?","instructions":"Be brief.","x_future":1}'
    upstream.enqueue(JSONReply(fixture_json("responses_text"), headers={"x-request-id": "req_up1"}))
    reply = httpx.post(gw.base_url + "/responses", content=request, headers=AUTH, timeout=20)
    assert reply.status_code == 200
    assert reply.content == fixture_json("responses_text")
    assert reply.headers["x-request-id"] == "req_up1" and "x-memgate-overhead-ms" in reply.headers
    sent = upstream.responses_requests()[-1]
    assert sent.body == request and sent.path == "/v1/responses"
    assert sent.headers["authorization"] == "Bearer sk-upstream-secret"
    # and the SDK reads it
    answer = sdk(gw).responses.create(model="gpt-4.1", input="What is the capital of France?")
    assert answer.output_text == "The capital of France is Paris."


def test_idle_stream_is_byte_exact_and_the_sdk_streams_it(start_gateway, upstream):
    gw = start_gateway()
    upstream.enqueue(SSEReply(fixture("responses_text"), pieces=97))
    with httpx.stream("POST", gw.url + "/responses", headers=AUTH, timeout=20,
                      content=b'{"model":"gpt-4.1","input":"hi","stream":true}') as reply:
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
        body = b"".join(reply.iter_raw())
    assert body == fixture("responses_text")
    assert upstream.responses_requests()[-1].body == b'{"model":"gpt-4.1","input":"hi","stream":true}'

    upstream.enqueue(SSEReply(fixture("responses_text"), pieces=61))
    with sdk(gw).responses.stream(model="gpt-4.1", input="hi") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final.output_text == "The capital of France is Paris."


async def test_idle_async_stream_with_create(start_gateway, upstream):
    gw = start_gateway()
    client = openai.AsyncOpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    stream = await client.responses.create(model="gpt-4.1", input="hi", stream=True)
    numbers = [event.sequence_number async for event in stream]
    assert numbers == list(range(len(events(fixture("responses_text")))))


# --- errors -------------------------------------------------------------------------------


def test_upstream_errors_come_back_unchanged(start_gateway, upstream):
    gw = start_gateway()
    error = {"error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
    upstream.enqueue(JSONReply(error, status=429, headers={"retry-after": "7", "x-ratelimit-remaining-requests": "0"}))
    reply = httpx.post(gw.base_url + "/responses", json={"model": "gpt-4.1", "input": "hi", "stream": True},
                       headers=AUTH, timeout=20)
    assert reply.status_code == 429 and reply.json() == error
    assert reply.headers["retry-after"] == "7" and reply.headers["x-ratelimit-remaining-requests"] == "0"
    upstream.enqueue(JSONReply({"error": {**error["error"], "message": "bad model", "code": "model_not_found"}}, status=404))
    with pytest.raises(openai.NotFoundError) as caught:
        sdk(gw).responses.create(model="gpt-4.1", input="hi")
    assert caught.value.code == "model_not_found"


def test_a_mid_stream_break_ends_with_one_error_event(start_gateway, upstream):
    gw = start_gateway()
    raw = fixture("responses_text")
    cut = raw.index(b"event: response.output_text.delta")
    upstream.enqueue(SSEReply(raw, pieces=cut, break_after=cut + 10))
    with httpx.stream("POST", gw.url + "/responses", headers=AUTH, timeout=20,
                      content=b'{"model":"gpt-4.1","input":"hi","stream":true}') as reply:
        body = b"".join(reply.iter_raw())
    decoded = events(body)
    assert body.startswith(raw[:cut])
    last = json.loads(decoded[-1].data)
    assert decoded[-1].event == "error" and last["type"] == "error"
    assert last["sequence_number"] == len(decoded) - 1 and last["code"]
    EVENTS.validate_python(last)


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "param"), [
    ({"input": "hi"}, "model"),
    ({"model": "gpt-4.1", "input": 5}, "input"),
    ({"model": "gpt-4.1", "input": ["hi"]}, "input[0]"),
    ({"model": "gpt-4.1", "input": [{"role": "robot", "content": "hi"}]}, "input[0].role"),
    ({"model": "gpt-4.1", "input": [{"role": "user", "content": 3}]}, "input[0].content"),
    ({"model": "gpt-4.1", "input": [{"role": "user", "content": ["x"]}]}, "input[0].content[0]"),
    ({"model": "gpt-4.1", "input": [{"type": "function_call_output", "call_id": "c1", "output": 5}]}, "input[0].output"),
    ({"model": "gpt-4.1", "input": [{"type": "function_call", "call_id": "c1", "name": "f"}]}, "input[0].arguments"),
    ({"model": "gpt-4.1", "input": "hi", "instructions": ["x"]}, "instructions"),
    ({"model": "gpt-4.1", "input": "hi", "previous_response_id": 4}, "previous_response_id"),
    ({"model": "gpt-4.1", "input": "hi", "stream": "yes"}, "stream"),
    ({"model": "gpt-4.1", "input": "hi", "tools": [1]}, "tools[0]"),
    ({"model": "gpt-4.1", "input": "hi", "max_output_tokens": "50"}, "max_output_tokens"),
])
def test_bad_input_is_400_naming_the_field(start_gateway, upstream, body, param):
    gw = start_gateway()
    reply = httpx.post(gw.base_url + "/responses", json=body, headers=AUTH, timeout=20)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error"
    assert error["message"].startswith(param + ":") or param in error["message"]
    assert upstream.responses_requests() == []


def test_unknown_paths_and_methods(start_gateway, upstream):
    gw = start_gateway()
    assert httpx.get(gw.base_url + "/responses", headers=AUTH, timeout=30).status_code == 405
    wrong = httpx.put(gw.base_url + "/responses/resp_1", headers=AUTH, timeout=30)
    assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, DELETE"
    assert httpx.get(gw.base_url + "/responses/resp_1/nope", headers=AUTH, timeout=30).status_code == 404
    assert httpx.get(gw.base_url + "/responses/resp_1", headers={"authorization": "Bearer nope"}, timeout=30).status_code == 401
    assert upstream.requests == []


# --- stored responses: passed through --------------------------------------------------------


def test_retrieve_delete_cancel_and_input_items_pass_through(start_gateway, upstream):
    gw = start_gateway()
    client = sdk(gw)
    stored = json.loads(fixture_json("responses_text"))
    rid = stored["id"]
    items = {"object": "list", "data": [{"id": "msg_in1", "type": "message", "role": "user", "status": "completed",
                                          "content": [{"type": "input_text", "text": "hi"}]}],
             "first_id": "msg_in1", "last_id": "msg_in1", "has_more": False}
    assert client.responses.create(model="gpt-4.1", input="hi").id == rid  # recorded as alice's
    upstream.requests.clear()
    upstream.enqueue(
        JSONReply(stored, headers={"x-request-id": "req_get"}),
        JSONReply(items),
        JSONReply({**stored, "status": "cancelled", "background": True}),
        JSONReply({"id": rid, "object": "response", "deleted": True}),
    )
    assert client.responses.retrieve(rid).output_text == "The capital of France is Paris."
    page = client.responses.input_items.list(rid, limit=5, order="asc")
    assert [i.id for i in page.data] == ["msg_in1"]
    assert client.responses.cancel(rid).status == "cancelled"
    client.responses.delete(rid)
    calls = [(r.method, r.path, r.headers.get("authorization")) for r in upstream.requests]
    assert calls == [
        ("GET", f"/v1/responses/{rid}", "Bearer sk-upstream-secret"),
        ("GET", f"/v1/responses/{rid}/input_items", "Bearer sk-upstream-secret"),
        ("POST", f"/v1/responses/{rid}/cancel", "Bearer sk-upstream-secret"),
        ("DELETE", f"/v1/responses/{rid}", "Bearer sk-upstream-secret"),
    ]
    # deleted through the gateway: its record goes too (the gateway's 404, the upstream's words)
    gone = httpx.get(gw.base_url + f"/responses/{rid}", headers=AUTH)
    assert gone.status_code == 404 and len(upstream.requests) == 4
    own_response(gw, rid, "alice", "tutor")
    # the query string goes as sent; an upstream 404 comes back unchanged
    missing = {"error": {"message": f"Response with id '{rid}' not found.", "type": "invalid_request_error",
                         "param": None, "code": None}}
    upstream.enqueue(JSONReply(missing, status=404))
    reply = httpx.get(gw.base_url + f"/responses/{rid}?include[]=message.output_text.logprobs", headers=AUTH, timeout=30)
    assert reply.status_code == 404 and reply.json() == missing
    assert upstream.requests[-1].path == f"/v1/responses/{rid}"
    assert upstream.requests[-1].query == reply.request.url.query.decode() != ""  # as the client sent it
    assert upstream.requests[-4].query == "limit=5&order=asc"
    assert gone.json() == missing


def test_get_with_stream_true_relays_the_stream(start_gateway, upstream):
    gw = start_gateway()
    own_response(gw, "resp_1", "alice", "tutor")
    upstream.enqueue(SSEReply(fixture("responses_text"), pieces=200))

    async def run() -> bytes:
        async with httpx.AsyncClient(timeout=20) as client:
            reply = await client.get(gw.base_url + "/responses/resp_1?stream=true&starting_after=0", headers=AUTH)
            return reply.content

    assert asyncio.run(run()) == fixture("responses_text")
    assert upstream.requests[-1].query == "stream=true&starting_after=0"


# --- disconnects ------------------------------------------------------------------------------


def test_a_client_leaving_mid_stream_closes_the_upstream_call_and_completion_sees_a_partial_reply(start_gateway, upstream):
    def wait_for(predicate, timeout=30.0):  # generous deadline (a loaded machine), no timing assertion
        deadline = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < deadline, "condition not reached"
            time.sleep(0.005)

    tp.EVENTS.clear()
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "rec_a", "config": {"label": "a"}}])
    raw = fixture("responses_text")
    first_delta = raw.index(b"event: response.output_text.delta")
    second_delta = raw.index(b"event: response.output_text.delta", first_delta + 1)
    upstream.enqueue(SSEReply(raw, pieces=second_delta, delay=60.0))  # the rest would come a minute later
    payload = b'{"model":"gpt-4.1","input":"hi","stream":true}'
    sock = socket.create_connection(("127.0.0.1", gw.port))
    sock.sendall(b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                 + f"authorization: Bearer {ALICE_KEY}\r\ncontent-length: {len(payload)}\r\n\r\n".encode() + payload)
    received = b""
    sock.settimeout(30)
    while b"response.output_text.delta" not in received:  # the one delta reached the client
        chunk = sock.recv(65536)
        assert chunk, received
        received += chunk
    assert b"200 OK" in received
    wait_for(lambda: upstream.open_responses == 1)
    sock.close()
    wait_for(lambda: upstream.disconnects)
    wait_for(lambda: any("on_complete:cancelled" in e for e in tp.EVENTS))
    assert [e for e in tp.EVENTS if "on_complete" in e] == ["a.on_complete:cancelled:3"]  # "The": the one delta sent
    tp.EVENTS.clear()
