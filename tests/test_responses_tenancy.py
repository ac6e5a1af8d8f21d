"""Tenancy of the stored-response routes: alice's response ids are nobody else's, through
the official SDK against a real gateway and a stateful Responses upstream
(:class:`tests.support.responses_double.StoredResponses`); ids in paths never climb."""

from __future__ import annotations

import http.client
import json

import httpx
import openai
import pytest
import redis

from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY, SERVICE_KEY
from tests.support.responses_double import FIXTURE_ITEM_ID, StoredResponses, not_found, own_response
from tests.support.upstream_double import SSEReply, fixture


def sdk(gw, key: str, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0, default_headers=headers or None)


@pytest.fixture
def stored(upstream) -> StoredResponses:
    upstream.default = StoredResponses()
    return upstream.default


def refused_everywhere(client: openai.OpenAI, rid: str) -> list[str]:
    """What each stored-response route and ``previous_response_id`` answer ``client``:
    the 404 error bodies (a route that answered anything else raises)."""
    bodies = []
    for attempt in (
        lambda: client.responses.retrieve(rid),
        lambda: client.responses.retrieve(rid, include=["message.output_text.logprobs"]),
        lambda: client.responses.input_items.list(rid),
        lambda: client.responses.cancel(rid),
        lambda: client.responses.delete(rid),
        lambda: client.responses.create(model="gpt-4.1", input="and then?", previous_response_id=rid),
        lambda: client.responses.create(model="gpt-4.1", input="and then?", previous_response_id=rid, stream=True),
    ):
        with pytest.raises(openai.NotFoundError) as caught:
            attempt()
        bodies.append(caught.value.body)
    return bodies


@pytest.mark.parametrize("stream", [False, True])
def test_another_users_key_cannot_read_cancel_delete_or_continue_a_response(start_gateway, upstream, stored, stream):
    gw = start_gateway()
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    if stream:
        with alice.responses.stream(model="gpt-4.1", input="my secret plan") as events:
            rid = events.get_final_response().id
    else:
        rid = alice.responses.create(model="gpt-4.1", input="my secret plan").id
    assert rid in stored.stored
    before = len(upstream.requests)

    bodies = refused_everywhere(bob, rid)
    # the same answer the upstream gives for an id that does not exist: nothing told apart
    assert bodies[:5] == [not_found(rid)["error"]] * 5
    assert bodies[5]["code"] == bodies[6]["code"] == "previous_response_not_found"
    assert bodies[5]["param"] == "previous_response_id"
    assert len(upstream.requests) == before  # bob's calls never reached the upstream
    assert rid in stored.stored and stored.stored[rid]["status"] == "completed"

    # alice uses her own id on every route
    assert alice.responses.retrieve(rid).id == rid
    assert [i.id for i in alice.responses.input_items.list(rid).data] == ["msg_in1"]
    follow = alice.responses.create(model="gpt-4.1", input="and then?", previous_response_id=rid)
    assert stored.stored[follow.id]["previous_response_id"] == rid
    assert alice.responses.retrieve(follow.id).id == follow.id  # a continuation is hers too
    refused_everywhere(bob, follow.id)
    assert alice.responses.cancel(rid).status == "cancelled"
    alice.responses.delete(rid)
    assert rid not in stored.stored
    assert stored.strays == []


def test_the_tenant_is_user_and_friend_and_a_service_key_names_it(start_gateway, upstream, stored):
    gw = start_gateway()
    rid = sdk(gw, ALICE_KEY).responses.create(model="gpt-4.1", input="hi").id  # alice / tutor
    assert sdk(gw, SERVICE_KEY, **{"X-Memgate-User": "alice", "X-Memgate-Friend": "tutor"}).responses.retrieve(rid).id == rid
    with pytest.raises(openai.NotFoundError):  # the service key as itself
        sdk(gw, SERVICE_KEY).responses.retrieve(rid)
    with pytest.raises(openai.NotFoundError):  # alice with another friend
        sdk(gw, SERVICE_KEY, **{"X-Memgate-User": "alice", "X-Memgate-Friend": "coach"}).responses.retrieve(rid)
    # created for an end user by a service key: that end user's
    other = sdk(gw, SERVICE_KEY).responses.create(model="gpt-4.1", input="hi", user="dave")
    assert sdk(gw, SERVICE_KEY, **{"X-Memgate-User": "dave"}).responses.retrieve(other.id).id == other.id
    with pytest.raises(openai.NotFoundError):
        sdk(gw, ALICE_KEY).responses.retrieve(other.id)


