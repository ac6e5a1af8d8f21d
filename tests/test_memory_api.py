"""The memory REST API end to end: scoped to the caller's key, admin routes, errors."""

import json

import httpx
import pytest

from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY, SERVICE_KEY


def client(gw, key):
    return httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}"}, timeout=30)


def test_add_get_list_search_patch_delete(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice:
        created = alice.post("/v1/memories", json={"scope": "profile", "type": "preference",
                                                  "text": "Alice prefers concise answers with code comments"})
        assert created.status_code == 201, created.text
        record = created.json()
        assert record["user_id"] == "alice" and record["friend_id"] is None
        event = alice.post("/v1/memories", json={"scope": "event", "type": "episodic",
                                                "text": "Alice moved to Lisbon in March", "keywords": ["move"]}).json()
        assert event["friend_id"] == "tutor"
        assert alice.get(f"/v1/memories/{record['id']}").json()["text"] == record["text"]
        page = alice.get("/v1/memories", params={"limit": 1}).json()
        assert len(page["items"]) == 1 and page["next_cursor"]
        hits = alice.post("/v1/memories/search", json={"query": "where does Alice live now?", "top_k": 2}).json()
        assert hits["data"][0]["record"]["id"] == event["id"]
        assert 0 <= hits["data"][0]["score"] <= 1
        patched = alice.patch(f"/v1/memories/{event['id']}", json={"text": "Alice moved to Porto in March"})
        assert patched.status_code == 200 and patched.json()["text"].endswith("Porto in March")
        assert alice.delete(f"/v1/memories/{event['id']}").status_code == 204
        assert alice.get(f"/v1/memories/{event['id']}").status_code == 404


def test_memories_are_scoped_to_the_callers_key(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice, client(gw, BOB_KEY) as bob:
        secret = alice.post("/v1/memories", json={"scope": "profile", "type": "semantic",
                                                 "text": "Alice's bank PIN hint is her cat's name"}).json()
        assert bob.get(f"/v1/memories/{secret['id']}").status_code == 404
        assert bob.get("/v1/memories").json()["items"] == []
        found = bob.post("/v1/memories/search", json={"query": "bank PIN hint cat"}).json()["data"]
        assert found == []
        assert bob.delete(f"/v1/memories/{secret['id']}").status_code == 404
        assert alice.get(f"/v1/memories/{secret['id']}").status_code == 200


def test_service_key_acts_for_the_named_end_user(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, SERVICE_KEY) as service:
        service.headers["x-memgate-user"] = "end-user-5"
        added = service.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "likes jazz"}).json()
        assert added["user_id"] == "end-user-5"


@pytest.mark.parametrize("body, status", [
    ({"scope": "everything", "type": "trait", "text": "x"}, 400),
    ({"scope": "profile", "type": "dream", "text": "x"}, 400),
    ({"scope": "profile", "type": "trait", "text": ""}, 400),
    ({"scope": "profile", "type": "trait", "text": "x", "importance": 7}, 400),
])
def test_bad_memories_are_refused_with_the_envelope(start_gateway, upstream, body, status):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice:
        response = alice.post("/v1/memories", json=body)
        assert response.status_code == status
        assert set(response.json()["error"]) == {"message", "type", "param", "code"}


def test_oversized_text_and_malformed_ids(start_gateway, upstream):
    gw = start_gateway(memory={"max_text_chars": 50})
    with client(gw, ALICE_KEY) as alice:
        big = alice.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "x" * 51})
        assert big.status_code in (413, 422) and "error" in big.json()
        bad = alice.get("/v1/memories/not-an-id!")
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
        assert alice.get("/v1/memories").status_code == 200


