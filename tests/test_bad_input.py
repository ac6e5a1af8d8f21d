"""Hostile and malformed input through the real server (issue 9 items 6-8): bad input is
a 4xx in the OpenAI envelope naming the field, never a 500; the usage chunk the gateway
asked for is stripped in every shape upstreams send it; 503 bodies reveal nothing
internal."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from tests.support.gateway import ADMIN_KEY, ALICE_KEY, LIMITED_KEY
from tests.support.upstream_double import SSEReply, fixture

AUTH = {"authorization": f"Bearer {ALICE_KEY}", "content-type": "application/json"}


def envelope(response: httpx.Response) -> dict:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}, body
    return body["error"]


def deep(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def sdk(gw, key=ALICE_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0)


# --- chat route ---------------------------------------------------------------------


@pytest.mark.parametrize("depth", [900, 1100, 100_000])
def test_deeply_nested_chat_body_is_400(start_gateway, upstream, depth):
    gw = start_gateway()
    body = b'{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}],"x":' + deep(depth) + b"}"
    response = httpx.post(gw.base_url + "/chat/completions", content=body, headers=AUTH, timeout=10)
    assert response.status_code == 400, response.text
    error = envelope(response)
    assert error["type"] == "invalid_request_error" and "nested" in error["message"]
    assert upstream.chat_requests() == []


@pytest.mark.parametrize("field", ["content", "model"])
def test_lone_surrogate_in_a_streamed_request_is_400_naming_the_field(start_gateway, upstream, field):
    """Sent as JSON escapes (``ensure_ascii``): the openai SDK itself cannot encode a lone
    surrogate, but any client writing ``\\ud800`` can."""
    gw = start_gateway()
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    if field == "content":
        body["messages"] = [{"role": "user", "content": "bad \ud800 text"}]
        param = "messages[0].content"
    else:
        body["model"] = "gpt-\udc00"
        param = "model"
    raw = json.dumps(body).encode()
    assert b"\\ud800" in raw or b"\\udc00" in raw
    response = httpx.post(gw.base_url + "/chat/completions", content=raw, headers=AUTH, timeout=10)
    assert response.status_code == 400, response.text
    error = envelope(response)
    assert error["param"] == param and "surrogate" in error["message"]
    assert upstream.chat_requests() == []


def test_surrogate_pairs_written_as_escapes_are_fine(start_gateway, upstream):
    gw = start_gateway()
    body = json.dumps({"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "smile \U0001F600"}]},
                      ensure_ascii=True).encode()
    assert b"\\ud83d\\ude00" in body
    response = httpx.post(gw.base_url + "/chat/completions", content=body, headers=AUTH, timeout=10)
    assert response.status_code == 200
    assert upstream.chat_requests()[-1].json["messages"][0]["content"] == "smile \U0001F600"


def test_model_of_the_wrong_type_says_it_must_be_a_string(start_gateway, upstream):
    gw = start_gateway()
    with pytest.raises(openai.BadRequestError) as info:
        sdk(gw).chat.completions.create(model=5, messages=[{"role": "user", "content": "hi"}])  # type: ignore[arg-type]
    assert info.value.body["param"] == "model" and "must be a string" in info.value.body["message"]


def test_invalid_utf8_chat_body_is_400(start_gateway, upstream):
    gw = start_gateway()
    body = b'{"model":"gpt-4o","messages":[{"role":"user","content":"\xff\xfe"}]}'
    response = httpx.post(gw.base_url + "/chat/completions", content=body, headers=AUTH, timeout=10)
    assert response.status_code == 400 and "UTF-8" in envelope(response)["message"]


@pytest.mark.parametrize("path, allow", [
    ("/v1/chat/completions", "POST"),
    ("/v1/embeddings", "POST"),
    ("/v1/memories/search", "POST"),
    ("/v1/admin/users/alice/import", "POST"),
    ("/v1/admin/users/alice/forget", "POST"),
])
def test_get_on_a_post_route_is_405_with_allow(start_gateway, upstream, path, allow):
    gw = start_gateway()
    response = httpx.get(gw.url + path, headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=10)
    assert response.status_code == 405, response.text
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert allow in allowed and "GET" not in allowed  # litestar also lists OPTIONS
    assert envelope(response)["code"] == "method_not_allowed"


# --- memory API ---------------------------------------------------------------------


def memories(gw, key=ALICE_KEY) -> httpx.Client:
    return httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}"}, timeout=30)


def test_missing_field_names_the_field_and_the_reason(start_gateway, upstream):
    gw = start_gateway()
    with memories(gw) as alice:
        response = alice.post("/v1/memories", json={"scope": "profile", "type": "trait"})
    assert response.status_code == 400
    error = envelope(response)
    assert error["param"] == "text" and error["message"].startswith("text: field required"), error


def test_unknown_field_is_named(start_gateway, upstream):
    gw = start_gateway()
    with memories(gw) as alice:
        response = alice.post("/v1/memories/search", json={"query": "x", "colour": "red"})
    assert response.status_code == 400
    error = envelope(response)
    assert error["param"] == "colour" and error["message"] == "colour: extra inputs are not permitted", error


def test_query_parameter_errors_name_the_parameter_the_client_sent(start_gateway, upstream):
    gw = start_gateway()
    with memories(gw) as alice:
        response = alice.get("/v1/memories", params={"scope": "everything"})
    assert response.status_code == 400 and envelope(response)["param"] == "scope"


@pytest.mark.parametrize("body", [
    b'{"scope":"profile","type":"trait","text":"caf\xe9"}',
    b'{"scope":"profile","type":"trait","text":"\xed\xa0\x80"}',  # UTF-8-encoded surrogate
])
def test_invalid_utf8_memory_body_is_400(start_gateway, upstream, body):
    gw = start_gateway()
    with memories(gw) as alice:
        response = alice.post("/v1/memories", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    envelope(response)


def test_lone_surrogate_escape_in_a_memory_is_400(start_gateway, upstream):
    gw = start_gateway()
    with memories(gw) as alice:
        response = alice.post("/v1/memories", content=b'{"scope":"profile","type":"trait","text":"a \\ud800 b"}',
                              headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert envelope(response)["param"] == "text"


def test_invalid_utf8_import_is_400(start_gateway, upstream):
    gw = start_gateway()
    with memories(gw, ADMIN_KEY) as admin:
        response = admin.post("/v1/admin/users/alice/import", content=b'{"id": "\xff"}\n')
    assert response.status_code == 400, response.text
    assert "UTF-8" in envelope(response)["message"]


def test_deeply_nested_metadata_is_refused_before_embedding(start_gateway, upstream):
    gw = start_gateway()
    body = (b'{"scope":"profile","type":"trait","text":"nested metadata","metadata":' + deep(900) + b"}")
    with memories(gw) as alice:
        calls = gw.embedder.calls
        response = alice.post("/v1/memories", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 400, response.text
        assert envelope(response)["param"] == "metadata"
        assert gw.embedder.calls == calls  # refused before any work
        assert alice.get("/v1/memories").json()["items"] == []
        kept = alice.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "ok"}).json()
        response = alice.patch(f"/v1/memories/{kept['id']}", headers={"content-type": "application/json"},
                               content=b'{"text":"changed","metadata":' + deep(900) + b"}")
        assert response.status_code == 400 and envelope(response)["param"] == "metadata"
        assert alice.get(f"/v1/memories/{kept['id']}").json()["text"] == "ok"


def test_the_stores_followed_by_is_refused_from_callers_and_kept_through_export_and_import(start_gateway, upstream):
    gw = start_gateway()
    with memories(gw) as alice, memories(gw, ADMIN_KEY) as admin:
        older = alice.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "I'm an ER nurse"}).json()
        response = alice.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "Moved up to the ICU",
                                                    "metadata": {"followed_by": [older["id"]]}})
        assert response.status_code == 400, response.text
        assert envelope(response)["param"] == "metadata.followed_by"
        assert [r["id"] for r in alice.get("/v1/memories").json()["items"]] == [older["id"]]  # nothing stored
        response = alice.patch(f"/v1/memories/{older['id']}", json={"text": "I'm an ICU nurse",
                                                                    "metadata": {"followed_by": []}})
        assert response.status_code == 400 and envelope(response)["param"] == "metadata.followed_by"
        response = admin.patch(f"/v1/admin/memories/{older['id']}", params={"user_id": "alice", "friend_id": "tutor"},
                               json={"text": "I'm an ICU nurse", "metadata": {"followed_by": []}})  # the console's edit
        assert response.status_code == 400 and envelope(response)["param"] == "metadata.followed_by"
        assert alice.get(f"/v1/memories/{older['id']}").json()["text"] == "I'm an ER nurse"  # unchanged
        newer = alice.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "Moved up to the ICU",
                                                 "metadata": {"follows": older["id"]}}).json()
        exported = admin.get("/v1/admin/users/alice/export")
        lines = {r["id"]: r for r in map(json.loads, exported.text.splitlines())}
        assert lines[older["id"]]["metadata"]["followed_by"] == [newer["id"]]  # the export holds the store's list
        assert admin.post("/v1/admin/users/alice/forget").json()["deleted"] == 2
        assert admin.post("/v1/admin/users/alice/import", content=exported.content).json() == {"imported": 2}
        assert alice.get(f"/v1/memories/{older['id']}").json()["metadata"]["followed_by"] == [newer["id"]]


def test_oversized_metadata_is_refused(start_gateway, upstream):
    gw = start_gateway()
    with memories(gw) as alice:
        response = alice.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "x",
                                                    "metadata": {"blob": "y" * 70_000}})
    assert response.status_code == 400 and envelope(response)["param"] == "metadata"


def test_very_deep_memory_body_is_400(start_gateway, upstream):
    gw = start_gateway()
    with memories(gw) as alice:
        response = alice.post("/v1/memories", content=deep(100_000), headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    envelope(response)


# --- wire fidelity --------------------------------------------------------------------


def litellm_stream() -> bytes:
    """``text_with_usage`` with the usage chunk as LiteLLM sends it: an empty delta in
    ``choices`` instead of ``choices: []``."""
    events = fixture("text_with_usage").split(b"\n\n")
    out = []
    for event in events:
        if event.startswith(b"data: {") and json.loads(event[6:]).get("choices") == []:
            event = event.replace(b'"choices":[]', b'"choices":[{"index":0,"delta":{}}]')
        out.append(event)
    return b"\n\n".join(out)


def test_litellm_usage_chunk_is_stripped_when_the_gateway_asked_for_it(start_gateway, upstream):
    gw = start_gateway()
    stream = litellm_stream()
    assert b'"choices":[{"index":0,"delta":{}}],"usage"' in stream
    upstream.enqueue(SSEReply(stream, pieces=50))
    chunks = list(sdk(gw).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}],
                                                  stream=True))
    assert all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert upstream.chat_requests()[-1].json["stream_options"] == {"include_usage": True}


def test_litellm_usage_chunk_is_kept_when_the_client_asked(start_gateway, upstream):
    gw = start_gateway()
    upstream.enqueue(SSEReply(litellm_stream()))
    chunks = list(sdk(gw).chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}],
                                                  stream=True, stream_options={"include_usage": True}))
    assert chunks[-1].usage.total_tokens == 44


def test_sdk_models_retrieve(start_gateway, upstream):
    gw = start_gateway()
    model = sdk(gw).models.retrieve("gpt-4o-mini")
    assert model.id == "gpt-4o-mini"
    assert upstream.requests[-1].path == "/v1/models/gpt-4o-mini"
    with pytest.raises(openai.NotFoundError):
        sdk(gw, LIMITED_KEY).models.retrieve("gpt-4o")  # not in the key's allowed_models
    assert len(upstream.requests) == 1


# --- errors reveal nothing internal ----------------------------------------------------


@pytest.fixture
def own_redis(tmp_path):
    from gateway.runtime.redis_server import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def test_503_bodies_name_no_socket_path_or_host(start_gateway, upstream, own_redis):
    gw = start_gateway(memory={"redis_url": own_redis.url})
    socket = own_redis.url.split("://", 1)[1].split("?")[0]
    own_redis.stop()
    with memories(gw) as alice:
        listed = alice.get("/v1/memories")
    unknown = httpx.post(gw.base_url + "/chat/completions", json={"model": "gpt-4o", "messages": []},
                         headers={"authorization": "Bearer sk-not-a-config-key-123456"}, timeout=30)
    for response in (listed, unknown):
        assert response.status_code == 503, response.text
        error = envelope(response)
        assert error["type"] == "service_unavailable"
        for secret in (socket, "redis", ".sock", "/tmp", "127.0.0.1", "Errno"):
            assert secret.lower() not in response.text.lower(), (secret, response.text)


@pytest.mark.parametrize("path, methods", [
    ("/v1/memories", {"GET", "POST", "OPTIONS"}),
    ("/v1/memories/0123456789abcdef0123456789abcdef", {"GET", "PATCH", "DELETE", "OPTIONS"}),
])
def test_options_lists_every_method_of_the_path(start_gateway, upstream, path, methods):
    gw = start_gateway()
    response = httpx.options(gw.url + path, headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=10)
    assert response.status_code == 204
    assert {m.strip() for m in response.headers["allow"].split(",")} == methods