def test_admin_keys_pass_and_unrecorded_ids_are_nobody_elses(start_gateway, upstream, stored):
    gw = start_gateway()
    rid = sdk(gw, ALICE_KEY).responses.create(model="gpt-4.1", input="hi").id
    admin = sdk(gw, ADMIN_KEY)
    assert admin.responses.retrieve(rid).id == rid
    # an id the gateway never handed out (made at the upstream directly)
    direct = stored.create({"input": "made elsewhere"})
    for key in (ALICE_KEY, BOB_KEY):
        with pytest.raises(openai.NotFoundError):
            sdk(gw, key).responses.retrieve(direct)
    assert admin.responses.retrieve(direct).id == direct
    follow = admin.responses.create(model="gpt-4.1", input="go on", previous_response_id=direct)
    assert stored.stored[follow.id]["previous_response_id"] == direct


def test_the_record_expires_with_the_upstreams_retention(start_gateway, upstream, stored):
    gw = start_gateway(upstream={"responses_retention_s": 3600})
    rid = sdk(gw, ALICE_KEY).responses.create(model="gpt-4.1", input="hi").id
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        key = f"{gw.config.memory.key_prefix}:responses:owner:{rid}"
        assert 0 < client.pttl(key) <= 3600 * 1000
        assert json.loads(client.get(key)) == {"user": "alice", "friend": "tutor", "from": None}
        client.delete(key)  # expired
    with pytest.raises(openai.NotFoundError):
        sdk(gw, ALICE_KEY).responses.retrieve(rid)


@pytest.mark.parametrize("path", [
    "/v1/responses/%2e%2e/input_items",
    "/v1/responses/%2E%2E",
    "/v1/responses/%2e%2e/cancel",
    "/v1/responses/.%2e/input_items",
    "/v1/responses/resp_1%2F..%2F..%2Fmodels",
    "/v1/responses/resp_1%2finput_items",
    "/v1/responses/%252e%252e/input_items",
    "/v1/responses/resp%00x",
    "/v1/responses/%ff",
])
@pytest.mark.parametrize("key", [ALICE_KEY, ADMIN_KEY])
def test_a_path_segment_never_climbs_out_of_the_responses_routes(start_gateway, upstream, stored, path, key):
    gw = start_gateway()
    method = "POST" if path.endswith("/cancel") else "GET"
    connection = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=20)
    try:
        connection.request(method, path, headers={"authorization": f"Bearer {key}"})  # the path as is
        reply = connection.getresponse()
        status, body = reply.status, json.loads(reply.read())
    finally:
        connection.close()
    assert status == 404, body
    assert body["error"]["type"] == "invalid_request_error"
    assert upstream.requests == []


def raw_get(gw, path: str, key: str) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=20)
    try:
        connection.request("GET", path, headers={"authorization": f"Bearer {key}"})  # the path as is
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


@pytest.mark.parametrize("path", [
    "/v1/models/%2e%2e/files", "/v1/models/x/../../files", "/v1/models/a%2F..%2F..%2Ffiles", "/v1/models/..",
    "/v1/models/x//files", "/v1/models/%ff",
])
def test_a_model_id_never_climbs_out_of_models(start_gateway, upstream, path):
    gw = start_gateway()
    status, body = raw_get(gw, path, ALICE_KEY)
    assert status == 404 and body["error"]["code"] == "model_not_found"
    assert upstream.requests == []


