"""Tenancy of the upstream resources a Responses create names by id (containers, vector
stores, stored prompts, files), through the official SDK against a real gateway and a
stateful Responses upstream (:class:`tests.support.responses_double.StoredResponses`):
a container is its creator's, the rest only what ``upstream.responses_shared_ids`` lists."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
import redis

from gateway.config import parse_config
from gateway.runtime.config import ConfigError
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY
from tests.support.responses_double import StoredResponses


def sdk(gw, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0)


@pytest.fixture
def stored(upstream) -> StoredResponses:
    upstream.default = StoredResponses()
    return upstream.default


def run_code(client: openai.OpenAI, container: Any, stream: bool) -> tuple[str, str]:
    """A create with a code interpreter tool: ``(response id, container id of its call)``."""
    tools: Any = [{"type": "code_interpreter", "container": container}]
    if not stream:
        response = client.responses.create(model="gpt-4.1", input="compute 6*7", tools=tools)
        call = response.output[0]
        assert call.type == "code_interpreter_call"
        return response.id, call.container_id
    events = list(client.responses.create(model="gpt-4.1", input="compute 6*7", tools=tools, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert done[0].type == "code_interpreter_call" and done[1].type == "message"
    assert events[-1].type == "response.completed"
    return events[-1].response.id, done[0].container_id


def refused(client: openai.OpenAI, param: str, noun: str, named: str, **create: Any) -> None:
    """``client``'s create (non-stream, then stream) is the 404 naming ``param``."""
    for stream in (False, True):
        with pytest.raises(openai.NotFoundError) as caught:
            client.responses.create(model="gpt-4.1", stream=stream, **create)
        body = caught.value.body
        assert body["param"] == param and body["type"] == "invalid_request_error" and body["code"] is None
        assert body["message"].startswith(f"{noun} with id '{named}' not found.")
        assert "upstream.responses_shared_ids" in body["message"]


def key_of(gw, kind: str, rid: str) -> str:
    return f"{gw.config.memory.key_prefix}:responses:{kind}:{rid}"


@pytest.mark.parametrize("stream", [False, True])
def test_a_container_belongs_to_the_tenant_whose_response_created_it(start_gateway, upstream, stored, stream):
    gw = start_gateway()
    alice, bob, admin = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY), sdk(gw, ADMIN_KEY)
    _, container = run_code(alice, {"type": "auto"}, stream)
    assert container in stored.containers and container.startswith("cntr_")
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        assert json.loads(client.get(key_of(gw, "container", container))) == {"user": "alice", "friend": "tutor"}
        assert client.pttl(key_of(gw, "container", container)) > 0
    before = len(upstream.requests)

    # bob names it: as the code interpreter's container, a shell tool's environment, a replayed call's
    refused(bob, "tools[0].container", "Container", container, input="run it",
            tools=[{"type": "code_interpreter", "container": container}])
    refused(bob, "tools[0].environment.container_id", "Container", container, input="run it",
            tools=[{"type": "shell", "environment": {"type": "container_reference", "container_id": container}}])
    refused(bob, "input[0].container_id", "Container", container, input=[
        {"type": "code_interpreter_call", "id": None, "status": "completed", "code": "x", "container_id": container,
         "outputs": []}])
    refused(bob, "tools[0].container", "Container", "cntr_made_up", input="run it",
            tools=[{"type": "code_interpreter", "container": "cntr_made_up"}])
    assert len(upstream.requests) == before  # never reached the upstream

    # alice reuses her container, stream or not; so may an admin key
    _, again = run_code(alice, container, stream)
    assert again == container and upstream.responses_requests()[-1].json["tools"][0]["container"] == container
    assert run_code(admin, container, not stream)[1] == container
    with pytest.raises(openai.NotFoundError):  # an admin's use did not make it bob's
        bob.responses.create(model="gpt-4.1", input="x", tools=[{"type": "code_interpreter", "container": container}])

    # forgetting alice deletes the record: nobody but admin keys may name it then
    with httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30) as http:
        assert http.post("/v1/admin/users/alice/forget").status_code == 200
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        assert client.get(key_of(gw, "container", container)) is None
    refused(alice, "tools[0].container", "Container", container, input="run it",
            tools=[{"type": "code_interpreter", "container": container}])
    assert stored.strays == []


