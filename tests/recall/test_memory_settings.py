"""Per-user memory settings (issue 14 item 1) end to end, through the real openai SDK:
a PUT changes recall on the very next request, locks and validation, admin routes, key
overrides, and show_tool_calls / show_thinking in a shape the SDK parses."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import quote

import httpx
import openai
import redis.asyncio as aioredis

from gateway.memory.records import Tenant
from gateway.proxy.keystore import RedisKeyStore
from tests.recall.conftest import REGISTRY, memory
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY, SERVICE_KEY
from tests.support.upstream_double import JSONReply, _default_reply

MISO_Q = "Tell me something about my cat Miso"
#: every hit is high relevance and injected: what reaches the upstream shows what was recalled
HYBRID = [
    {"name": "recall_report"},
    {"name": "auto_recall", "config": {"threshold": 0.0, "high_relevance_threshold": 0.0}},
    {"name": "hybrid_injection", "config": {"offer_tool": False}},
]
SPLICE = {"name": "tool_splice", "budget_ms": 60_000, "config": {"rounds": 1, "similarity_threshold": 0.0}}


def client(gw, key=ALICE_KEY, **headers):
    return openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0, default_headers=headers or None)


def ask(gw, key=ALICE_KEY, **fields):
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": MISO_Q}], **fields}
    return client(gw, key).chat.completions.create(**body)


def http(gw, method, path, key=ALICE_KEY, **kwargs):
    headers = {"authorization": f"Bearer {key}", **kwargs.pop("headers", {})}
    return httpx.request(method, gw.url + path, headers=headers, timeout=30, **kwargs)


def sent_text(upstream):
    """Everything the upstream's last chat request carried but the user's question."""
    messages = upstream.chat_requests()[-1].json["messages"]
    return json.dumps([m for m in messages if m.get("content") != MISO_Q])


def seed_miso(gw, seed):
    return seed(gw, Tenant("alice", "tutor"),
                memory("The user has a cat named Miso.", scope="profile", type="semantic"),
                memory("Miso the cat likes tuna and sunny windowsills.", scope="profile", type="semantic"),
                memory("Miso the cat was sick last week and went to the vet.", scope="event", type="episodic"))


def test_a_put_changes_recall_on_the_very_next_request_and_null_restores_it(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=HYBRID)
    seed_miso(gw, seed)
    ask(gw)
    assert "named Miso" in sent_text(upstream)  # the default: recall on (and now cached)

    put = http(gw, "PUT", "/v1/memory/settings", json={"recall_enabled": False})
    assert put.status_code == 200, put.text
    assert put.json()["settings"]["recall_enabled"] is False and put.json()["overrides"] == {"recall_enabled": False}
    ask(gw)
    assert "Miso" not in sent_text(upstream)  # no restart, no wait: the next request
    assert upstream.chat_requests()[-1].json["messages"] == [{"role": "user", "content": MISO_Q}]

    http(gw, "PUT", "/v1/memory/settings", json={"recall_enabled": None})
    ask(gw)
    assert "named Miso" in sent_text(upstream)
    # another user's settings are theirs
    http(gw, "PUT", "/v1/memory/settings", key=BOB_KEY, json={"recall_enabled": False})
    ask(gw)
    assert "named Miso" in sent_text(upstream)


def test_the_seed_000_switch_auto_recall_turns_the_search_off(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=HYBRID)
    seed_miso(gw, seed)
    http(gw, "PUT", "/v1/memory/settings", json={"auto_recall": False})
    ask(gw)
    assert "Miso" not in sent_text(upstream)


def test_a_high_similarity_threshold_recalls_fewer_memories(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=HYBRID)
    seed_miso(gw, seed)
    ask(gw)
    assert sent_text(upstream).count("Miso") == 3
    http(gw, "PUT", "/v1/memory/settings", json={"similarity_threshold": 0.99})
    ask(gw)
    assert sent_text(upstream).count("Miso") == 0


def test_topk_settings_cap_what_tool_splice_splices(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=[SPLICE])
    seed_miso(gw, seed)

    def spliced():
        tool = upstream.chat_requests()[-1].json["messages"][-1]
        assert tool["role"] == "tool"
        result = json.loads(tool["content"])
        return len(result["profiles"]), len(result["events"])

    ask(gw)
    assert spliced() == (2, 1)
    http(gw, "PUT", "/v1/memory/settings", json={"profile_topk": 1})
    ask(gw)
    assert spliced() == (1, 1)


def test_recall_rounds_bounds_the_recall_agent(start_gateway, upstream, seed):
    plans = []

    def reply(rec):
        if "response_format" in (rec.json or {}):  # the memory model plans: always one more query
            plans.append(rec.json)
            query = f"more about Miso {len(plans)}"
            content = json.dumps({"queries": [query], "done": False})
            return JSONReply({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})
        return _default_reply(rec)

    upstream.default = reply
    gw = start_gateway(registry=REGISTRY, plugins=[{**SPLICE, "config": {**SPLICE["config"], "rounds": 5}}])
    seed_miso(gw, seed)
    http(gw, "PUT", "/v1/memory/settings", json={"recall_rounds": 2})
    ask(gw)
    assert len(plans) == 1  # round 1 direct, one plan, round 2, stop
    http(gw, "PUT", "/v1/memory/settings", json={"recall_rounds": 1})
    ask(gw)
    assert len(plans) == 1


def test_show_tool_calls_and_show_thinking_reach_the_sdk(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=[{"name": "recall_report"}, SPLICE])
    seed_miso(gw, seed)
    assert (ask(gw).model_extra or {}).get("memgate") is None  # off by default
    http(gw, "PUT", "/v1/memory/settings", json={"show_tool_calls": True, "show_thinking": True})

    reply = ask(gw)
    assert reply.choices[0].message.content is not None  # standard fields parse as usual
    report = reply.model_extra["memgate"]
    (call,) = report["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "recall_memory"
    assert json.loads(call["function"]["arguments"]) == {"query": MISO_Q}
    sent = upstream.chat_requests()[-1].json["messages"]
    assert call["id"] == sent[-1]["tool_call_id"] and call["result"] == sent[-1]["content"]
    (thinking,) = report["thinking"]
    assert thinking["plugin"] == "tool_splice" and thinking["steps"][0]["round"] == 1
    assert thinking["steps"][0]["queries"] == [MISO_Q]

    chunks = list(client(gw).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": MISO_Q}], stream=True))
    reports = [c.model_extra["memgate"] for c in chunks if (c.model_extra or {}).get("memgate")]
    assert len(reports) == 1 and reports[0]["tool_calls"][0]["function"]["name"] == "recall_memory"

    http(gw, "PUT", "/v1/memory/settings", json={"show_tool_calls": False})
    report = ask(gw).model_extra["memgate"]
    assert "tool_calls" not in report and "tool_splice" not in report and report["thinking"]


def test_validation_names_the_field_and_locked_fields_are_403(start_gateway, upstream):
    gw = start_gateway(registry=REGISTRY, plugins=HYBRID,
                       settings={"defaults": {"recall_rounds": 2}, "locked": ["recall_rounds"]})
    cases = [({"recall_roundz": 2}, "recall_roundz"), ({"profile_topk": 11}, "profile_topk"),
             ({"similarity_threshold": -0.1}, "similarity_threshold"), ({"show_thinking": "yes"}, "show_thinking"),
             ({"event_topk": 2.5}, "event_topk")]
    for body, param in cases:
        r = http(gw, "PUT", "/v1/memory/settings", json=body)
        assert r.status_code == 400, (body, r.text)
        error = r.json()["error"]
        assert error["type"] == "invalid_request_error" and error["param"] == param, error
    r = http(gw, "PUT", "/v1/memory/settings", json={"recall_rounds": 4, "profile_topk": 2})
    assert r.status_code == 403 and r.json()["error"]["param"] == "recall_rounds"
    view = http(gw, "GET", "/v1/memory/settings").json()
    assert view == {
        "object": "memory.settings", "user_id": "alice", "friend_id": "tutor",
        "settings": {"recall_enabled": True, "recall_rounds": 2, "profile_topk": 5, "event_topk": 5,
                     "similarity_threshold": 0.5, "show_tool_calls": False, "show_thinking": False,
                     "auto_recall": True, "personalization": True, "inference": True},
        "overrides": {}, "locked": ["recall_rounds"],
        "bounds": {"recall_rounds": {"minimum": 1, "maximum": 5}, "profile_topk": {"minimum": 1, "maximum": 10},
                   "event_topk": {"minimum": 1, "maximum": 10}, "similarity_threshold": {"minimum": 0.0, "maximum": 1.0}},
        "in_use": {"similarity_threshold": {"auto_recall": 0.0, "hybrid_injection": 0.3}},  # nobody set it
    }


def test_admin_routes_read_and_change_any_users_settings(start_gateway, upstream):
    gw = start_gateway(registry=REGISTRY, plugins=HYBRID)
    user = "team/dana"
    path = f"/v1/admin/users/{quote(user, safe='')}/settings"
    r = http(gw, "PUT", path, key=ADMIN_KEY, params={"friend_id": "coach"}, json={"event_topk": 3})
    assert r.status_code == 200, r.text
    assert (r.json()["user_id"], r.json()["friend_id"], r.json()["overrides"]) == (user, "coach", {"event_topk": 3})
    got = http(gw, "GET", path, key=ADMIN_KEY, params={"friend_id": "coach"}).json()
    assert got["settings"]["event_topk"] == 3
    assert http(gw, "GET", path, key=ADMIN_KEY, params={"friend_id": "other"}).json()["overrides"] == {}
    assert http(gw, "GET", path, key=ALICE_KEY, params={"friend_id": "coach"}).status_code == 403
    missing = http(gw, "GET", path, key=ADMIN_KEY)
    assert missing.status_code == 400 and missing.json()["error"]["param"] == "friend_id"
    wrong = http(gw, "POST", path, key=ADMIN_KEY, params={"friend_id": "coach"})
    assert wrong.status_code == 405 and set(wrong.headers["allow"].replace(" ", "").split(",")) == {"GET", "PUT"}
    # a service key's end user, through the headers (gateway/proxy/auth.py rules)
    mine = http(gw, "GET", "/v1/memory/settings", key=SERVICE_KEY,
                headers={"x-memgate-user": quote(user, safe=""), "x-memgate-friend": "coach"}).json()
    assert (mine["user_id"], mine["settings"]["event_topk"]) == (user, 3)


def test_key_overrides_sit_between_yaml_defaults_and_the_users_values(start_gateway, upstream, seed, redis_url):
    gw = start_gateway(registry=REGISTRY, plugins=HYBRID, settings={"defaults": {"profile_topk": 4}})
    seed_miso(gw, seed)

    async def mint():
        redis = aioredis.from_url(redis_url)
        try:
            store = RedisKeyStore(redis, gw.config.memory.key_prefix)
            key, _ = await store.create("alice", "tutor", settings={"recall_enabled": False, "profile_topk": 2})
            return key
        finally:
            await redis.aclose()

    key = asyncio.run(mint())
    ask(gw, key=key)
    assert "Miso" not in sent_text(upstream)  # the key's override
    view = http(gw, "GET", "/v1/memory/settings", key=key).json()
    assert view["settings"]["recall_enabled"] is False and view["settings"]["profile_topk"] == 2
    assert view["overrides"] == {}
    assert http(gw, "GET", "/v1/memory/settings").json()["settings"]["profile_topk"] == 4  # config key: yaml default
    http(gw, "PUT", "/v1/memory/settings", key=key, json={"recall_enabled": True})  # the user's value wins
    ask(gw, key=key)
    assert "named Miso" in sent_text(upstream)


def test_settings_unreachable_fail_open_to_the_defaults_and_say_so(start_gateway, upstream, tmp_path):
    from gateway.runtime.redis_server import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    try:
        gw = start_gateway(registry=REGISTRY, plugins=HYBRID, memory={"redis_url": server.url},
                           settings={"defaults": {"recall_rounds": 2}})
        server.stop()
        raw = client(gw).chat.completions.with_raw_response.create(
            model="gpt-4o", messages=[{"role": "user", "content": MISO_Q}])
        assert raw.http_response.status_code == 200
        assert "settings:unavailable" in raw.headers["x-memgate-degraded"].split(",")
        assert upstream.chat_requests()[-1].json["messages"] == [{"role": "user", "content": MISO_Q}]
        assert http(gw, "GET", "/v1/memory/settings").status_code == 503  # the route itself: retryable
    finally:
        server.stop()


def test_recall_rounds_bounds_the_memory_search_loop(start_gateway, upstream, seed):
    from tests.recall.conftest import TOOL_CHAIN as CHAIN
    from tests.recall.test_e2e_tool_loop import LOW_Q, SCIFI, search_call, tool_call_completion

    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    seed(gw, Tenant("alice", "tutor"), memory(SCIFI))

    def rounds_asked():
        upstream.reset()
        upstream.enqueue(*(JSONReply(tool_call_completion(search_call(f"q{i}"))) for i in range(6)))
        ask(gw, messages=[{"role": "user", "content": LOW_Q}])
        return [r.json.get("tool_choice") for r in upstream.chat_requests()]

    assert rounds_asked() == [None, None, None, "none"]  # hybrid_injection's max_rounds: 3
    http(gw, "PUT", "/v1/memory/settings", json={"recall_rounds": 1})
    assert rounds_asked() == [None, "none"]


def test_the_personalization_switch_and_recall_enabled_both_turn_personalization_off(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=[{"name": "personalization"}])
    seed(gw, Tenant("alice", "tutor"), memory("The user wants concise answers.", type="preference"))
    ask(gw)
    assert "Be concise" in sent_text(upstream)
    http(gw, "PUT", "/v1/memory/settings", json={"personalization": False})
    ask(gw)
    assert "concise" not in sent_text(upstream)
    http(gw, "PUT", "/v1/memory/settings", json={"personalization": None, "recall_enabled": False})
    ask(gw)
    assert "concise" not in sent_text(upstream)


def test_forgetting_a_user_erases_their_settings(start_gateway, upstream):
    gw = start_gateway(registry=REGISTRY, plugins=HYBRID)
    http(gw, "PUT", "/v1/memory/settings", json={"recall_rounds": 1})
    assert http(gw, "POST", "/v1/admin/users/alice/forget", key=ADMIN_KEY).status_code == 200
    assert http(gw, "GET", "/v1/memory/settings").json()["overrides"] == {}