def test_a_model_id_with_a_slash_still_reaches_the_upstream(start_gateway, upstream):
    gw = start_gateway()
    raw_get(gw, "/v1/models/meta-llama/Llama-3-8B", ALICE_KEY)
    raw_get(gw, "/v1/models/ft:gpt-4o:org:abc", ALICE_KEY)
    assert [r.path for r in upstream.requests] == ["/v1/models/meta-llama/Llama-3-8B", "/v1/models/ft:gpt-4o:org:abc"]


def conversation_refused(client: openai.OpenAI, conv: str) -> list[dict]:
    """The 404 bodies of creates naming ``conv`` in both forms, stream and not."""
    bodies = []
    for attempt in (
        lambda: client.responses.create(model="gpt-4.1", input="what did we say?", conversation=conv),
        lambda: client.responses.create(model="gpt-4.1", input="what did we say?", conversation={"id": conv}),
        lambda: client.responses.create(model="gpt-4.1", input="what did we say?", conversation=conv, stream=True),
    ):
        with pytest.raises(openai.NotFoundError) as caught:
            attempt()
        bodies.append(caught.value.body)
    return bodies


def test_a_conversation_belongs_to_the_first_tenant_that_uses_it(start_gateway, upstream, stored):
    gw = start_gateway()
    alice, bob, admin = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY), sdk(gw, ADMIN_KEY)
    conv = stored.new_conversation()  # made by the operator at the upstream
    first = alice.responses.create(model="gpt-4.1", input="my secret plan", conversation=conv)
    assert first.id in stored.stored
    before = len(upstream.requests)

    bodies = conversation_refused(bob, conv)
    assert bodies == [{"message": f"Conversation with id '{conv}' not found.", "type": "invalid_request_error",
                       "param": "conversation", "code": None}] * 3
    assert len(upstream.requests) == before  # never reached the upstream
    # a service key naming another end user is another tenant too
    conversation_refused(sdk(gw, SERVICE_KEY, **{"X-Memgate-User": "carol"}), conv)

    # alice keeps using it, in both forms; admin keys pass without claiming it
    alice.responses.create(model="gpt-4.1", input="and then?", conversation={"id": conv})
    with alice.responses.stream(model="gpt-4.1", input="and then?", conversation=conv) as events:
        assert events.get_final_response().id in stored.stored
    admin.responses.create(model="gpt-4.1", input="audit", conversation=conv)
    alice.responses.create(model="gpt-4.1", input="still mine", conversation=conv)
    assert len(upstream.requests) == before + 4

    # whoever comes first claims: bob's own conversation is refused to alice
    mine = stored.new_conversation()
    bob.responses.create(model="gpt-4.1", input="hi", conversation={"id": mine})
    conversation_refused(alice, mine)
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        key = f"{gw.config.memory.key_prefix}:responses:conv:{conv}"
        assert json.loads(client.get(key)) == {"user": "alice", "friend": "tutor"}
        assert 0 < client.pttl(key) <= 30 * 86400 * 1000  # upstream.conversation_claims_ttl_s, default


def test_a_conversation_claim_lasts_its_ttl_after_its_last_use(start_gateway, upstream, stored):
    gw = start_gateway(upstream={"conversation_claims_ttl_s": 600})
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    conv = stored.new_conversation()
    alice.responses.create(model="gpt-4.1", input="my secret plan", conversation=conv)
    key = f"{gw.config.memory.key_prefix}:responses:conv:{conv}"
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        assert 0 < client.pttl(key) <= 600_000
        client.pexpire(key, 5_000)  # nearly over
        alice.responses.create(model="gpt-4.1", input="and then?", conversation=conv)
        assert 5_000 < client.pttl(key) <= 600_000  # her use restarted it
        conversation_refused(bob, conv)
        assert 5_000 < client.pttl(key)  # bob's refused tries did not
        client.delete(key)  # expired
    bob.responses.create(model="gpt-4.1", input="mine now", conversation=conv)  # the next user claims it
    conversation_refused(alice, conv)


