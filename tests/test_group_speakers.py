"""Memory per speaker in group chats (issue 16 item 7), through the real gateway: the real
openai SDK as the group bot, the in-serve memorization worker, real Redis; only the
upstream model is a double."""

from __future__ import annotations

import json
import time
import unicodedata
import uuid
from urllib.parse import quote

import httpx
import openai
import pytest
from click.testing import CliRunner

from gateway.cli.main import main
from gateway.config import ClientConfig
from gateway.speakers.group import speaker_user_id
from tests.support import plugins as tp
from tests.support.gateway import SERVICE_KEY, make_config

GROUP_KEY = "sk-test-group-0123456789"
CLIENTS = [
    {"key": GROUP_KEY, "user_id": "groupbot", "friend_id": "kiki", "service": True, "group": True,
     "key_id": "group"},
    {"key": SERVICE_KEY, "user_id": "backend", "service": True, "key_id": "svc"},
]
RECALL = [
    {"name": "auto_recall", "config": {"limit": 5, "threshold": 0.2, "high_relevance_threshold": 0.3}},
    {"name": "hybrid_injection", "config": {"placement": "separate"}},
]
SYSTEM = {"role": "system", "content": "You are Kiki, the group's assistant."}
BIKE = "I keep my bike locked in the blue shed behind the bakery."
VIOLIN = "My sister Greta teaches violin lessons in Porto every Tuesday."


class Bot:
    """The group bot: asks through the openai SDK, reads memories through the memory API."""

    def __init__(self, gw):
        self.gw = gw

    def ask(self, messages, *, stream=False, key=GROUP_KEY, **extra):
        client = openai.OpenAI(base_url=self.gw.base_url, api_key=key, max_retries=0)
        if stream:
            chunks = client.chat.completions.create(model="gpt-4o", messages=messages, stream=True, **extra)
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        return client.chat.completions.create(model="gpt-4o", messages=messages, **extra).choices[0].message.content

    def records(self, user_id, key=GROUP_KEY):
        """``user_id``'s memory records (named with X-Memgate-User), as the API lists them."""
        headers = {"authorization": f"Bearer {key}", "x-memgate-user": quote(user_id, safe="")}
        reply = httpx.get(self.gw.url + "/v1/memories", headers=headers, params={"limit": 500}, timeout=30)
        assert reply.status_code == 200, reply.text
        return reply.json()["items"]

    def memories(self, user_id, key=GROUP_KEY):
        """``(text, user_id, scope)`` of ``user_id``'s memories."""
        return [(m["text"], m["user_id"], m["scope"]) for m in self.records(user_id, key)]

    def wait_for(self, user_id, text, key=GROUP_KEY):
        deadline = time.monotonic() + 60  # generous (a loaded machine): polling a condition, no timing assertion
        while not any(t == text for t, _, _ in self.memories(user_id, key)):
            assert time.monotonic() < deadline, f"{text!r} was not memorized for {user_id!r}"
            time.sleep(0.1)


@pytest.fixture
def bot(start_gateway, upstream):
    memorize = {"mode": "verbatim", "queue": {"key_prefix": "q" + uuid.uuid4().hex[:10]},  # own dedupe sets
                "worker": {"block_ms": 50},  # a stopping gateway waits for a blocked read (1 s by default)
                # whole turns: these tests are about whose memory a turn lands in (questions included, as
                # sync points); what a turn forms is tests/memorization/test_disclosure.py's subject
                "verbatim_formation": "turn"}
    return Bot(start_gateway(clients=CLIENTS, plugins=[*RECALL, {"name": "memorize", "config": memorize}]))


def said(name, text):
    return {"role": "user", "name": name, "content": text}


def injected(upstream) -> str:
    """The system messages the upstream got on the last call, minus the client's own."""
    sent = upstream.chat_requests()[-1].json["messages"]
    return "\n".join(m["content"] for m in sent if m["role"] == "system" and m != SYSTEM)


