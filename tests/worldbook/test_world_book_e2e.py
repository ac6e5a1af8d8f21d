"""Role-play conversations through the real gateway and the real ``openai`` SDK (issue 12,
done when): world-book entries trigger, stay sticky, cool down and are injected at their
configured position and depth, stream and not, in English and Chinese. Assertions are on
what the upstream double received."""

import asyncio

import openai
import pytest
import redis.asyncio as aioredis

from gateway.lorebook.model import Lorebook, LoreEntry
from gateway.lorebook.repository import LorebookRepository
from tests.support.gateway import ALICE_KEY, BOB_KEY

CHAIN = [{"name": "world_book", "config": {"scan_depth": 1, "random_seed": 1}}]
SYSTEM = {"role": "system", "content": "You are Luna, a silver fox spirit guarding the shrine."}


def put(redis_url, prefix, *books):
    async def write():
        client = aioredis.Redis.from_url(redis_url)
        try:
            for book in books:
                await LorebookRepository(client, prefix).put(book)
        finally:
            await client.aclose()
    asyncio.run(write())


def ask(client, messages, stream, conversation=None):
    headers = {"x-memgate-conversation-id": conversation} if conversation else None
    if stream:
        chunks = client.chat.completions.create(model="gpt-4o", messages=messages, stream=True, extra_headers=headers)
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return client.chat.completions.create(model="gpt-4o", messages=messages, extra_headers=headers).choices[0].message.content


@pytest.fixture
def gateway(start_gateway):
    return start_gateway(plugins=CHAIN)


def lore(gw, redis_url, entries, user=None):
    put(redis_url, gw.config.memory.key_prefix, Lorebook(id="shrine", friend_id="tutor", user_id=user, entries=tuple(entries)))


def texts(request):
    return [(m["role"], m["content"]) for m in request.json["messages"]]


@pytest.mark.parametrize("stream", [False, True])
def test_english_role_play_triggers_sticks_cools_down_and_injects_at_depth(gateway, upstream, redis_url, stream):
    lore(gateway, redis_url, [
        LoreEntry(id="fox", content="[Luna is nine centuries old.]", is_constant=True),
        LoreEntry(id="moon", content="[The Moon Gate opens only at midnight.]", keywords=("moon gate",),
                  sticky=3, cooldown=3, position="depth", depth=1, role="system"),
    ])
    alice = openai.OpenAI(base_url=gateway.base_url, api_key=ALICE_KEY, max_retries=0)
    chat = [SYSTEM, {"role": "user", "content": "Where is the Moon Gate?"}]
    turns = ["Tell me more.", "Is there anything else?", "Take me to the moon gate now.", "The moon gate, please!"]
    seen = []
    for n in range(5):
        reply = ask(alice, chat, stream, conversation="en-1")
        sent = upstream.chat_requests()[-1]
        assert sent.json["messages"][0] == SYSTEM  # the client's prefix, byte-identical
        assert texts(sent)[1] == ("system", "[Luna is nine centuries old.]")  # after the character definition
        moon = ("system", "[The Moon Gate opens only at midnight.]")
        got = texts(sent)
        if moon in got:
            assert got.index(moon) == len(got) - 2  # depth 1: just before the last message
        seen.append(moon in got)
        if n < 4:
            chat = [*chat, {"role": "assistant", "content": reply}, {"role": "user", "content": turns[n]}]
    # chat lengths 1, 3, 5, 7, 9 (SillyTavern's counting, test_engine): keyword at 1, sticky
    # while below 4, then cooling down from 5 while below 8 (its key at 7 is ignored), keyword again
    assert seen == [True, True, False, False, True]


def test_chinese_role_play_with_a_derived_conversation_id(gateway, upstream, redis_url):
    lore(gateway, redis_url, [
        LoreEntry(id="yue", content="【月神殿在湖心岛上。】", keywords=("月神殿",), sticky=3,
                  position="depth", depth=0, role="user"),
        LoreEntry(id="sad", content="【露娜会温柔地安慰难过的人。】", trigger_type="emotional",
                  emotional_context=("sadness",), type="trait", position="before_char"),
    ])
    alice = openai.OpenAI(base_url=gateway.base_url, api_key=ALICE_KEY, max_retries=0)
    chat = [SYSTEM, {"role": "user", "content": "月神殿在哪里？"}]
    reply = ask(alice, chat, stream=True)
    got = texts(upstream.chat_requests()[-1])
    assert got[-1] == ("user", "【月神殿在湖心岛上。】")  # depth 0: after the last message
    chat += [{"role": "assistant", "content": reply}, {"role": "user", "content": "我今天好难过。"}]
    ask(alice, chat, stream=False)
    got = texts(upstream.chat_requests()[-1])
    assert got[0] == ("system", "【露娜会温柔地安慰难过的人。】")  # before the character definition
    assert got[1] == (SYSTEM["role"], SYSTEM["content"])
    assert got[-1] == ("user", "【月神殿在湖心岛上。】")  # sticky: no key in the last message