@pytest.mark.parametrize("stream", [False, True])
def test_an_item_reference_to_another_tenants_item_is_not_found(start_gateway, upstream, stored, stream):
    gw = start_gateway()
    alice, bob, admin = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY), sdk(gw, ADMIN_KEY)
    if stream:
        with alice.responses.stream(model="gpt-4.1", input="my secret plan") as events:
            response = events.get_final_response()
    else:
        response = alice.responses.create(model="gpt-4.1", input="my secret plan")
    out_item = response.output[0].id
    assert out_item == stored.item_id(response.id) and out_item in stored.item_ids()
    in_item = stored.inputs[response.id][0]["id"]
    before = len(upstream.requests)

    for item in (out_item, in_item, "msg_never_made"):
        for streamed in (False, True):
            with pytest.raises(openai.NotFoundError) as caught:
                bob.responses.create(model="gpt-4.1", stream=streamed, input=[
                    {"role": "user", "content": "repeat this"}, {"type": "item_reference", "id": item}])
            assert caught.value.body == {"message": f"Item with id '{item}' not found.",
                                         "type": "invalid_request_error", "param": "input[1].id", "code": None}
    assert len(upstream.requests) == before  # never reached the upstream

    # alice refers to her output item; to an input item once the upstream listed it to her
    alice.responses.create(model="gpt-4.1", input=[{"type": "item_reference", "id": out_item}])
    with pytest.raises(openai.NotFoundError):
        alice.responses.create(model="gpt-4.1", input=[{"type": "item_reference", "id": in_item}])
    assert [i.id for i in alice.responses.input_items.list(response.id).data] == [in_item]
    alice.responses.create(model="gpt-4.1", input=[{"type": "item_reference", "id": in_item}])
    with pytest.raises(openai.NotFoundError):  # listing it made it alice's, not bob's
        bob.responses.create(model="gpt-4.1", input=[{"type": "item_reference", "id": in_item}])
    # an admin key passes, and its listing records nothing for the admin
    admin.responses.create(model="gpt-4.1", input=[{"type": "item_reference", "id": out_item}])
    admin.responses.input_items.list(response.id)
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        prefix = f"{gw.config.memory.key_prefix}:responses:item:"
        for item in (out_item, in_item):
            assert json.loads(client.get(prefix + item)) == {"user": "alice", "friend": "tutor"}
            assert 0 < client.pttl(prefix + item)
    assert stored.strays == []


@pytest.mark.parametrize(("extra", "param"), [
    ({"conversation": 12}, "conversation"),
    ({"conversation": {"id": None}}, "conversation.id"),
    ({"input": [{"type": "item_reference"}]}, "input[0].id"),
    ({"input": [{"role": "user", "content": "hi"}, {"type": "item_reference", "id": ["x"]}]}, "input[1].id"),
    ({"input": [{"type": "reasoning", "id": 7, "summary": []}]}, "input[0].id"),
    ({"input": [{"type": "mcp_approval_response", "approval_request_id": {}, "approve": True}]},
     "input[0].approval_request_id"),
])
def test_conversation_and_item_reference_types_are_checked(start_gateway, upstream, stored, extra, param):
    gw = start_gateway()
    with pytest.raises(openai.BadRequestError) as caught:
        sdk(gw, ALICE_KEY).responses.create(model="gpt-4.1", input="hi", extra_body=extra)
    assert caught.value.body["param"] == param
    assert upstream.requests == []


def test_item_and_conversation_records_work_on_a_redis_cluster(start_gateway, upstream, stored, redis_cluster_url):
    """Several item references in one create read keys of several hash slots."""
    gw = start_gateway(memory={"redis_url": redis_cluster_url, "cluster": True})
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    items = [alice.responses.create(model="gpt-4.1", input=f"note {n}").output[0].id for n in range(6)]
    refs = [{"type": "item_reference", "id": item} for item in items]
    conv = stored.new_conversation()
    alice.responses.create(model="gpt-4.1", input=refs, conversation=conv)
    before = len(upstream.requests)
    with pytest.raises(openai.NotFoundError) as caught:
        bob.responses.create(model="gpt-4.1", input=[*refs[:1], {"type": "item_reference", "id": "msg_x"}])
    assert caught.value.body["param"] == "input[0].id"
    conversation_refused(bob, conv)
    assert len(upstream.requests) == before
    # forgetting alice deletes records in every slot (a script call routed per key)
    with httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30) as admin:
        assert admin.post("/v1/admin/users/alice/forget").status_code == 200
    with pytest.raises(openai.NotFoundError):
        alice.responses.create(model="gpt-4.1", input=refs)
    bob.responses.create(model="gpt-4.1", input="mine now", conversation=conv)