@pytest.mark.parametrize("stream", [False, True])
def test_two_speakers_in_one_group_each_recall_only_their_own(bot, upstream, stream):
    bot.ask([SYSTEM, said("alice", BIKE), said("bob", VIOLIN)], stream=stream, user="g1")
    bot.wait_for("groupbot/alice", BIKE)
    bot.wait_for("groupbot/bob", VIOLIN)
    assert [t for t, _, _ in bot.memories("groupbot/alice")] == [BIKE]  # bob's turn is not alice's
    assert [t for t, _, _ in bot.memories("groupbot/bob")] == [VIOLIN]
    assert bot.memories("groupbot") == []  # nothing under the namespace itself
    assert not bot.records("groupbot/bob")[0]["context"]  # bob spoke first: no other speaker's text as context

    # the window slides (the group's first message is gone): the same turns are not memorized again
    bot.ask([SYSTEM, said("bob", VIOLIN), said("alice", "Where did I leave my bike, in which shed?")],
        stream=stream, user="g1")
    assert "blue shed" in injected(upstream)
    assert "Greta" not in injected(upstream)
    bot.ask([SYSTEM, said("alice", BIKE), said("bob", "Which city does my sister teach violin in?")],
        stream=stream, user="g1")
    assert "Porto" in injected(upstream) and "blue shed" not in injected(upstream)
    bot.ask([SYSTEM, said("bob", "Where is the bike locked, in which shed?")], stream=stream, user="g1")
    assert "blue shed" not in injected(upstream)  # alice's memory, bob asking about it
    bot.wait_for("groupbot/alice", "Where did I leave my bike, in which shed?")
    bot.wait_for("groupbot/bob", "Where is the bike locked, in which shed?")
    assert [t for t, _, _ in bot.memories("groupbot/alice")].count(BIKE) == 1
    assert [t for t, _, _ in bot.memories("groupbot/bob")].count(VIOLIN) == 1


def test_a_speakers_profile_fact_follows_them_into_another_group_and_bot(bot, upstream):
    fact = "I'm allergic to peanuts."
    bot.ask([SYSTEM, said("carol", fact), said("dave", "I'm vegetarian, no meat for me.")],
        extra_headers={"x-memgate-conversation-id": "group-one"})
    bot.wait_for("groupbot/carol", fact)
    assert ("I'm allergic to peanuts.", "groupbot/carol", "profile") in bot.memories("groupbot/carol")
    question = "Any food allergies I should tell the waiter about, peanuts maybe?"
    bot.ask([SYSTEM, said("erin", "lunch at noon?"), said("carol", question)], stream=True,
        extra_headers={"x-memgate-conversation-id": "group-two", "x-memgate-friend": "otherbot"})
    assert "allergic to peanuts" in injected(upstream)
    assert "vegetarian" not in injected(upstream)
    bot.ask([SYSTEM, said("dave", question)], extra_headers={"x-memgate-conversation-id": "group-two"})
    assert "allergic to peanuts" not in injected(upstream)


#: Names a group member could pick, all accepted, each its own tenant (NFC aside).
HOSTILE = ["../alice", "alice/..", "*", "{}", "groupbot/alice", "ALICE", "小明", "a/b", "/", "%2F",
           "x" * 64, "zo\u00eb"]


def test_hostile_names_stay_in_their_own_tenant(bot, upstream):
    codes = {name: f"My locker code is {4000 + n}." for n, name in enumerate(HOSTILE)}
    bot.ask([SYSTEM, said("alice", "My locker code is 1234."),
         *(said(name, code) for name, code in codes.items())], user="g9")
    bot.wait_for("groupbot/alice", "My locker code is 1234.")
    for name, code in codes.items():
        user_id = speaker_user_id("groupbot", name)
        bot.wait_for(user_id, code)
        assert bot.memories(user_id) == [(code, user_id, "event")], name
    assert bot.memories("groupbot/alice") == [("My locker code is 1234.", "groupbot/alice", "event")]
    assert len({speaker_user_id("groupbot", n) for n in HOSTILE} | {"groupbot/alice"}) == len(HOSTILE) + 1
    # a namespace with a slash (named by the service key's header) never meets a name with one
    bot.ask([SYSTEM, said("b", "My locker code is 9999.")], extra_headers={"x-memgate-user": quote("groupbot/a", safe="")})
    bot.wait_for("groupbot/a/b", "My locker code is 9999.")
    assert bot.memories(speaker_user_id("groupbot", "a/b")) == [(codes["a/b"], "groupbot/a%2Fb", "event")]

    bot.ask([SYSTEM, said("alice", "What is my locker code?")], user="g9")
    recalled = injected(upstream)
    assert "1234" in recalled and not any(code[-5:-1] in recalled for code in codes.values())
    # canonically equivalent spellings are one speaker (NFC); case is not folded
    bot.ask([SYSTEM, said(unicodedata.normalize("NFD", "zoë"), "What is my locker code?")], stream=True)
    assert codes["zoë"] in injected(upstream) and "1234" not in injected(upstream)
    bot.ask([SYSTEM, said("Alice", "What is my locker code?")])
    assert "1234" not in injected(upstream) and codes["ALICE"] not in injected(upstream)