def test_a_background_responses_container_is_recorded_on_retrieve(start_gateway, upstream, stored):
    """The container of a call first seen on ``GET`` (a ``background`` response) is the
    response owner's; the input items the upstream lists never record one."""
    gw = start_gateway()
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    rid = alice.responses.create(model="gpt-4.1", input="later").id
    container = stored.new_container()
    stored.stored[rid]["output"].insert(0, {"id": "ci_bg", "type": "code_interpreter_call", "status": "completed",
                                            "code": "1", "container_id": container, "outputs": []})
    stored.inputs[rid][0]["container_id"] = stored.new_container()  # what a client sent: never recorded
    tools: Any = [{"type": "code_interpreter", "container": container}]
    with pytest.raises(openai.NotFoundError):
        alice.responses.create(model="gpt-4.1", input="x", tools=tools)
    alice.responses.input_items.list(rid)
    with pytest.raises(openai.NotFoundError):
        alice.responses.create(model="gpt-4.1", input="x", tools=[
            {"type": "code_interpreter", "container": stored.inputs[rid][0]["container_id"]}])
    assert alice.responses.retrieve(rid).output[0].container_id == container
    assert alice.responses.create(model="gpt-4.1", input="x", tools=tools).output[0].container_id == container
    with pytest.raises(openai.NotFoundError):
        bob.responses.create(model="gpt-4.1", input="x", tools=tools)


UNSHARED = [  # (create arguments, param, noun, id): ids the gateway never saw made
    ({"input": "find it", "tools": [{"type": "file_search", "vector_store_ids": ["vs_a", "vs_op"]}]},
     "tools[0].vector_store_ids[0]", "Vector store", "vs_a"),
    ({"input": "hi", "prompt": {"id": "pmpt_op", "version": "2"}}, "prompt.id", "Prompt", "pmpt_op"),
    ({"input": [{"role": "user", "content": [{"type": "input_text", "text": "read"},
                                             {"type": "input_file", "file_id": "file-op"}]}]},
     "input[0].content[1].file_id", "File", "file-op"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file-img", "detail": "auto"}]}]},
     "input[0].content[0].file_id", "File", "file-img"),
    ({"input": "run", "tools": [{"type": "code_interpreter", "container": {"type": "auto", "file_ids": ["file-op"]}}]},
     "tools[0].container.file_ids[0]", "File", "file-op"),
    ({"input": "draw", "tools": [{"type": "image_generation", "input_image_mask": {"file_id": "file-mask"}}]},
     "tools[0].input_image_mask.file_id", "File", "file-mask"),
    ({"input": [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1",
                 "output": [{"type": "input_file", "file_id": "file-out"}]}]},
     "input[1].output[0].file_id", "File", "file-out"),
    ({"input": "hi", "prompt": {"id": "pmpt_op", "variables": {"doc": {"type": "input_file", "file_id": "file-var"}}}},
     "prompt.id", "Prompt", "pmpt_op"),
    ({"input": [{"type": "additional_tools", "role": "developer",
                 "tools": [{"type": "file_search", "vector_store_ids": ["vs_op"]}]}]},
     "input[0].tools[0].vector_store_ids[0]", "Vector store", "vs_op"),
]


@pytest.mark.parametrize(("create", "param", "noun", "named"), UNSHARED)
def test_ids_the_gateway_never_saw_made_are_refused_but_to_admin_keys(
        start_gateway, upstream, stored, create, param, noun, named):
    gw = start_gateway()
    for key in (ALICE_KEY, BOB_KEY):
        refused(sdk(gw, key), param, noun, named, **create)
    assert upstream.requests == []
    sdk(gw, ADMIN_KEY).responses.create(model="gpt-4.1", **create)  # admin keys pass
    assert upstream.responses_requests()[-1].json["input"] == create["input"]