@pytest.mark.parametrize("stream", [False, True])
def test_replayed_items_naming_another_tenants_items_are_not_found(start_gateway, upstream, stored, stream):
    """Any input item's ``id`` (a reasoning item, an output message, an item reference
    without ``type``) and an ``approval_request_id`` name a stored item the upstream looks
    up: only the tenant whose response produced it may send it."""
    gw = start_gateway()
    stored.reasoning = True  # non-stream replies: a reasoning item, then the message
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    reasoning = alice.responses.create(model="gpt-4.1", input="think about my plan").output[0]
    assert reasoning.type == "reasoning" and reasoning.id.startswith("rs_")
    if stream:
        with alice.responses.stream(model="gpt-4.1", input="my secret plan") as events:
            message = events.get_final_response().output[-1].id
    else:
        message = alice.responses.create(model="gpt-4.1", input="my secret plan").output[-1].id
    assert message in stored.item_ids()
    go_on = {"role": "user", "content": "go on"}
    replays = [
        ([{"type": "reasoning", "id": reasoning.id, "summary": []}, go_on], "input[0].id", reasoning.id),
        ([go_on, {"type": "message", "role": "assistant", "id": message, "status": "completed",
                  "content": [{"type": "output_text", "text": "noted", "annotations": []}]}], "input[1].id", message),
        ([go_on, {"id": message}], "input[1].id", message),
        ([{"type": "mcp_approval_response", "approval_request_id": message, "approve": True}],
         "input[0].approval_request_id", message),
        ([{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}", "id": "fc_never_made"}],
         "input[0].id", "fc_never_made"),
    ]
    before = len(upstream.requests)
    for items, param, named in replays:
        for streamed in (False, True):
            with pytest.raises(openai.NotFoundError) as caught:
                bob.responses.create(model="gpt-4.1", input=items, stream=streamed)
            assert caught.value.body == {"message": f"Item with id '{named}' not found.",
                                         "type": "invalid_request_error", "param": param, "code": None}
    assert len(upstream.requests) == before  # never reached the upstream

    for items, _, _ in replays[:3]:  # alice replays her own items
        alice.responses.create(model="gpt-4.1", input=items)
        assert upstream.responses_requests()[-1].json["input"] == items
    assert len(upstream.requests) == before + 3
    sdk(gw, ADMIN_KEY).responses.create(model="gpt-4.1", input=replays[0][0])  # admin keys pass


def responses_keys(gw) -> dict[str, bytes]:
    """Every key of the Responses records (``<p>:responses:*``) with its value (a dump)."""
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        keys = list(client.scan_iter(match=f"{gw.config.memory.key_prefix}:responses:*", count=500))
        return {k.decode(): client.dump(k) for k in keys}


def test_forgetting_a_user_deletes_their_responses_records_and_only_theirs(start_gateway, upstream, stored, monkeypatch):
    from gateway.proxy import responses_owners

    monkeypatch.setattr(responses_owners, "FORGET_BATCH", 2)  # several rounds of the index
    gw = start_gateway()
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    coach = sdk(gw, SERVICE_KEY, **{"X-Memgate-User": "alice", "X-Memgate-Friend": "coach"})
    mine, theirs = stored.new_conversation(), stored.new_conversation()
    first = alice.responses.create(model="gpt-4.1", input="my secret plan", conversation=mine)
    with alice.responses.stream(model="gpt-4.1", input="more", previous_response_id=first.id) as events:
        streamed = events.get_final_response()
    alice.responses.input_items.list(first.id)  # records the input item for alice
    other_friend = coach.responses.create(model="gpt-4.1", input="for the coach")
    kept = bob.responses.create(model="gpt-4.1", input="bob's plan", conversation=theirs)
    conversation_refused(alice, theirs)  # alice's index now names bob's claim: it must survive
    prefix = f"{gw.config.memory.key_prefix}:responses:"
    alices = {prefix + "owner:" + r.id for r in (first, streamed, other_friend)} \
        | {prefix + "item:" + r.output[0].id for r in (first, streamed, other_friend)} \
        | {prefix + "item:" + stored.inputs[first.id][0]["id"], prefix + "conv:" + mine, prefix + "user:alice"}
    bobs = {prefix + "owner:" + kept.id, prefix + "item:" + kept.output[0].id, prefix + "conv:" + theirs,
            prefix + "user:bob"}
    before = responses_keys(gw)
    assert set(before) == alices | bobs

    with httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30) as admin:
        assert admin.post("/v1/admin/users/alice/forget").status_code == 200
    assert responses_keys(gw) == {k: v for k, v in before.items() if k in bobs}  # bob's untouched

    for client, rid in ((alice, first.id), (alice, streamed.id), (coach, other_friend.id)):
        with pytest.raises(openai.NotFoundError):
            client.responses.retrieve(rid)
    assert bob.responses.retrieve(kept.id).id == kept.id
    conversation_refused(alice, theirs)
    bob.responses.create(model="gpt-4.1", input="free again", conversation=mine)  # alice's claim is gone