@pytest.mark.parametrize("messages, param", [
    ([said("", "hi")], "messages[0].name"),
    ([said("a\u0000b", "hi")], "messages[0].name"),
    ([said("a\nb", "hi")], "messages[0].name"),
    ([said("x" * 65, "hi")], "messages[0].name"),
    ([said(" alice", "hi")], "messages[0].name"),
    ([said(7, "hi")], "messages[0].name"),
    ([said("alice", "hi"), said("bob\u0007", "hey"), said("carol", "yo")], "messages[1].name"),
    ([said("alice", "hi"), {"role": "user", "content": "who am I?"}], "messages[1].name"),
    ([said(None, "who am I?")], "messages[0].name"),
    ([SYSTEM], "messages"),
])
@pytest.mark.parametrize("stream", [False, True])
def test_unusable_names_are_400_naming_the_message(bot, upstream, messages, param, stream):
    with pytest.raises(openai.BadRequestError) as caught:
        bot.ask(messages, stream=stream)
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == param
    assert upstream.chat_requests() == []


def test_a_group_keys_namespace_is_its_user_or_the_header_never_the_body_user(bot, upstream):
    bot.ask([SYSTEM, said("alice", BIKE)], user="alice")  # a bot that sends the sender as `user`
    bot.wait_for("groupbot/alice", BIKE)
    bot.ask([SYSTEM, said("alice", VIOLIN)], extra_headers={"x-memgate-user": "tenant-2"})
    bot.wait_for("tenant-2/alice", VIOLIN)
    assert bot.memories("alice/alice") == [] and bot.memories("tenant-2/alice") == [(VIOLIN, "tenant-2/alice", "event")]


def test_a_non_group_service_key_is_unchanged(bot, upstream):
    bot.ask([SYSTEM, said("alice", BIKE), said("bob", VIOLIN)], key=SERVICE_KEY, user="team")
    bot.wait_for("team", VIOLIN, key=SERVICE_KEY)
    bot.wait_for("team", BIKE, key=SERVICE_KEY)
    assert bot.memories("team/alice", key=SERVICE_KEY) == []
    bot.ask([SYSTEM, {"role": "user", "content": "where is the bike?"}], key=SERVICE_KEY, user="team")  # no name needed
    assert "blue shed" in injected(upstream)


def test_group_keys_are_minted_by_the_cli_and_act_as_speakers(tmp_path, redis_url, upstream, start_gateway):
    config = tmp_path / "gateway.yaml"
    prefix = "t" + uuid.uuid4().hex[:12]
    config.write_text(json.dumps({"memory": {"redis_url": redis_url, "key_prefix": prefix}}))
    runner = CliRunner()
    refused = runner.invoke(main, ["keys", "create", "--config", str(config), "--user", "lark", "--friend", "kiki", "--group"])
    assert refused.exit_code == 1 and "--group needs --service" in refused.output
    created = runner.invoke(main, ["keys", "create", "--config", str(config), "--user", "lark", "--friend", "kiki",
                                   "--service", "--group"])
    assert created.exit_code == 0, created.output
    minted = json.loads(created.stdout)
    assert (minted["service"], minted["group"]) == (True, True)
    listed = runner.invoke(main, ["keys", "list", "--config", str(config)])
    assert json.loads(listed.stdout.splitlines()[0])["group"] is True

    class Spy(tp.Recording):
        name = "spy"
        seen: list = []

        async def rewrite_request(self, call, request):
            Spy.seen.append((call.principal.user_id, call.principal.friend_id, call.principal.namespace))
            return request

    gw = start_gateway(registry={"spy": Spy}, plugins=[{"name": "spy"}], memory={"key_prefix": prefix})
    client = openai.OpenAI(base_url=gw.base_url, api_key=minted["key"], max_retries=0)
    client.chat.completions.create(model="gpt-4o", messages=[said(None, "hey"), said("ann", "hi"), said("小明", "hello")])
    assert Spy.seen == [("lark/小明", "kiki", "lark")]


