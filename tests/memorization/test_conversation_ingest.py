"""``POST /v1/memories`` with a conversation chunk (issue 11, item 1): the chat path's
memorization, run now, through the real gateway."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gateway.memory.records import Tenant
from tests.memorization.conftest import REGISTRY, memorize_config
from tests.memorization.memory_model import fact
from tests.support.gateway import ALICE_KEY, BOB_KEY
from tests.support.upstream_double import JSONReply

ALICE = Tenant("alice", "tutor")

CHUNK: dict[str, Any] = {
    "session_id": "session-7",
    "messages": [
        {"role": "user", "name": "Caroline", "content": "I went to an LGBTQ support group yesterday.",
         "occurred_at": "2023-05-08T13:56:00+00:00", "metadata": {"dia_id": "D1:1"}},
        {"role": "assistant", "name": "Melanie", "content": "That sounds powerful. How did it feel?",
         "occurred_at": "2023-05-08T13:57:00+00:00", "metadata": {"dia_id": "D1:2"}},
        {"role": "user", "name": "Caroline", "content": "Thanks!", "occurred_at": "2023-05-08T13:58:00+00:00"},
        {"role": "user", "name": "Caroline", "content": "It felt welcoming; I want to study counseling next.",
         "occurred_at": "2023-05-08T13:59:00+00:00", "metadata": {"dia_id": "D1:4"}},
    ],
}


def start(start_gateway: Any, mode: str = "verbatim", **fields: Any) -> Any:
    config = memorize_config(mode, verbatim_skip_small_talk=True, **fields)
    return start_gateway(registry=REGISTRY, plugins=[{"name": "memorize", "config": config.model_dump(mode="json")}])


def client(gw: Any, key: str = ALICE_KEY) -> httpx.Client:
    return httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}"}, timeout=60)


def test_a_chunk_forms_verbatim_memories_that_keep_their_source(start_gateway, upstream):
    gw = start(start_gateway)
    with client(gw) as alice:
        created = alice.post("/v1/memories", json=CHUNK)
        assert created.status_code == 201, created.text
        body = created.json()
        assert body["object"] == "memory.ingest" and body["skipped"] == 1  # "Thanks!" is small talk
        records = [alice.get(f"/v1/memories/{i}").json() for i in body["ids"]]
        # verbatim_roles defaults to the user's turns: Caroline's two statements
        assert [r["text"] for r in records] == [
            "Caroline: I went to an LGBTQ support group yesterday.",
            "Caroline: It felt welcoming; I want to study counseling next.",
        ]
        first, last = records
        assert first["metadata"]["source_messages"] == [{"dia_id": "D1:1"}]
        assert last["metadata"]["source_messages"] == [{"dia_id": "D1:4"}]
        assert first["metadata"]["conversation_id"] == "session-7" and last["metadata"]["position"] == 3
        assert first["metadata"]["speaker"] == "Caroline"
        # "yesterday", said on 8 May: the event happened on the 7th (verbatim resolves it)
        assert first["occurred_at"].startswith("2023-05-07T00:00:00")
        assert first["metadata"]["occurred_expression"] == "yesterday"
        assert last["occurred_at"].startswith("2023-05-08T13:59:00") and "occurred_expression" not in last["metadata"]
        assert last["context"] == "Caroline: Thanks!"
        assert records[0]["context"] is None
        # embedded with the message after it too; the chunk's last message has none
        assert first["context_after"] == "Melanie: That sounds powerful. How did it feel?"
        assert last["context_after"] is None
        hits = alice.post("/v1/memories/search", json={"query": "what does Caroline want to study?", "top_k": 1}).json()
        assert hits["data"][0]["record"]["id"] == last["id"]


def test_the_messages_a_memory_is_indexed_with_are_redacted_like_its_text(start_gateway, upstream):
    gw = start(start_gateway)
    chunk = {"messages": [
        {"role": "assistant", "content": "Mail me at bob@example.com. Where did you grow up?"},
        {"role": "user", "content": "In Lisbon, by the river."},
        {"role": "assistant", "content": "Lovely! Write to ana@example.org about it."},
    ]}
    with client(gw) as alice:
        created = alice.post("/v1/memories", json=chunk)
        assert created.status_code == 201, created.text
        (record,) = [alice.get(f"/v1/memories/{i}").json() for i in created.json()["ids"]]
    # a short answer to a question about the user keeps the question (its own text is not enough)
    assert record["text"] == "Where did you grow up? — In Lisbon, by the river."
    assert record["context"].endswith("Where did you grow up?") and "bob@example.com" not in record["context"]
    assert record["context_after"].startswith("Lovely! Write to") and "ana@example.org" not in record["context_after"]


def test_posting_the_same_chunk_again_rewrites_the_same_memories(start_gateway, upstream):
    gw = start(start_gateway)
    with client(gw) as alice:
        first = alice.post("/v1/memories", json=CHUNK).json()["ids"]
        again = alice.post("/v1/memories", json=CHUNK).json()["ids"]
        assert first == again and len(first) == 2
        assert len(alice.get("/v1/memories").json()["items"]) == 2


def test_the_chunk_is_the_callers_own(start_gateway, upstream):
    gw = start(start_gateway)
    with client(gw) as alice, client(gw, BOB_KEY) as bob:
        ids = alice.post("/v1/memories", json=CHUNK).json()["ids"]
        assert bob.get(f"/v1/memories/{ids[0]}").status_code == 404
        assert bob.get("/v1/memories").json()["items"] == []


def test_extract_mode_asks_the_memory_model_and_links_every_source(start_gateway, env):
    gw = start(start_gateway, "verbatim", ingest_extract=True)
    env.model_double.on("memorize_extraction", {"facts": [fact("Caroline wants to study counseling")]})
    with client(gw) as alice:
        created = alice.post("/v1/memories", json={**CHUNK, "mode": "extract"})
        assert created.status_code == 201, created.text
        ids = created.json()["ids"]
        texts = [alice.get(f"/v1/memories/{i}").json() for i in ids]
    facts = [r for r in texts if r["text"] == "Caroline wants to study counseling"]
    assert len(facts) == 1
    assert facts[0]["metadata"]["source_messages"] == [{"dia_id": "D1:1"}, {"dia_id": "D1:2"}, {"dia_id": "D1:4"}]
    prompt = env.model_double.calls["memorize_extraction"][0]["messages"][-1]["content"]
    assert "study counseling next" in prompt


def test_bad_chunks_are_400_naming_the_field(start_gateway, upstream):
    gw = start(start_gateway, redaction={"max_chars": 100})
    with client(gw) as alice:
        cases = [
            ({"messages": []}, "messages"),
            ({"messages": [{"role": "system", "content": "x"}]}, "messages.0.role"),
            ({"messages": [{"role": "user", "content": "x", "mood": "happy"}]}, "messages.0.mood"),
            ({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "y" * 101}]},
             "messages[1].content"),
        ]
        for body, param in cases:
            response = alice.post("/v1/memories", json=body)
            assert response.status_code == 400, (body, response.text)
            assert response.json()["error"]["param"] == param, response.json()
        assert alice.get("/v1/memories").json()["items"] == []


def test_a_key_that_memorizes_nothing_gets_404(start_gateway, upstream):
    gw = start_gateway()  # no memorize plugin
    with client(gw) as alice:
        response = alice.post("/v1/memories", json=CHUNK)
        assert response.status_code == 404 and "memorize" in response.json()["error"]["message"]


async def test_the_chat_path_keeps_a_messages_client_id_the_same_way(start_gateway, env):
    from tests.memorization.test_memorize_end_to_end import chat, settle

    config = memorize_config("verbatim")
    gw = start_gateway(registry=REGISTRY, plugins=[{"name": "memorize", "config": config.model_dump(mode="json")}])
    await chat(gw, [{"role": "user", "content": "I adopted a puppy named Rex.", "memgate": {"id": "msg-41"}}])
    await settle(gw, 1)
    store = await env.store(gw.config.memory.key_prefix)
    await env.drain(config, store)
    (record,) = (await store.list(ALICE, limit=5)).items
    assert record.metadata["source_messages"] == [{"id": "msg-41"}]


def test_extract_needs_the_keys_configuration_else_403_naming_mode(start_gateway, env):
    """``mode: extract`` costs memory-model calls on the operator's key: refused (before any
    call, nothing written) unless the key's memorize configuration extracts or has
    ``ingest_extract``; here bob's key has it as a per-key override."""
    config = memorize_config("verbatim", verbatim_skip_small_talk=True)
    gw = start_gateway(registry=REGISTRY, plugins=[{"name": "memorize", "config": config.model_dump(mode="json")}],
                       clients=[{"key": ALICE_KEY, "user_id": "alice", "friend_id": "tutor", "key_id": "alice"},
                                {"key": BOB_KEY, "user_id": "bob", "friend_id": "tutor", "key_id": "bob",
                                 "plugins": {"memorize": {"config": {"ingest_extract": True}}}}])
    env.model_double.on("memorize_extraction", {"facts": [fact("Caroline wants to study counseling")]})
    with client(gw) as alice, client(gw, BOB_KEY) as bob:
        refused = alice.post("/v1/memories", json={**CHUNK, "mode": "extract"})
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["param"] == "mode" and error["code"] == "extract_not_allowed" and "extract" in error["message"]
        assert env.model_double.calls == {}  # no model call was made
        assert alice.get("/v1/memories").json()["items"] == []
        assert alice.post("/v1/memories", json={**CHUNK, "mode": "verbatim"}).status_code == 201
        allowed = bob.post("/v1/memories", json={**CHUNK, "mode": "extract"})
        assert allowed.status_code == 201, allowed.text
    assert len(env.model_double.calls["memorize_extraction"]) == 1


@pytest.mark.parametrize("failure", ["unusable_output", "server_error"])
def test_a_failing_memory_model_is_a_502_that_tells_nothing_of_its_output(start_gateway, env, failure):
    gw = start(start_gateway, "extract")
    secret = "SECRET-RAW-MODEL-OUTPUT-4711"
    if failure == "unusable_output":
        env.model_double.always["memorize_extraction"] = {"facts": secret}  # fails the schema, repair too
    else:
        env.model_double.reject_formats = {"json_schema", "json_object_schema", "json_object", "prompt"}
        env.model_double.reject_with = JSONReply({"error": {"message": secret, "type": "server_error"}}, status=500)
    with client(gw) as alice:
        failed = alice.post("/v1/memories", json={**CHUNK, "mode": "extract"})
    assert failed.status_code == 502, failed.text
    assert failed.json()["error"]["code"] == "memory_model_error"
    for leak in (secret, "pydantic", "http", "input_value", "Input should"):
        assert leak not in failed.text