def test_items_first_seen_on_a_retrieve_are_the_owners(start_gateway, upstream, stored):
    """A ``background`` response's output items first appear in ``GET`` (or ``cancel``, or
    ``GET ?stream=true``): they are recorded for the response's owner there."""
    gw = start_gateway()
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    rid = stored.create({"input": "in the background"})  # its create's reply had no items yet
    own_response(gw, rid, "alice", "tutor")
    item = stored.item_id(rid)
    replay = [{"type": "item_reference", "id": item}]
    with pytest.raises(openai.NotFoundError):
        alice.responses.create(model="gpt-4.1", input=replay)
    with pytest.raises(openai.NotFoundError):
        bob.responses.retrieve(rid)
    assert [o.id for o in alice.responses.retrieve(rid).output] == [item]
    alice.responses.create(model="gpt-4.1", input=replay)
    with pytest.raises(openai.NotFoundError):
        bob.responses.create(model="gpt-4.1", input=replay)

    upstream.enqueue(SSEReply(fixture("responses_text"), pieces=50))
    events = list(alice.responses.retrieve(rid, stream=True))
    assert events[-1].type == "response.completed" and events[-1].response.output[0].id == FIXTURE_ITEM_ID
    with redis.Redis.from_url(gw.config.memory.redis_url) as client:
        key = f"{gw.config.memory.key_prefix}:responses:item:{FIXTURE_ITEM_ID}"
        assert json.loads(client.get(key)) == {"user": "alice", "friend": "tutor"} and client.pttl(key) > 0


def test_memgate_memories_forget_deletes_the_users_responses_records(start_gateway, upstream, stored, tmp_path):
    from click.testing import CliRunner

    from gateway.cli.main import main

    gw = start_gateway()
    alice, bob = sdk(gw, ALICE_KEY), sdk(gw, BOB_KEY)
    mine = alice.responses.create(model="gpt-4.1", input="my secret plan", conversation=stored.new_conversation())
    kept = bob.responses.create(model="gpt-4.1", input="bob's plan")
    before = responses_keys(gw)
    prefix = f"{gw.config.memory.key_prefix}:responses:"
    bobs = {prefix + "owner:" + kept.id, prefix + "item:" + kept.output[0].id, prefix + "user:bob"}
    assert len(before) == 4 + len(bobs)  # alice: owner, item, conversation, index
    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({"memory": {"redis_url": gw.config.memory.redis_url,
                                             "key_prefix": gw.config.memory.key_prefix}}))
    done = CliRunner().invoke(main, ["memories", "forget", "--config", str(config), "--user", "alice", "--yes"])
    assert done.exit_code == 0, done.output
    assert responses_keys(gw) == {k: v for k, v in before.items() if k in bobs}
    with pytest.raises(openai.NotFoundError):
        alice.responses.retrieve(mine.id)
