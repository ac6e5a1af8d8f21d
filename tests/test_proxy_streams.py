"""Streams through the gateway: exact relay, usage chunk, headers, errors (openai-compat
items 12-18), with the real SDK and with raw HTTP to compare bytes."""

import json

import httpx
import openai
import pytest

from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import JSONReply, SSEReply, fixture

FIXTURES = [
    "text_with_usage",
    "single_tool_call_with_usage",
    "parallel_tool_calls_with_usage",
    "gpt-4o-mini_tool_call_round1",
    "gpt-4o-mini_tool_call_round2",
]
HEADERS = {"authorization": f"Bearer {ALICE_KEY}"}


def raw_stream(gw, body, headers=HEADERS):
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", gw.base_url + "/chat/completions", content=json.dumps(body).encode(), headers={**headers, "content-type": "application/json"}) as r:
            return r, b"".join(r.iter_raw())


def without_usage_event(data: bytes) -> bytes:
    events = data.split(b"\n\n")
    kept = [e for e in events if not (e.startswith(b"data: {") and json.loads(e[6:]).get("choices") == [])]
    return b"\n\n".join(kept)


@pytest.mark.parametrize("name", FIXTURES)
def test_events_reach_the_client_byte_identical_when_it_asked_for_usage(start_gateway, upstream, name):
    gw = start_gateway()
    upstream.enqueue(SSEReply(fixture(name), pieces=37))  # fragmented upstream writes
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "stream_options": {"include_usage": True}}
    response, data = raw_stream(gw, body)
    assert response.status_code == 200
    assert data == fixture(name)
    assert data.count(b"data: [DONE]") == 1
    assert upstream.chat_requests()[-1].body == json.dumps(body).encode()


@pytest.mark.parametrize("name", FIXTURES)
def test_usage_chunk_the_gateway_asked_for_is_removed(start_gateway, upstream, name):
    gw = start_gateway()
    upstream.enqueue(SSEReply(fixture(name), pieces=64))
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    _, data = raw_stream(gw, body)
    assert data == without_usage_event(fixture(name))
    assert b'"choices":[]' not in data
    sent = upstream.chat_requests()[-1].json
    assert sent["stream_options"] == {"include_usage": True}


def test_upstream_body_is_the_clients_when_usage_accounting_is_off(start_gateway, upstream):
    gw = start_gateway(upstream={"request_stream_usage": False})
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    _, data = raw_stream(gw, body)
    assert upstream.chat_requests()[-1].body == json.dumps(body).encode()
    assert data == fixture("text_with_usage")


def test_stream_response_headers(start_gateway, upstream):
    gw = start_gateway()
    upstream.enqueue(SSEReply(headers={"x-request-id": "req_up_1", "x-ratelimit-remaining-requests": "99"}))
    response, _ = raw_stream(gw, {"model": "gpt-4o", "messages": [], "stream": True})
    h = response.headers
    assert h["content-type"].startswith("text/event-stream")
    assert "content-length" not in h and "content-encoding" not in h
    assert h["cache-control"] == "no-cache" and h["x-accel-buffering"] == "no"
    assert h["x-request-id"] == "req_up_1" and h["x-ratelimit-remaining-requests"] == "99"
    assert float(h["x-memgate-overhead-ms"]) >= 0


def test_sdk_assembles_parallel_tool_calls(start_gateway, upstream):
    gw = start_gateway()
    upstream.enqueue(SSEReply(fixture("parallel_tool_calls_with_usage")))
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    calls: dict[int, dict] = {}
    finish = None
    for chunk in client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "w"}], stream=True):
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for tc in choice.delta.tool_calls or []:
                entry = calls.setdefault(tc.index, {"id": tc.id, "args": ""})
                entry["args"] += tc.function.arguments or ""
    assert sorted(calls) == [0, 1] and finish == "tool_calls"
    assert all(json.loads(c["args"]) for c in calls.values())


async def test_async_sdk_stream_text_equals_deltas(start_gateway, upstream):
    gw = start_gateway()
    client = openai.AsyncOpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    stream = await client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "w"}], stream=True,
        stream_options={"include_usage": True})
    text, usage = "", None
    async for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
    assert text.startswith("I'm unable to provide real-time weather updates.")
    assert usage.total_tokens == 44
    await client.close()


def test_error_before_the_first_event_keeps_status_and_json(start_gateway, upstream):
    gw = start_gateway()
    error = {"error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
    upstream.enqueue(JSONReply(error, status=429, headers={"retry-after": "7", "x-ratelimit-remaining-tokens": "0"}))
    response, data = raw_stream(gw, {"model": "gpt-4o", "messages": [], "stream": True})
    assert response.status_code == 429
    assert json.loads(data) == error
    assert response.headers["retry-after"] == "7"
    assert response.headers["content-type"].startswith("application/json")


def test_mid_stream_upstream_failure_ends_with_one_error_event(start_gateway, upstream):
    gw = start_gateway()
    upstream.enqueue(SSEReply(fixture("text_with_usage"), pieces=300, break_after=900))
    _, data = raw_stream(gw, {"model": "gpt-4o", "messages": [], "stream": True,
                              "stream_options": {"include_usage": True}})
    events = [e for e in data.split(b"\n\n") if e]
    assert data.startswith(fixture("text_with_usage")[:600])
    assert b"[DONE]" not in data
    last = json.loads(events[-1][len(b"data: "):])
    assert last["error"]["type"] == "upstream_error"
    assert sum(1 for e in events if b'"error"' in e) == 1


def test_sdk_raises_api_error_on_mid_stream_failure(start_gateway, upstream):
    gw = start_gateway()
    upstream.enqueue(SSEReply(fixture("text_with_usage"), pieces=300, break_after=900))
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    with pytest.raises(openai.APIError):
        for _ in client.chat.completions.create(model="gpt-4o", messages=[], stream=True):
            pass


@pytest.mark.parametrize("pieces", [1, 5, 13])
def test_tiny_upstream_writes_are_relayed_exactly(start_gateway, upstream, pieces):
    gw = start_gateway()
    data = fixture("single_tool_call_with_usage")
    upstream.enqueue(SSEReply(data[:2000], pieces=pieces))
    _, got = raw_stream(gw, {"model": "gpt-4o", "messages": [], "stream": True,
                             "stream_options": {"include_usage": True}})
    assert got == data[:2000]