def test_the_operators_shared_ids_are_every_keys(start_gateway, upstream, stored):
    shared_container = stored.new_container()
    gw = start_gateway(upstream={"responses_shared_ids": {
        "containers": [shared_container], "vector_stores": ["vs_op"], "prompts": ["pmpt_op"],
        "files": ["file-op", "file-var"]}})
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    allowed = [
        {"input": "find it", "tools": [{"type": "file_search", "vector_store_ids": ["vs_op"]}]},
        {"input": "hi", "prompt": {"id": "pmpt_op", "variables": {"doc": {"type": "input_file", "file_id": "file-var"}}}},
        {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-op"}]}]},
        {"input": "run", "tools": [{"type": "code_interpreter", "container": {"type": "auto", "file_ids": ["file-op"]}}]},
        # a computer tool's environment is a string that names nothing
        {"input": "click", "tools": [{"type": "computer_use_preview", "environment": "browser",
                                      "display_width": 1024, "display_height": 768}]},
    ]
    for client in (alice, bob):
        for create in allowed:
            for stream in (False, True):
                reply = client.responses.create(model="gpt-4.1", stream=stream, **create)
                if stream:
                    assert [e.type for e in reply][-1] == "response.completed"
                assert upstream.responses_requests()[-1].json["input"] == create["input"]
        assert run_code(client, shared_container, stream=False)[1] == shared_container
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:  # shared: recorded for nobody
        assert client.get(key_of(gw, "container", shared_container)) is None
    before = len(upstream.requests)
    refused(bob, "tools[0].vector_store_ids[1]", "Vector store", "vs_b", input="find it",
            tools=[{"type": "file_search", "vector_store_ids": ["vs_op", "vs_b"]}])
    refused(alice, "prompt.variables.doc.file_id", "File", "file-x", input="hi",
            prompt={"id": "pmpt_op", "variables": {"doc": {"type": "input_file", "file_id": "file-x"}}})
    assert len(upstream.requests) == before


@pytest.mark.parametrize(("extra", "param"), [
    ({"tools": [{"type": "file_search", "vector_store_ids": "vs_op"}]}, "tools[0].vector_store_ids"),
    ({"tools": [{"type": "file_search", "vector_store_ids": [7]}]}, "tools[0].vector_store_ids[0]"),
    ({"tools": [{"type": "code_interpreter", "container": 5}]}, "tools[0].container"),
    ({"prompt": "pmpt_op"}, "prompt"),
    ({"prompt": {"version": "1"}}, "prompt.id"),
    ({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": ["f"]}]}]}, "input[0].content[0].file_id"),
])
def test_resource_id_types_are_checked(start_gateway, upstream, stored, extra, param):
    gw = start_gateway()
    for key in (ALICE_KEY, ADMIN_KEY):
        with pytest.raises(openai.BadRequestError) as caught:
            sdk(gw, key).responses.create(model="gpt-4.1", input="hi", extra_body=extra)
        assert caught.value.body["param"] == param
    assert upstream.requests == []


def test_the_shared_ids_config_rejects_unknown_kinds():
    config = parse_config({"upstream": {"responses_shared_ids": {"vector_stores": ["vs_1"], "prompts": ["p"]}}})
    assert config.upstream.responses_shared_ids.vector_stores == ["vs_1"]
    assert config.upstream.responses_shared_ids.containers == []
    with pytest.raises(ConfigError, match=r"responses_shared_ids\.vectorstores"):
        parse_config({"upstream": {"responses_shared_ids": {"vectorstores": ["vs_1"]}}})


def test_a_keys_own_shared_ids_are_merged_with_the_global_ones(start_gateway, upstream, stored):
    """``clients[].responses_shared_ids``: what that key may name besides the global list;
    other keys still get the 404."""
    key_container = stored.new_container()
    gw = start_gateway(
        upstream={"responses_shared_ids": {"vector_stores": ["vs_op"]}},
        clients=[
            {"key": ALICE_KEY, "user_id": "alice", "friend_id": "tutor", "key_id": "alice",
             "responses_shared_ids": {"vector_stores": ["vs_alice"], "files": ["file-alice"],
                                      "containers": [key_container], "prompts": ["pmpt_alice"]}},
            {"key": BOB_KEY, "user_id": "bob", "friend_id": "tutor", "key_id": "bob"},
            {"key": ADMIN_KEY, "user_id": "ops", "admin": True, "key_id": "ops"},
        ])
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    search = {"input": "find it", "tools": [{"type": "file_search", "vector_store_ids": ["vs_op", "vs_alice"]}]}
    own = [
        search,
        {"input": "hi", "prompt": {"id": "pmpt_alice"}},
        {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-alice"}]}]},
    ]
    for create in own:
        for stream in (False, True):
            reply = alice.responses.create(model="gpt-4.1", stream=stream, **create)
            if stream:
                assert [e.type for e in reply][-1] == "response.completed"
            assert upstream.responses_requests()[-1].json["input"] == create["input"]
    assert run_code(alice, key_container, stream=False)[1] == key_container
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:  # the key's shared container: nobody's
        assert client.get(key_of(gw, "container", key_container)) is None
    before = len(upstream.requests)
    refused(bob, "tools[0].vector_store_ids[1]", "Vector store", "vs_alice", **search)
    refused(bob, "prompt.id", "Prompt", "pmpt_alice", input="hi", prompt={"id": "pmpt_alice"})
    refused(bob, "tools[0].container", "Container", key_container, input="run it",
            tools=[{"type": "code_interpreter", "container": key_container}])
    refused(alice, "tools[0].vector_store_ids[0]", "Vector store", "vs_bob", input="find it",
            tools=[{"type": "file_search", "vector_store_ids": ["vs_bob"]}])
    assert len(upstream.requests) == before
    bob.responses.create(model="gpt-4.1", input="find it",  # the global list is bob's too
                         tools=[{"type": "file_search", "vector_store_ids": ["vs_op"]}])


def test_a_keys_shared_ids_config_is_checked():
    base = {"key": "k" * 20, "user_id": "u"}
    config = parse_config({"clients": [{**base, "responses_shared_ids": {"files": ["file-1"]}}]})
    assert config.clients[0].responses_shared_ids.files == ["file-1"]
    assert config.clients[0].responses_shared_ids.containers == []
    with pytest.raises(ConfigError, match=r"responses_shared_ids\.file"):
        parse_config({"clients": [{**base, "responses_shared_ids": {"file": ["file-1"]}}]})