def test_group_without_service_is_refused_in_the_config():
    with pytest.raises(ValueError, match="needs `service: true`"):
        ClientConfig(key="k", user_id="bot", group=True)


def test_an_ordinary_key_inside_a_group_namespace_is_refused_at_start_up(redis_url):
    clients = [{"key": "k-group", "user_id": "groupbot", "service": True, "group": True},
               {"key": "k-alice", "user_id": "groupbot/alice"}]
    with pytest.raises(ValueError, match=r"clients.1.user_id: 'groupbot/alice' is inside the speaker namespace"):
        make_config("http://127.0.0.1:9", redis_url, clients=clients)
    make_config("http://127.0.0.1:9", redis_url, clients=[clients[0], {"key": "k-b", "user_id": "groupbot-alice"}])


def test_a_group_key_on_the_responses_api_is_refused_naming_input(bot, upstream):
    client = openai.OpenAI(base_url=bot.gw.base_url, api_key=GROUP_KEY, max_retries=0)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-4o-mini", input="hi, I'm alice", user="g1")
    assert caught.value.body["param"] == "input" and "chat/completions" in caught.value.body["message"]
    assert upstream.responses_requests() == []


async def _mcp_texts(gw, key, user_id):
    """Texts ``list_memories`` returns over MCP for the group key acting as ``user_id``."""
    from tests.test_mcp import call, http_session

    async with http_session(gw, key, **{"x-memgate-user": quote(user_id, safe="")}) as session:
        listed = await call(session, "list_memories")
    return sorted(m["text"] for m in listed["items"])


def test_speakers_are_reachable_by_api_and_mcp_and_forgetting_the_group_forgets_them(start_gateway, upstream):
    """The README's way (X-Memgate-User: groupbot%2Falice on the group key) reaches a
    speaker's memories over REST and MCP; an admin forget of the namespace ``groupbot``
    erases every speaker's, and nobody else's."""
    import asyncio

    from tests.support.gateway import ADMIN_KEY

    memorize = {"mode": "verbatim", "queue": {"key_prefix": "q" + uuid.uuid4().hex[:10]}}
    admin = {"key": ADMIN_KEY, "user_id": "ops", "admin": True, "key_id": "ops"}
    bot = Bot(start_gateway(clients=[*CLIENTS, admin], plugins=[*RECALL, {"name": "memorize", "config": memorize}]))
    bot.ask([SYSTEM, said("alice", BIKE), said("bob", VIOLIN)], user="g9")
    bot.wait_for("groupbot/alice", BIKE)
    bot.wait_for("groupbot/bob", VIOLIN)
    assert asyncio.run(_mcp_texts(bot.gw, GROUP_KEY, "groupbot/alice")) == [BIKE]
    other = httpx.post(bot.gw.url + "/v1/memories", json={"text": "a backend note", "type": "semantic", "scope": "profile"},
                       headers={"authorization": f"Bearer {SERVICE_KEY}", "x-memgate-user": "groupbotter"}, timeout=30)
    assert other.status_code in (200, 201), other.text
    forgot = httpx.post(bot.gw.url + "/v1/admin/users/groupbot/forget",
                        headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=60)
    assert forgot.status_code == 200, forgot.text
    assert forgot.json()["deleted"] == 2
    assert bot.memories("groupbot/alice") == [] and bot.memories("groupbot/bob") == []
    assert asyncio.run(_mcp_texts(bot.gw, GROUP_KEY, "groupbot/bob")) == []
    assert [t for t, _, _ in bot.memories("groupbotter", key=SERVICE_KEY)] == ["a backend note"]