def test_another_user_does_not_see_a_users_own_book_and_a_tool_pair_is_not_split(gateway, upstream, redis_url):
    lore(gateway, redis_url, [LoreEntry(id="secret", content="[alice's secret]", keywords=("secret",), scan_depth=3,
                                        position="depth", depth=1, role="assistant")], user="alice")
    tool_call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}]}
    chat = [SYSTEM, {"role": "user", "content": "tell me the secret"}, tool_call,
            {"role": "tool", "tool_call_id": "c1", "content": "a secret door"}]
    bob = openai.OpenAI(base_url=gateway.base_url, api_key=BOB_KEY, max_retries=0)
    ask(bob, chat, stream=False)
    assert "alice's secret" not in upstream.chat_requests()[-1].body.decode()
    alice = openai.OpenAI(base_url=gateway.base_url, api_key=ALICE_KEY, max_retries=0)
    ask(alice, chat, stream=False)
    got = upstream.chat_requests()[-1].json["messages"]
    assert got[2] == {"role": "assistant", "content": "[alice's secret]"}  # moved before the tool call
    assert got[3]["tool_calls"] and got[4]["role"] == "tool"


def test_a_failed_reply_does_not_start_timed_effects(gateway, upstream, redis_url):
    # ST WorldInfoTimedEffects (public/scripts/world-info.js): effects are recorded with the
    # chat length when the prompt is built and dropped while the chat has not advanced past
    # it, so a failed (or regenerated) reply leaves the retried turn to be evaluated afresh.
    from tests.support.upstream_double import JSONReply

    moon = ("system", "[The Moon Gate opens only at midnight.]")
    lore(gateway, redis_url, [LoreEntry(id="moon", content=moon[1], keywords=("moon gate",), sticky=3,
                                        position="depth", depth=0, role="system")])
    alice = openai.OpenAI(base_url=gateway.base_url, api_key=ALICE_KEY, max_retries=0)
    upstream.enqueue(JSONReply({"error": {"message": "overloaded", "type": "server_error", "param": None,
                                          "code": None}}, status=500))
    with pytest.raises(openai.APIStatusError):
        ask(alice, [SYSTEM, {"role": "user", "content": "Where is the Moon Gate?"}], False, conversation="fail-1")
    assert texts(upstream.chat_requests()[-1])[-1] == moon  # the failed call had it
    ask(alice, [SYSTEM, {"role": "user", "content": "Never mind, sing me a song."}], False, conversation="fail-1")
    assert moon not in texts(upstream.chat_requests()[-1])  # not sticky: that turn never happened
    chat = [SYSTEM, {"role": "user", "content": "Where is the Moon Gate?"}]
    reply = ask(alice, chat, False, conversation="fail-2")
    chat += [{"role": "assistant", "content": reply}, {"role": "user", "content": "Sing me a song."}]
    ask(alice, chat, False, conversation="fail-2")
    assert texts(upstream.chat_requests()[-1])[-1] == moon  # a reply came: sticky on the next turn


def test_macros_in_lore_are_replaced_with_the_names_the_request_gives(gateway, upstream, redis_url):
    """SillyTavern replaces {{user}} / {{char}} (and its other macros) before lore reaches
    the model: the names are the messages' ``name`` fields, else the key's user and friend
    ids (plugins/world_book/macros.py)."""
    lore(gateway, redis_url, [
        LoreEntry(id="gate", keywords=("moon gate",), content="{{char}} guards the Moon Gate for {{User}}. <USER> knows."),
        LoreEntry(id="day", keywords=("moon gate",), content="{{// hidden}}Today is {{weekday}} ({{isodate}}).{{noop}}",
                  position="depth", depth=0, role="system"),
    ])
    alice = openai.OpenAI(base_url=gateway.base_url, api_key=ALICE_KEY, max_retries=0)
    ask(alice, [SYSTEM, {"role": "user", "content": "Where is the Moon Gate?"}], stream=False)
    got = texts(upstream.chat_requests()[-1])
    assert got[1] == ("system", "tutor guards the Moon Gate for alice. alice knows.")  # the key's ids
    (day,) = [c for r, c in got if c.startswith("Today is")]
    from datetime import UTC, datetime

    today = datetime.now(UTC)
    assert day in {f"Today is {today:%A} ({today:%Y-%m-%d}).", "Today is"}  # (midnight: either day)
    assert "{{" not in day

    named = [SYSTEM, {"role": "user", "name": "Seraphina_fan", "content": "hello"},
             {"role": "assistant", "name": "Luna", "content": "Welcome, traveller."},
             {"role": "user", "name": "Kai", "content": "Where is the Moon Gate?"}]
    ask(alice, named, stream=True)
    assert texts(upstream.chat_requests()[-1])[1] == ("system", "Luna guards the Moon Gate for Kai. Kai knows.")
