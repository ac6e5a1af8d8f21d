"""The console's admin API (gateway/api/admin/console_api.py) end to end on a real gateway: admin
keys only, every route names its user and keeps the store's tenancy, search explains its
hits, supersede history, keys over HTTP, queue and dead letters, stats, the recall
inspector (never calls the upstream); and the console's static files."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import redis

from gateway.api.admin.console_api import explain_hit, message_origins
from gateway.memorization.keys import QueueKeys
from gateway.memory.records import MemoryRecord, ScoredMemory
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY


def client(gw, key=ADMIN_KEY):
    return httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}"}, timeout=30)


ROUTES = [
    ("GET", "/v1/admin/users", None), ("GET", "/v1/admin/memories?user_id=bob", None),
    ("POST", "/v1/admin/memories/search", {"user_id": "bob", "query": "x"}),
    ("PATCH", "/v1/admin/memories/" + "0" * 32 + "?user_id=bob", {"text": "x"}),
    ("DELETE", "/v1/admin/memories/" + "0" * 32 + "?user_id=bob", None),
    ("GET", "/v1/admin/memories/" + "0" * 32 + "/history?user_id=bob", None),
    ("GET", "/v1/admin/keys", None), ("POST", "/v1/admin/keys", {"user_id": "alice"}),
    ("POST", "/v1/admin/keys/bob/revoke", None), ("GET", "/v1/admin/queue", None),
    ("GET", "/v1/admin/queue/dead", None), ("POST", "/v1/admin/queue/dead/1-0/retry", None),
    ("DELETE", "/v1/admin/queue/dead/1-0", None), ("GET", "/v1/admin/stats", None),
    ("POST", "/v1/admin/recall/inspect", {"user_id": "bob", "messages": [{"role": "user", "content": "hi"}]}),
]


def test_every_admin_route_refuses_other_keys(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice, httpx.Client(base_url=gw.url, timeout=30) as anonymous:
        for method, path, body in ROUTES:
            refused = alice.request(method, path, json=body)
            assert refused.status_code == 403, (method, path, refused.text)
            assert refused.json()["error"]["code"] == "permission_denied"
            assert anonymous.request(method, path, json=body).status_code == 401, (method, path)


def test_users_list_friends_counts_and_pages(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice, client(gw) as admin:
        alice.post("/v1/memories", json={"scope": "event", "type": "episodic", "text": "Alice met the tutor"})
        alice.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "Alice is curious"})
        users = {u["user_id"]: u for u in admin.get("/v1/admin/users").json()["data"]}
        assert users["alice"] == {"user_id": "alice", "friends": ["tutor"], "memories": 2, "keys": 1}
        assert users["bob"]["memories"] == 0  # a key owner without memories is listed
        first = admin.get("/v1/admin/users", params={"limit": 2}).json()
        rest = admin.get("/v1/admin/users", params={"limit": 100, "cursor": first["next_cursor"]}).json()
        assert [u["user_id"] for u in first["data"] + rest["data"]] == sorted(users)
        assert rest["next_cursor"] is None
        assert [u["user_id"] for u in admin.get("/v1/admin/users", params={"q": "LIC"}).json()["data"]] == ["alice"]


def test_an_admin_sees_exactly_what_the_users_key_for_that_friend_sees(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice, client(gw, BOB_KEY) as bob, client(gw) as admin:
        mine = alice.post("/v1/memories", json={"scope": "event", "type": "episodic", "text": "Alice's tutor session"}).json()
        profile = alice.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "Alice likes maths"}).json()
        bob.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "Bob likes maths"})
        as_tutor = admin.get("/v1/admin/memories", params={"user_id": "alice", "friend_id": "tutor"}).json()["data"]
        own = alice.get("/v1/memories").json()["items"]
        assert [m["id"] for m in as_tutor] == [m["id"] for m in own] == [profile["id"], mine["id"]]
        other_friend = admin.get("/v1/admin/memories", params={"user_id": "alice", "friend_id": "coach"}).json()["data"]
        assert [m["id"] for m in other_friend] == [profile["id"]]  # events are per friend
        assert [m["id"] for m in admin.get("/v1/admin/memories", params={"user_id": "alice"}).json()["data"]] == [profile["id"]]
        # writes are scoped the same way: another friend cannot touch the event
        assert admin.delete(f"/v1/admin/memories/{mine['id']}", params={"user_id": "alice", "friend_id": "coach"}).status_code == 404
        assert admin.delete(f"/v1/admin/memories/{mine['id']}", params={"user_id": "bob", "friend_id": "tutor"}).status_code == 404
        patched = admin.patch(f"/v1/admin/memories/{mine['id']}", params={"user_id": "alice", "friend_id": "tutor"},
                              json={"text": "Alice's second tutor session"})
        assert patched.status_code == 200 and alice.get(f"/v1/memories/{mine['id']}").json()["text"] == "Alice's second tutor session"
        assert admin.delete(f"/v1/admin/memories/{mine['id']}", params={"user_id": "alice", "friend_id": "tutor"}).status_code == 204
        assert alice.get(f"/v1/memories/{mine['id']}").status_code == 404
        bad = admin.get("/v1/admin/memories", params={"user_id": " alice"})
        assert bad.status_code == 400 and bad.json()["error"]["param"] == "user_id"


def test_list_filters_by_type_scope_and_time(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice, client(gw) as admin:
        old = alice.post("/v1/memories", json={"scope": "event", "type": "episodic", "text": "Alice went to school",
                                              "occurred_at": "2001-05-01T00:00:00Z"}).json()
        new = alice.post("/v1/memories", json={"scope": "profile", "type": "goal", "text": "Alice wants a PhD"}).json()
        ids = lambda **p: [m["id"] for m in admin.get("/v1/admin/memories", params={"user_id": "alice", "friend_id": "tutor", **p}).json()["data"]]  # noqa: E731
        assert ids(type="goal") == [new["id"]] and ids(scope="event") == [old["id"]]
        assert ids(occurred_before="2010-01-01T00:00:00Z") == [old["id"]]
        assert ids(occurred_after="2010-01-01T00:00:00Z") == [new["id"]]


def test_search_explains_each_hit(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice, client(gw) as admin:
        moved = alice.post("/v1/memories", json={"scope": "event", "type": "episodic", "text": "Alice moved to Lisbon in March",
                                                "occurred_at": (datetime.now(UTC) - timedelta(days=10)).isoformat()}).json()
        alice.post("/v1/memories", json={"scope": "profile", "type": "preference", "text": "Alice prefers tea"})
        # cosine -0.07 to the query with all-MiniLM-L6-v2 (clamped to 0): ranked in as a filler of top_k
        unrelated = alice.post("/v1/memories", json={"scope": "profile", "type": "semantic",
                                                    "text": "hydraulic pump pressure valve maintenance schedule"}).json()
        body = {"user_id": "alice", "friend_id": "tutor", "query": "Where does Alice live, Lisbon?"}
        hits = admin.post("/v1/admin/memories/search", json=body).json()["data"]
        own = alice.post("/v1/memories/search", json={"query": body["query"], "top_k": 10}).json()["data"]
        assert unrelated["id"] in [h["record"]["id"] for h in own if h["similarity"] == 0]
        assert [h["record"]["id"] for h in hits] == [h["record"]["id"] for h in own if h["similarity"] > 0]
        assert unrelated["id"] not in [h["record"]["id"] for h in hits]  # no cosine-0 hit listed
        top = hits[0]
        assert top["record"]["id"] == moved["id"]
        why = top["why"]
        assert why["semantic"] == top["similarity"] and {"lisbon", "alice"} <= set(why["keyword_terms"])
        assert 9.9 < why["age_days"] < 10.1 and why["ranking"] == "hybrid"
        assert admin.post("/v1/admin/memories/search", json={**body, "friend_id": "coach", "scopes": ["event"]}).json()["data"] == []


def test_explain_hit_is_pure_and_counts_keyword_share():
    now = datetime(2026, 1, 11, tzinfo=UTC)
    record = MemoryRecord(id="0" * 32, user_id="u", friend_id=None, scope="profile", type="semantic", text="Likes green tea",
                          keywords=["beverage"], importance=0.5, occurred_at=now - timedelta(days=2), created_at=now,
                          updated_at=now, source="manual", confidence=1.0)
    why = explain_hit(ScoredMemory(record=record, score=0.9, similarity=0.7), ["tea", "beverage", "coffee"], False, now).why
    assert why.keyword_terms == ["tea", "beverage"] and why.keyword_share == pytest.approx(2 / 3)
    assert why.semantic == 0.7 and why.age_days == 2.0 and why.ranking == "vector"
    allergy = record.model_copy(update={"text": "I am allergic to the peanuts", "keywords": []})
    stemmed = explain_hit(ScoredMemory(record=allergy, score=0.9, similarity=0.7), ["peanut", "allergic", "tea"], True, now).why
    assert stemmed.keyword_terms == ["peanut", "allergic"]  # compared stemmed, as the BM25 index does


def test_history_follows_the_supersede_chain_both_ways(start_gateway, upstream):
    gw = start_gateway()
    ids = [uuid.uuid4().hex for _ in range(3)]
    at = "2026-01-01T00:00:00Z"
    base = {"user_id": "alice", "friend_id": None, "scope": "profile", "type": "semantic", "importance": 0.5,
            "occurred_at": at, "created_at": at, "updated_at": at, "source": "manual", "confidence": 1.0}
    lines = [
        {**base, "id": ids[0], "text": "Alice lives in Lisbon", "superseded_by": ids[1], "retired": True, "retired_reason": "moved"},
        {**base, "id": ids[1], "text": "Alice lives in Porto", "supersedes": ids[0], "superseded_by": ids[2], "retired": True},
        {**base, "id": ids[2], "text": "Alice lives in Braga", "supersedes": ids[1]},
    ]
    with client(gw) as admin:
        imported = admin.post("/v1/admin/users/alice/import", content="\n".join(json.dumps(line) for line in lines))
        assert imported.json() == {"imported": 3}
        for middle in ids:
            chain = admin.get(f"/v1/admin/memories/{middle}/history", params={"user_id": "alice"}).json()["data"]
            assert [m["id"] for m in chain] == ids
        assert admin.get(f"/v1/admin/memories/{ids[0]}/history", params={"user_id": "bob"}).status_code == 404


def test_keys_are_minted_listed_and_revoked_over_http(start_gateway, upstream):
    gw = start_gateway(auth={"cache_ttl_s": 0})
    with client(gw) as admin:
        made = admin.post("/v1/admin/keys", json={"user_id": "dave", "friend_id": "coach", "allowed_models": ["gpt-4o*"]})
        assert made.status_code == 201
        key = made.json()
        assert key["key"].startswith("mgk-") and key["source"] == "store" and key["revoked_at"] is None
        with client(gw, key["key"]) as dave:
            assert dave.post("/v1/memories", json={"scope": "event", "text": "Dave met the coach"}).json()["friend_id"] == "coach"
            listed = admin.get("/v1/admin/keys").json()["data"]
            assert key["key"] not in json.dumps(listed)
            row = next(k for k in listed if k["key_id"] == key["key_id"])
            assert row["user_id"] == "dave" and row["allowed_models"] == ["gpt-4o*"]
            assert {k["key_id"] for k in listed if k["source"] == "config"} >= {"alice", "ops"}
            revoked = admin.post(f"/v1/admin/keys/{key['key_id']}/revoke").json()
            assert revoked["revoked_at"] is not None
            assert dave.get("/v1/memories").status_code == 401
        config_key = admin.post("/v1/admin/keys/alice/revoke")
        assert config_key.status_code == 403 and "config key" in config_key.json()["error"]["message"]
        assert admin.post("/v1/admin/keys/k_nope/revoke").status_code == 404
        assert admin.post("/v1/admin/keys", json={"user_id": "dave", "allowed_models": []}).status_code == 400
        assert admin.post("/v1/admin/keys", json={"user_id": ""}).json()["error"]["param"] == "user_id"


def test_a_group_key_with_its_plugins_is_minted_over_http(start_gateway, upstream):
    gw = start_gateway(plugins=[{"name": "context_selection", "enabled": False}])
    with client(gw) as admin:
        made = admin.post("/v1/admin/keys", json={
            "user_id": "groupbot", "friend_id": "kiki", "service": True, "group": True,
            "plugins": {"context_selection": {"enabled": True, "config": {"bot_names": ["Kiki"]}}}})
        assert made.status_code == 201, made.text
        assert made.json()["group"] is True
        row = next(k for k in admin.get("/v1/admin/keys").json()["data"] if k["key_id"] == made.json()["key_id"])
        assert row["group"] is True and row["service"] is True
        with client(gw, made.json()["key"]) as bot:
            body = {"model": "gpt-4o", "messages": [{"role": "user", "name": "ann", "content": "hi there"}]}
            assert bot.post("/v1/chat/completions", json=body).status_code == 200
        bad = admin.post("/v1/admin/keys", json={"user_id": "x", "plugins": {"nope": {"enabled": True}}})
        assert bad.status_code == 404 and bad.json()["error"]["param"] == "plugins.nope", bad.text
        bad = admin.post("/v1/admin/keys", json={"user_id": "x", "plugins": {"context_selection": {"config": {"relevance_threshold": 9}}}})
        assert bad.status_code == 400 and bad.json()["error"]["param"].startswith("plugins.context_selection"), bad.text
        implied = admin.post("/v1/admin/keys", json={"user_id": "y", "group": True})  # a group key is a service key
        assert implied.status_code == 201 and implied.json()["service"] is True, implied.text


def _job(user, text):
    now = datetime.now(UTC).isoformat()
    return json.dumps({"job_id": uuid.uuid4().hex, "user_id": user, "friend_id": "tutor", "enqueued_at": now, "attempt": 4,
                       "turns": [{"role": "user", "text": text, "hash": uuid.uuid4().hex, "at": now, "index": 0}]})


def test_queue_status_and_dead_letters_inspect_retry_drop(start_gateway, upstream, redis_url):
    prefix = "q" + uuid.uuid4().hex[:10]
    gw = start_gateway(plugins=[{"name": "memorize", "config": {"queue": {"key_prefix": prefix}, "worker": {"in_serve": 0}}}])
    with redis.Redis.from_url(redis_url) as r, client(gw) as admin:
        good = r.xadd(QueueKeys(prefix).dead(0), {"job": _job("alice", "I live in Lisbon"), "error": "model said no", "entry": "5-0"}).decode()
        junk = r.xadd(QueueKeys(prefix).dead(0), {"job": "{not json", "error": "unreadable job", "entry": "6-0"}).decode()
        status = admin.get("/v1/admin/queue").json()["data"]
        assert [(q["prefix"], q["dead"], q["length"]) for q in status] == [(prefix, 2, 0)]
        letters = admin.get("/v1/admin/queue/dead").json()["data"]
        assert [(d["id"], d["user_id"], d["error"]) for d in letters] == [(good, "alice", "model said no"), (junk, None, "unreadable job")]
        assert letters[0]["job"]["turns"][0]["text"] == "I live in Lisbon" and letters[1]["job"] == "{not json"
        unreadable = admin.post(f"/v1/admin/queue/dead/{junk}/retry")
        assert unreadable.status_code == 422
        retried = admin.post(f"/v1/admin/queue/dead/{good}/retry").json()
        entries = r.xrange(QueueKeys(prefix).stream(0))
        assert [e[0].decode() for e in entries] == [retried["requeued_as"]]
        requeued = json.loads(entries[0][1][b"j"])
        assert requeued["attempt"] == 0 and requeued["turns"][0]["text"] == "I live in Lisbon"
        assert admin.post(f"/v1/admin/queue/dead/{good}/retry").status_code == 404
        assert admin.delete(f"/v1/admin/queue/dead/{junk}").status_code == 204
        assert admin.delete(f"/v1/admin/queue/dead/{junk}").status_code == 404
        assert r.xlen(QueueKeys(prefix).dead(0)) == 0
        assert admin.get("/v1/admin/queue/dead/", params={"queue": "nope"}).status_code == 404
        assert admin.get("/v1/admin/queue/dead", params={"queue": "nope"}).status_code == 404
        assert admin.post("/v1/admin/queue/dead/bogus/retry").status_code == 400
        # ids a Redis stream cannot hold (past 2**64 - 1): a clear 400 naming the id, never a 500
        for dead_id in ("18446744073709551616-0", "99999999999999999999-0", "1-99999999999999999999"):
            for reply in (admin.post(f"/v1/admin/queue/dead/{dead_id}/retry"), admin.delete(f"/v1/admin/queue/dead/{dead_id}")):
                assert reply.status_code == 400, reply.text
                assert reply.json()["error"]["param"] == "dead_id"
        # the largest id the pattern accepts is a plain 404
        assert admin.delete("/v1/admin/queue/dead/9999999999999999999-9999999999999999999").status_code == 404
        assert admin.delete("/v1/admin/queue/dead/1-0@9999").status_code == 404


def test_queue_routes_without_memorization(start_gateway, upstream):
    gw = start_gateway()
    with client(gw) as admin:
        assert admin.get("/v1/admin/queue").json()["data"] == []
        assert admin.get("/v1/admin/queue/dead").status_code == 404


def test_stats_count_types_and_read_recall_latency_and_degradations(start_gateway, upstream):
    gw = start_gateway(plugins=[{"name": "auto_recall"}, {"name": "hybrid_injection"}])
    with client(gw, ALICE_KEY) as alice, client(gw) as admin:
        for kind, text in (("trait", "Alice is brave"), ("trait", "Alice is kind"), ("goal", "Alice wants to climb")):
            alice.post("/v1/memories", json={"scope": "profile", "type": kind, "text": text})
        before = admin.get("/v1/admin/stats").json()
        assert before["memories"]["by_type"]["trait"] == 2 and before["memories"]["by_type"]["goal"] == 1
        assert before["memories"]["total"] == 3 and before["memories"]["truncated"] is False
        assert before["recall"]["count"] == 0
        alice.post("/v1/chat/completions", json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]})
        after = admin.get("/v1/admin/stats").json()
        assert after["recall"]["count"] == 1 and after["recall"]["p50_ms"] is not None
    gw.gateway.telemetry.metrics.inc("memgate_degraded_total", plugin="auto_recall", reason="timeout")
    with client(gw) as admin:
        assert admin.get("/v1/admin/stats").json()["degradations"] == [{"plugin": "auto_recall", "reason": "timeout", "count": 1}]


def test_the_recall_inspector_shows_what_would_be_recalled_and_sent_without_the_upstream(start_gateway, upstream):
    gw = start_gateway(plugins=[
        {"name": "recall_report"},
        {"name": "auto_recall", "config": {"threshold": 0.1, "high_relevance_threshold": 0.3}},
        {"name": "hybrid_injection"}, {"name": "memorize", "config": {"worker": {"in_serve": 0}}},
    ])
    with client(gw, ALICE_KEY) as alice, client(gw) as admin:
        moved = alice.post("/v1/memories", json={"scope": "event", "type": "episodic", "text": "Alice moved to Lisbon in March"}).json()
        messages = [{"role": "system", "content": "You are a tutor."}, {"role": "user", "content": "Where did I move in March? Lisbon?"}]
        out = admin.post("/v1/admin/recall/inspect", json={"user_id": "alice", "friend_id": "tutor", "messages": messages})
        assert out.status_code == 200, out.text
        out = out.json()
        assert out["plugins"] == ["recall_report", "auto_recall", "hybrid_injection", "memorize"]
        assert [(m["id"], m["text"]) for m in out["recalled"]] == [(moved["id"], "Alice moved to Lisbon in March")]
        assert [(i["id"], i["owner"]) for i in out["injected"]] == [(moved["id"], "hybrid_injection")]
        assert [m["origin"] for m in out["messages"]] == ["client", "injected", "client"]
        assert "Lisbon" in out["messages"][1]["message"]["content"]
        assert out["memorization"] == {"text": "Where did I move in March? Lisbon?", "formed": [], "dropped": "question"}
        told = [{"role": "user", "content": "I moved to Lisbon in March, any good cafés nearby?"}]
        preview = admin.post("/v1/admin/recall/inspect", json={"user_id": "alice", "messages": told}).json()["memorization"]
        assert preview["formed"] == [{"text": "I moved to Lisbon in March", "scope": "profile", "type": "semantic",
                                      "slot": "residence", "statements": ["I moved to Lisbon in March"]}] and preview["dropped"] is None
        # a message that tells two things forms one memory of two statements (a change retires one)
        two = [{"role": "user", "content": "I moved to Lisbon in March. My daughter is allergic to peanuts. Any cafés?"}]
        preview = admin.post("/v1/admin/recall/inspect", json={"user_id": "alice", "messages": two}).json()["memorization"]
        assert [f["statements"] for f in preview["formed"]] == [["I moved to Lisbon in March.", "My daughter is allergic to peanuts."]]
        tokens = out["tokens"]
        assert tokens["after"] > tokens["before"] > 0 and tokens["injected"] == tokens["after"] - tokens["before"]
        # the other friend does not see alice's tutor events
        other = admin.post("/v1/admin/recall/inspect", json={"user_id": "alice", "friend_id": "coach", "messages": messages}).json()
        assert other["recalled"] == [] and [m["origin"] for m in other["messages"]] == ["client", "client"]
        bad = admin.post("/v1/admin/recall/inspect", json={"user_id": "alice", "messages": [{"content": "no role"}]})
        assert bad.status_code == 400
        # the user's settings apply: with recall off for alice/tutor nothing is recalled
        assert admin.put("/v1/admin/users/alice/settings", params={"friend_id": "tutor"},
                         json={"recall_enabled": False}).status_code == 200
        off = admin.post("/v1/admin/recall/inspect", json={"user_id": "alice", "friend_id": "tutor", "messages": messages}).json()
        assert off["recalled"] == [] and [m["origin"] for m in off["messages"]] == ["client", "client"]
    assert upstream.chat_requests() == []  # nothing went to the model, nothing was memorized
    assert gw.gateway.memorizations[0].buffered == 0


def test_the_inspector_runs_a_recall_agent_but_never_sends_the_chat_call(start_gateway, upstream):
    """tool_splice's recall agent asks the memory model what to recall (its own model
    client): that runs as on a real request, since it decides what is recalled; the chat
    call itself never goes upstream."""
    gw = start_gateway(plugins=[{"name": "tool_splice", "config": {"model": {"model": "gpt-4o-mini"}}}])
    with client(gw, ALICE_KEY) as alice, client(gw) as admin:
        alice.post("/v1/memories", json={"scope": "profile", "type": "preference", "text": "Alice prefers tea"})
        out = admin.post("/v1/admin/recall/inspect", json={
            "user_id": "alice", "friend_id": "tutor", "messages": [{"role": "user", "content": "What do I like to drink?"}]})
    assert out.status_code == 200
    sent = [r.json for r in upstream.chat_requests()]
    assert sent and all("response_format" in body for body in sent)  # the recall agent's calls only
    assert out.json()["messages"][0]["message"] == {"role": "user", "content": "What do I like to drink?"}


@pytest.mark.parametrize("original, sent, expected", [
    ([{"role": "user", "content": "a"}], [{"role": "system", "content": "m"}, {"role": "user", "content": "a"}], ["injected", "client"]),
    ([{"role": "system", "content": "s"}, {"role": "user", "content": "a"}],
     [{"role": "system", "content": "s\n\nm"}, {"role": "user", "content": "a"}], ["changed", "client"]),
    ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
     [{"role": "user", "content": "b"}, {"role": "assistant", "content": "t"}], ["client", "injected"]),
])
def test_message_origins(original, sent, expected):
    assert message_origins(original, sent) == expected


def test_the_console_is_served_uncached_with_a_strict_content_security_policy(start_gateway, upstream):
    gw = start_gateway()
    with httpx.Client(base_url=gw.url, timeout=30) as anonymous:
        page = anonymous.get("/console/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert "no-store" in page.headers["cache-control"]
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert ADMIN_KEY not in page.text and '<script type="module" src="/console/app.js">' in page.text
        assert anonymous.get("/console").text == page.text  # assets are absolute: no trailing slash needed
        for asset in ("app.js", "api.js", "dom.js", "pages.js", "ui.js", "console.css"):
            served = anonymous.get("/console/" + asset)
            assert served.status_code == 200 and "no-store" in served.headers["cache-control"], asset
        assert "javascript" in anonymous.get("/console/app.js").headers["content-type"]
        scripts = "".join(anonymous.get(f"/console/{n}.js").text for n in ("app", "api", "dom", "pages", "ui"))
        assert "innerHTML" not in scripts and "insertAdjacentHTML" not in scripts and "http://" not in scripts


def test_message_origins_with_repeated_messages():
    """Identical client messages each match once, in order; a dropped one is skipped."""
    same = {"role": "user", "content": "again"}
    original = [same] * 2_000 + [{"role": "user", "content": "last"}]
    sent = [{"role": "system", "content": "memory"}] * 2_000 + [same] * 1_999 + [{"role": "user", "content": "last"}]
    origins = message_origins(original, sent)
    assert origins == ["injected"] * 2_000 + ["client"] * 2_000


def test_dead_letters_of_any_queue_shard_are_listed_retried_and_dropped(start_gateway, upstream, redis_url):
    prefix = "q" + uuid.uuid4().hex[:10]
    keys = QueueKeys(prefix, 3)
    gw = start_gateway(plugins=[{"name": "memorize", "config": {"queue": {"key_prefix": prefix, "shards": 3},
                                                                 "worker": {"in_serve": 0}}}])
    with redis.Redis.from_url(redis_url) as r, client(gw) as admin:
        r.xadd(keys.dead(2), {"job": _job("alice", "shard two"), "error": "boom", "entry": "7-0@2"})
        r.xadd(keys.dead(0), {"job": _job("bob", "shard zero"), "error": "bang", "entry": "8-0"})
        letters = admin.get("/v1/admin/queue/dead").json()["data"]
        assert sorted((d["id"].partition("@")[2], d["error"]) for d in letters) == [("", "bang"), ("2", "boom")]
        two = next(d["id"] for d in letters if d["error"] == "boom")
        retried = admin.post(f"/v1/admin/queue/dead/{two}/retry").json()
        assert retried["requeued_as"].endswith("@2") and r.xlen(keys.stream(2)) == 1 and r.xlen(keys.dead(2)) == 0
        assert admin.delete(f"/v1/admin/queue/dead/{two}").status_code == 404
        assert admin.delete(f"/v1/admin/queue/dead/{two.partition('@')[0]}@9").status_code == 404  # no shard 9


def test_the_inspectors_formation_preview_of_a_long_message_runs_off_the_event_loop(monkeypatch):
    """A last user message over OFF_LOOP_CHARS is analysed in a worker thread (as the memorize
    worker does), a short one on the loop: the same preview either way."""
    import asyncio
    import threading

    from gateway.api.admin import console_api

    threads: list[threading.Thread] = []
    real = console_api.analyse

    def spy(text):
        threads.append(threading.current_thread())
        return real(text)

    monkeypatch.setattr(console_api, "analyse", spy)
    told = "I moved to Lisbon in March, any good cafés nearby?"
    long = told + " " + "x" * console_api.OFF_LOOP_CHARS

    async def run(text):
        return await console_api.preview_off_loop([{"role": "user", "content": text}])

    short = asyncio.run(run(told))
    assert threads[-1] is threading.main_thread()
    assert short["formed"][0]["text"] == "I moved to Lisbon in March"
    big = asyncio.run(run(long))
    assert threads[-1] is not threading.main_thread()
    assert big["text"] == long[:2000]
