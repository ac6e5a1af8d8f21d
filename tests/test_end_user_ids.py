"""End-user ids (issue 9 item 4): one set of rules on every route, through the real
gateway (the real openai SDK on the chat route, httpx on the memory API)."""

from urllib.parse import quote

import httpx
import openai
import pytest

from tests.support import plugins as tp
from tests.support.gateway import ADMIN_KEY, SERVICE_KEY

MESSAGES = [{"role": "user", "content": "hi"}]


class Spy(tp.Recording):
    """Records the (user_id, friend_id) each chat call runs as."""

    name = "spy"
    seen: list = []

    async def rewrite_request(self, call, request):
        Spy.seen.append((call.principal.user_id, call.principal.friend_id))
        return request


@pytest.fixture
def gw(start_gateway, upstream):
    Spy.seen = []
    return start_gateway(registry={"spy": Spy}, plugins=[{"name": "spy"}])


def service_sdk(gw):
    return openai.OpenAI(base_url=gw.base_url, api_key=SERVICE_KEY, max_retries=0)


def http(gw, key, **headers):
    return httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}", **headers}, timeout=30)


@pytest.mark.parametrize("headers, body_user, param", [
    ({"X-Memgate-User": ""}, None, "X-Memgate-User"),  # was: the service key's own tenant
    ({"X-Memgate-Friend": ""}, None, "X-Memgate-Friend"),
    ({}, "", "user"),  # was: the service key's own tenant
    ({}, " alice", "user"),  # HTTP strips this from a header: it cannot be a distinct id
    ({}, "alice\n", "user"),
    ({"X-Memgate-User": "%20alice"}, None, "X-Memgate-User"),
    ({"X-Memgate-User": "caf%C3"}, None, "X-Memgate-User"),  # not UTF-8
])
def test_unusable_end_user_ids_are_400_naming_the_field(gw, upstream, headers, body_user, param):
    extra = {"user": body_user} if body_user is not None else {}
    with pytest.raises(openai.BadRequestError) as caught:
        service_sdk(gw).chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, extra_headers=headers, **extra
        )
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == param
    assert Spy.seen == [] and upstream.chat_requests() == []


def test_non_ascii_header_bytes_are_400_not_latin1_ids(gw, upstream):
    body = {"model": "gpt-4o-mini", "messages": MESSAGES}
    with http(gw, SERVICE_KEY) as client:
        reply = client.post("/v1/chat/completions", json=body, headers={"x-memgate-user": "café".encode()})
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == "X-Memgate-User"
    assert "percent-encoded" in reply.json()["error"]["message"]
    assert Spy.seen == []


def test_header_and_body_name_the_same_tenant(gw, upstream):
    sdk = service_sdk(gw)
    sdk.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, user="café/ü 1")
    sdk.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES,
                                extra_headers={"X-Memgate-User": quote("café/ü 1", safe="")})
    sdk.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES,
                                extra_headers={"X-Memgate-User": "100%25", "X-Memgate-Friend": "pal"})
    assert Spy.seen == [("café/ü 1", "default"), ("café/ü 1", "default"), ("100%", "pal")]


def test_memory_api_applies_the_same_rules(gw, upstream):
    with http(gw, SERVICE_KEY, **{"x-memgate-user": ""}) as empty:
        reply = empty.get("/v1/memories")
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "X-Memgate-User"
    with http(gw, SERVICE_KEY, **{"x-memgate-user": quote("zoë", safe="")}) as zoe:
        added = zoe.post("/v1/memories", json={"scope": "profile", "text": "likes tea"})
    assert added.status_code == 201, added.text
    assert added.json()["user_id"] == "zoë"
    assert added.json()["type"] == "semantic"  # the default type


def test_admin_routes_take_ids_with_a_slash(gw, upstream):
    user = "team/alice"
    path = f"/v1/admin/users/{quote(user, safe='')}"
    with http(gw, SERVICE_KEY, **{"x-memgate-user": quote(user, safe="")}) as service:
        added = service.post("/v1/memories", json={"scope": "profile", "type": "trait", "text": "plays chess"})
        assert added.status_code == 201 and added.json()["user_id"] == user
    with http(gw, ADMIN_KEY) as admin:
        exported = admin.get(f"{path}/export")
        assert exported.status_code == 200, exported.text
        lines = exported.text.splitlines()
        assert len(lines) == 1 and added.json()["id"] in lines[0]
        forgot = admin.post(f"{path}/forget")
        assert forgot.status_code == 200, forgot.text
        assert forgot.json() == {"user_id": user, "deleted": 1}
        assert admin.get(f"{path}/export").text == ""
        imported = admin.post(f"{path}/import", content=exported.content)
        assert imported.status_code == 200 and imported.json() == {"imported": 1}
        assert admin.get("/v1/admin/users/team/alice/export").text == exported.text  # raw slash too
        assert admin.post(f"{path}/explode").status_code == 404
        assert admin.post("/v1/admin/users/%20bob/forget").status_code == 400
