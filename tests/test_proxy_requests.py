"""Non-stream calls, request fidelity, errors, routing and the other endpoints
(openai-compat items 1-7, 10-11, 23-24, 26)."""

import base64
import json
import struct

import httpx
import openai
import pytest

from tests.support.gateway import ALICE_KEY, LIMITED_KEY
from tests.support.upstream_double import COMPLETION, JSONReply

EVERY_FIELD = {
    "model": "gpt-4o",
    "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    "n": 3, "logprobs": True, "top_logprobs": 2, "seed": 42, "user": "end-user-7",
    "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}, "strict": True}},
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "tool_choice": "auto", "parallel_tool_calls": False, "metadata": {"k": "v"}, "store": False,
    "reasoning_effort": "low", "max_completion_tokens": 50, "service_tier": "auto",
    "some_future_field": {"nested": [1, 2, {"deep": None}]},
}


def post(gw, body, key=ALICE_KEY, path="/v1/chat/completions", headers=None):
    with httpx.Client(timeout=10) as client:
        return client.post(gw.url + path, content=json.dumps(body).encode(),
                           headers={"authorization": f"Bearer {key}", "content-type": "application/json", **(headers or {})})


def test_non_stream_reply_is_byte_identical(start_gateway, upstream):
    gw = start_gateway()
    raw = json.dumps(COMPLETION, indent=1).encode()  # odd formatting must survive too
    upstream.enqueue(JSONReply(raw))
    response = post(gw, {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200 and response.content == raw


def test_every_request_field_reaches_upstream_unchanged(start_gateway, upstream):
    gw = start_gateway()
    post(gw, EVERY_FIELD)
    received = upstream.chat_requests()[-1]
    assert received.body == json.dumps(EVERY_FIELD).encode()
    assert received.headers["authorization"] == "Bearer sk-upstream-secret"


def test_n_choices_keep_their_index(start_gateway, upstream):
    gw = start_gateway()
    body = dict(COMPLETION)
    body["choices"] = [{**COMPLETION["choices"][0], "index": i, "message": {"role": "assistant", "content": f"c{i}"}} for i in range(3)]
    upstream.enqueue(JSONReply(body))
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=[], n=3)
    assert [(c.index, c.message.content) for c in reply.choices] == [(0, "c0"), (1, "c1"), (2, "c2")]
    assert upstream.chat_requests()[-1].json["n"] == 3


@pytest.mark.parametrize("status", [400, 401, 429, 500])
def test_upstream_errors_pass_through_with_headers(start_gateway, upstream, status):
    gw = start_gateway()
    body = {"error": {"message": f"upstream says {status}", "type": "x", "param": None, "code": "c"}}
    headers = {"retry-after": "3", "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0",
               "x-request-id": "req_upstream_42"}
    upstream.enqueue(JSONReply(json.dumps(body).encode(), status=status, headers=headers))
    response = post(gw, {"model": "gpt-4o", "messages": []})
    assert response.status_code == status
    assert response.json() == body
    for name, value in headers.items():
        assert response.headers[name] == value


def test_sdk_maps_passed_through_rate_limit(start_gateway, upstream):
    gw = start_gateway()
    upstream.enqueue(JSONReply({"error": {"message": "slow down", "type": "requests", "param": None, "code": "rate_limit_exceeded"}}, status=429))
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    with pytest.raises(openai.RateLimitError, match="slow down"):
        client.chat.completions.create(model="gpt-4o", messages=[])


@pytest.mark.parametrize("key", [None, "sk-wrong-key-secret-123"])
def test_missing_or_unknown_key_is_401_envelope_without_the_key(start_gateway, upstream, key):
    gw = start_gateway()
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    response = httpx.post(gw.base_url + "/chat/completions", content=b'{"model":"gpt-4o","messages":[]}', headers=headers, timeout=30)
    assert response.status_code == 401
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["code"] == "invalid_api_key"
    if key:
        assert key not in response.text
    assert upstream.chat_requests() == []


def test_sdk_raises_authentication_error(start_gateway, upstream):
    gw = start_gateway()
    client = openai.OpenAI(base_url=gw.base_url, api_key="sk-nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="gpt-4o", messages=[])


def test_base_url_without_v1_works(start_gateway, upstream):
    gw = start_gateway()
    client = openai.OpenAI(base_url=gw.url, api_key=ALICE_KEY, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
    assert reply.id == COMPLETION["id"]


def test_model_outside_the_keys_allowed_models_is_refused(start_gateway, upstream):
    gw = start_gateway()
    response = post(gw, {"model": "gpt-4o", "messages": []}, key=LIMITED_KEY)
    assert response.status_code == 403 and response.json()["error"]["code"] == "model_not_allowed"
    assert post(gw, {"model": "gpt-4o-mini", "messages": []}, key=LIMITED_KEY).status_code == 200


@pytest.mark.parametrize("body, status", [(b"{not json", 400), (b"[1,2]", 400), (b'{"messages": []}', 400)])
def test_bad_request_bodies_get_the_envelope(start_gateway, upstream, body, status):
    gw = start_gateway()
    response = httpx.post(gw.base_url + "/chat/completions", content=body,
                          headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=30)
    assert response.status_code == status
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_oversized_body_is_413(start_gateway, upstream):
    gw = start_gateway(server={"max_body_bytes": 1000})
    response = post(gw, {"model": "gpt-4o", "messages": [{"role": "user", "content": "x" * 2000}]})
    assert response.status_code == 413 and "error" in response.json()


def test_models_are_filtered_by_the_keys_allowed_models(start_gateway, upstream):
    gw = start_gateway()
    limited = openai.OpenAI(base_url=gw.base_url, api_key=LIMITED_KEY, max_retries=0)
    assert [m.id for m in limited.models.list()] == ["gpt-4o-mini"]
    alice = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    listing = alice.models.list()
    assert len(listing.data) == 3 and listing.data[0].object == "model"


@pytest.mark.parametrize("encoding", ["base64", "float"])
def test_embeddings_pass_through_encoding_format(start_gateway, upstream, encoding):
    gw = start_gateway()
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    result = client.embeddings.create(model="text-embedding-3-small", input=["a", "b"], dimensions=4,
                                      encoding_format=encoding)
    sent = [r for r in upstream.requests if r.path.endswith("/embeddings")][-1].json
    assert sent["encoding_format"] == encoding and sent["dimensions"] == 4
    first = result.data[0].embedding
    if encoding == "base64":  # asked explicitly: the SDK hands back the string
        first = struct.unpack("<4f", base64.b64decode(first))
    assert len(result.data) == 2 and len(first) == 4


def test_sdk_default_base64_embeddings_decode_to_floats(start_gateway, upstream):
    gw = start_gateway()
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    result = client.embeddings.create(model="text-embedding-3-small", input="hello", dimensions=3)
    sent = [r for r in upstream.requests if r.path.endswith("/embeddings")][-1].json
    assert sent.get("encoding_format") == "base64"
    assert len(result.data[0].embedding) == 3
    assert all(isinstance(x, float) for x in result.data[0].embedding)


def test_unknown_v1_path_is_404_envelope(start_gateway, upstream):
    gw = start_gateway()
    response = httpx.post(gw.url + "/v1/assistants", headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=30)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_health_and_readiness(start_gateway, upstream):
    gw = start_gateway()
    assert httpx.get(gw.url + "/healthz", timeout=30).json() == {"status": "ok"}
    ready = httpx.get(gw.url + "/readyz", timeout=30)
    assert ready.status_code == 200 and ready.json()["checks"] == {"redis": True, "upstream": True, "models": True}


def test_readiness_fails_when_upstream_is_unreachable(start_gateway, upstream):
    gw = start_gateway(upstream={"base_url": "http://127.0.0.1:9/v1"})
    ready = httpx.get(gw.url + "/readyz", timeout=30)
    assert ready.status_code == 503 and ready.json()["checks"]["upstream"] != True  # noqa: E712


def test_unreachable_upstream_is_502_envelope(start_gateway, upstream):
    gw = start_gateway(upstream={"base_url": "http://127.0.0.1:9/v1", "connect_timeout_s": 1})
    response = post(gw, {"model": "gpt-4o", "messages": []})
    assert response.status_code in (502, 504)
    assert response.json()["error"]["type"] == "upstream_error"