def test_admin_export_import_and_forget(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice, client(gw, ADMIN_KEY) as admin:
        for text in ("Alice plays the cello", "Alice is allergic to peanuts"):
            alice.post("/v1/memories", json={"scope": "profile", "type": "semantic", "text": text})
        assert alice.get("/v1/admin/users/alice/export").status_code == 403
        exported = admin.get("/v1/admin/users/alice/export")
        lines = [json.loads(line) for line in exported.text.splitlines()]
        assert sorted(r["text"] for r in lines) == ["Alice is allergic to peanuts", "Alice plays the cello"]
        forgotten = admin.post("/v1/admin/users/alice/forget").json()
        assert forgotten == {"user_id": "alice", "deleted": 2}
        assert alice.get("/v1/memories").json()["items"] == []
        imported = admin.post("/v1/admin/users/alice/import", content=exported.content)
        assert imported.json() == {"imported": 2}
        again = {r["id"] for r in alice.get("/v1/memories").json()["items"]}
        assert again == {r["id"] for r in lines}
        wrong = admin.post("/v1/admin/users/bob/import", content=exported.content)
        assert wrong.status_code == 422


def test_openapi_schema_is_served(start_gateway, upstream):
    gw = start_gateway()
    schema = httpx.get(gw.url + "/openapi/openapi.json", timeout=30).json()
    assert "/v1/memories/search" in schema["paths"]
    admin = schema["paths"]["/v1/admin/users/{target}"]  # {user_id}/export|import|forget
    assert {"get", "post"} <= set(admin)


def test_patch_of_text_recomputes_its_keywords(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice:
        made = alice.post("/v1/memories", json={"scope": "profile", "type": "semantic",
                                               "text": "Alice moved to Lisbon in March",
                                               "keywords": ["lisbon", "relocation"]}).json()
        alice.patch(f"/v1/memories/{made['id']}", json={"text": "Alice moved to Porto in May"})
        assert alice.get(f"/v1/memories/{made['id']}").json()["keywords"] == [
            "relocation", "alice", "moved", "porto", "may"]
        kept = alice.patch(f"/v1/memories/{made['id']}", json={"text": "Alice lives in Porto", "keywords": ["home"]})
        assert kept.json()["keywords"] == ["home"]  # keywords given in the same PATCH win


SEARCH_TEXTS = [
    "Alice's dog Rex loves the beach",
    "Alice adopted a puppy last spring",
    "Alice walks her pet every morning",
    "Alice's cat sleeps on the sofa",
    "Alice bought dog food in bulk",
    "Rex is also the name of Alice's favourite dinosaur toy",
]


def test_search_score_is_the_score_hits_are_ranked_by(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice:
        for text in SEARCH_TEXTS:
            alice.post("/v1/memories", json={"scope": "profile", "type": "semantic", "text": text})
        hits = alice.post("/v1/memories/search", json={"query": "Rex my puppy", "top_k": 6}).json()["data"]
    scores = [h["score"] for h in hits]
    similarities = [h["similarity"] for h in hits]
    assert scores == sorted(scores, reverse=True)  # the order is the score's
    assert similarities != sorted(similarities, reverse=True)  # fusion reordered the cosines
    assert all(0 < s <= 1 for s in scores) and all(0 <= s <= 1 for s in similarities)


def test_search_threshold_applies_to_similarity(start_gateway, upstream):
    gw = start_gateway()
    with client(gw, ALICE_KEY) as alice:
        for text in SEARCH_TEXTS:
            alice.post("/v1/memories", json={"scope": "profile", "type": "semantic", "text": text})
        hits = alice.post("/v1/memories/search", json={"query": "Rex my puppy", "top_k": 6, "threshold": 0.3}).json()["data"]
    assert hits and all(h["similarity"] >= 0.3 for h in hits)


def test_patch_of_text_drops_the_spans_of_the_old_texts_statements(start_gateway, upstream):
    gw = start_gateway()
    text = "I moved to Lisbon in March. My daughter is allergic to peanuts."
    with client(gw, ALICE_KEY) as alice:
        made = alice.post("/v1/memories", json={"scope": "profile", "type": "semantic", "text": text,
                                               "metadata": {"statements": [[0, 27], [28, len(text)]], "kind": "turn"}}).json()
        edited = alice.patch(f"/v1/memories/{made['id']}", json={"text": "I live in Porto. My daughter is allergic to nuts."})
        assert edited.status_code == 200, edited.text
        assert "statements" not in edited.json()["metadata"] and edited.json()["metadata"]["kind"] == "turn"
        # metadata given in the same PATCH is the caller's
        given = alice.patch(f"/v1/memories/{made['id']}", json={"text": "I live in Faro.",
                                                                  "metadata": {"statements": [[0, 4], [5, 15]]}})
        assert given.json()["metadata"] == {"statements": [[0, 4], [5, 15]]}
