"""``context_selection`` through the real gateway and the real openai SDK (seed 004):
a group chat, stream and non-stream, per-key enabling, the extension removed, fallbacks
named in ``x-memgate-degraded``, metrics."""

from __future__ import annotations

import asyncio
import copy
import json
import time
import uuid

import httpx
import openai
import pytest
import redis
import redis.asyncio as aioredis

import plugins.context_selection as context_selection
from gateway.chain.services import PluginServices
from gateway.runtime.config import PluginOverride
from plugins.context_selection import export_usage
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY
from tests.support.upstream_double import SSEReply

SYSTEM = {"role": "system", "content": "你是群助手 Kiki。\n  Keep answers short."}

#: A Lark-style group: a docker problem (bob, dave) and lunch talk (alice, carol) interleaved;
#: bob asks the bot; ids, reply links and times in the memgate extension.
GROUP = [
    SYSTEM,
    {"role": "user", "name": "alice", "content": "anyone tried the new ramen place on 5th street?",
     "memgate": {"id": "m1", "ts": "2025-03-01T12:00:00+08:00"}},
    {"role": "user", "name": "bob", "content": "my docker build fails with 'no space left on device'",
     "memgate": {"id": "m2", "ts": "2025-03-01T12:00:30+08:00"}},
    {"role": "user", "name": "carol", "content": "alice: yes! the tonkotsu broth is amazing",
     "memgate": {"id": "m3", "reply_to": "m1", "ts": "2025-03-01T12:01:00+08:00"}},
    {"role": "user", "name": "dave", "content": "run docker system prune -a to free the build cache",
     "memgate": {"id": "m4", "reply_to": "m2", "ts": "2025-03-01T12:01:30+08:00", "mentions": ["bob"]}},
    {"role": "user", "name": "alice", "content": "carol: how long was the queue?",
     "memgate": {"id": "m5", "reply_to": "m3", "ts": "2025-03-01T12:02:00+08:00"}},
    {"role": "user", "name": "carol", "content": "about 20 minutes at noon",
     "memgate": {"id": "m6", "reply_to": "m5", "ts": "2025-03-01T12:02:30+08:00"}},
    {"role": "user", "name": "bob", "content": "@Kiki prune freed 30GB but docker build still fails at COPY, why?",
     "memgate": {"id": "m7", "reply_to": "m4", "ts": "2025-03-01T12:03:00+08:00"}},
]

#: What the upstream must receive for alice's key: the docker thread, no extension.
SELECTED = [SYSTEM, *({k: v for k, v in GROUP[i].items() if k != "memgate"} for i in (2, 4, 7))]


def plugin_entry(**config):
    return [{"name": "context_selection", "enabled": False, "config": {"bot_names": ["Kiki"], **config}}]


CLIENTS = [
    {"key": ALICE_KEY, "user_id": "groupbot", "key_id": "alice",
     "plugins": {"context_selection": {"enabled": True}}},
    {"key": BOB_KEY, "user_id": "bob", "key_id": "bob"},
]


@pytest.fixture
def gateway(start_gateway):
    return start_gateway(plugins=plugin_entry(), clients=CLIENTS)


def client(gw, key=ALICE_KEY):
    return openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0)


def test_non_stream_sends_the_thread_of_the_last_message_only(gateway, upstream):
    raw = client(gateway).chat.completions.with_raw_response.create(model="gpt-4o", messages=copy.deepcopy(GROUP))
    assert raw.parse().choices[0].message.content
    assert "x-memgate-degraded" not in raw.headers
    assert upstream.chat_requests()[-1].json["messages"] == SELECTED


def test_stream_sends_the_thread_of_the_last_message_only(gateway, upstream):
    upstream.enqueue(SSEReply())
    with client(gateway).chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=copy.deepcopy(GROUP), stream=True
    ) as response:
        chunks = list(response.parse())
        assert "x-memgate-degraded" not in response.headers
    assert any(c.choices and c.choices[0].delta.content for c in chunks)
    assert upstream.chat_requests()[-1].json["messages"] == SELECTED


def bare(messages):
    return [{k: v for k, v in m.items() if k != "memgate"} for m in messages]


def test_a_key_without_the_plugin_sends_everything_but_the_extension(gateway, upstream):
    client(gateway, BOB_KEY).chat.completions.create(model="gpt-4o", messages=copy.deepcopy(GROUP))
    assert upstream.chat_requests()[-1].json["messages"] == bare(GROUP)
    assert b"memgate" not in upstream.chat_requests()[-1].body


def test_the_extension_never_goes_upstream_with_no_plugin_at_all(start_gateway, upstream):
    """No chain at all (the client's bytes would go as sent), stream and not: the
    extension field is still removed, whatever its shape, every other field as sent."""
    gw = start_gateway(plugins=[], clients=CLIENTS[1:])
    messages = copy.deepcopy(GROUP)
    messages[2]["memgate"] = "not even an object"
    client(gw, BOB_KEY).chat.completions.create(model="gpt-4o", messages=messages, temperature=0.5)
    sent = upstream.chat_requests()[-1].json
    assert sent["messages"] == bare(GROUP) and sent["temperature"] == 0.5
    upstream.enqueue(SSEReply())
    with client(gw, BOB_KEY).chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=copy.deepcopy(GROUP), stream=True
    ) as response:
        list(response.parse())
    assert upstream.chat_requests()[-1].json["messages"] == bare(GROUP)


def test_the_extension_never_goes_upstream_on_the_responses_api(start_gateway, upstream):
    gw = start_gateway(plugins=plugin_entry(), clients=CLIENTS)
    items = [{"type": "message", "role": "user", "content": "hi", "memgate": {"id": "m1", "ts": "2025-03-01T12:00:00Z"}},
             {"role": "user", "content": "@Kiki hello", "memgate": {"id": "m2", "reply_to": "m1"}}]
    for key in (ALICE_KEY, BOB_KEY):
        client(gw, key).responses.create(model="gpt-4.1", input=copy.deepcopy(items))
        sent = upstream.responses_requests()[-1].json
        assert sent["input"] == [{"type": "message", "role": "user", "content": "hi"},
                                 {"role": "user", "content": "@Kiki hello"}]


def test_every_extension_field_is_optional_a_ts_only_extension_is_accepted(gateway, upstream):
    """Only times, only ids, ids and mentions, nothing: each accepted, and the links are
    inferred whatever is sent (bob's own problem is kept; the lunch talk between alice and
    carol, addressed to each other, is not)."""
    def only(*fields):
        return [{**m, "memgate": {f: m["memgate"][f] for f in fields if f in m["memgate"]}} if "memgate" in m else m
                for m in GROUP]

    for messages in (only("ts"), only("id"), only("id", "mentions"), bare(GROUP)):
        client(gateway).chat.completions.create(model="gpt-4o", messages=copy.deepcopy(messages))
        sent = upstream.chat_requests()[-1].json["messages"]
        assert sent[0] == SYSTEM and sent[-1] == bare(GROUP)[-1]
        assert bare(GROUP)[2] in sent  # bob's problem
        assert bare(GROUP)[3] not in sent and bare(GROUP)[5] not in sent  # "alice: ...", "carol: ..."
    # dave's fix names bob in its mentions: linked to him with no reply link
    client(gateway).chat.completions.create(model="gpt-4o", messages=copy.deepcopy(only("id", "mentions", "ts")))
    assert bare(GROUP)[4] in upstream.chat_requests()[-1].json["messages"]


def test_a_selection_that_keeps_nothing_sends_the_recent_messages_never_an_empty_context(start_gateway, upstream):
    gw = start_gateway(plugins=plugin_entry(relevance_threshold=1.0, fallback_messages=2), clients=CLIENTS)
    client(gw).chat.completions.create(model="gpt-4o", messages=copy.deepcopy(GROUP))
    assert upstream.chat_requests()[-1].json["messages"] == [SYSTEM, *bare(GROUP[5:])]


def test_a_malformed_extension_is_a_400_naming_the_field(start_gateway, upstream):
    gw = start_gateway(plugins=plugin_entry(fallback_messages=2), clients=CLIENTS)
    messages = copy.deepcopy(GROUP)
    messages[3]["memgate"]["ts"] = "12:01"  # no date, no offset
    before = len(upstream.chat_requests())
    with pytest.raises(openai.BadRequestError) as caught:
        client(gw).chat.completions.create(model="gpt-4o", messages=messages)
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == "messages.3.memgate.ts" and "ISO-8601" in caught.value.body["message"]
    assert len(upstream.chat_requests()) == before  # nothing went upstream


def test_an_error_in_selection_falls_back_to_the_recent_messages_not_to_everything(start_gateway, upstream, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("scorer bug")

    monkeypatch.setattr(context_selection, "select_context", broken)
    gw = start_gateway(plugins=plugin_entry(fallback_messages=3), clients=CLIENTS)
    upstream.enqueue(SSEReply())
    with client(gw).chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=copy.deepcopy(GROUP), stream=True
    ) as response:
        list(response.parse())
        assert response.headers["x-memgate-degraded"] == "context_selection:error:RuntimeError"
    sent = upstream.chat_requests()[-1].json["messages"]
    assert sent == [SYSTEM, *({k: v for k, v in m.items() if k != "memgate"} for m in GROUP[4:])]
    assert 'memgate_context_fallbacks_total{reason="error"} 1.0' in httpx.get(gw.url + "/metrics", timeout=30).text


def test_metrics_show_build_time_kept_messages_relevance_and_tokens(gateway, upstream):
    client(gateway).chat.completions.create(model="gpt-4o", messages=copy.deepcopy(GROUP))
    metrics = gateway.gateway.telemetry.metrics
    assert metrics.get("memgate_context_builds_total", outcome="selected") == 1
    assert metrics.get("memgate_context_build_seconds_count") == 1
    assert metrics.get("memgate_context_kept_messages_sum") == 2
    assert 0.3 <= metrics.get("memgate_context_mean_relevance_sum") <= 1.0
    before = metrics.get("memgate_context_tokens_total", stage="before")
    after = metrics.get("memgate_context_tokens_total", stage="after")
    assert 0 < after < before
    text = httpx.get(gateway.url + "/metrics", timeout=30).text
    assert "# TYPE memgate_context_build_seconds histogram" in text


def wait_for(predicate, timeout=30.0):
    """Poll ``predicate`` until true (completion hooks run in the gateway's background)."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)
    return value


def test_usage_records_go_on_a_capped_stream_export_as_jsonl_and_are_forgotten(start_gateway, upstream, redis_url):
    stream = f"t{uuid.uuid4().hex[:8]}_context_usage"
    gw = start_gateway(plugins=plugin_entry(usage_records=True, usage_stream=stream, usage_max_records=100),
                       clients=[*CLIENTS, {"key": ADMIN_KEY, "user_id": "ops", "admin": True, "key_id": "ops"}])
    prefix = gw.config.memory.key_prefix
    key = f"{prefix}:plugin:context_selection:{stream}"  # under the gateway's prefix, in the plugin's space
    reply = client(gw).chat.completions.create(model="gpt-4o", messages=copy.deepcopy(GROUP))
    sync = redis.Redis.from_url(redis_url)
    try:
        rows = wait_for(lambda: sync.xrange(key))
        assert not sync.exists(stream)
        record = json.loads(rows[0][1][b"record"])
        assert record["trigger_message_id"] == "m7"
        assert record["context_message_ids"] == ["m2", "m4"]
        assert set(record["relevance_scores"]) == {"m1", "m2", "m3", "m4", "m5", "m6"}
        assert record["relevance_scores"]["m4"] >= 0.3 > record["relevance_scores"]["m5"]
        assert record["llm_response"] == reply.choices[0].message.content
        assert (record["user_id"], record["fallback"]) == ("groupbot", None)

        async def export():
            client_ = aioredis.Redis.from_url(redis_url)
            try:
                store = PluginServices(redis=client_, key_prefix=prefix).store("context_selection")
                return [line async for line in export_usage(store, stream)]
            finally:
                await client_.aclose()

        lines = asyncio.run(export())
        assert [json.loads(line) for line in lines] == [record] and lines[0].endswith("\n")

        forget = httpx.post(gw.base_url + "/admin/users/groupbot/forget",
                            headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=20)
        assert forget.status_code == 200, forget.text
        assert sync.xlen(key) == 0
    finally:
        sync.delete(key)
        sync.close()


def test_without_usage_records_the_plugin_observes_no_reply(gateway):
    chain = gateway.gateway.chains._chain_for({"context_selection": PluginOverride(enabled=True)}, "test")
    assert [p.name for p in chain.plugins] == ["context_selection"]
    assert chain.observers == []


def test_a_huge_pasted_log_in_the_history_is_scored_off_the_loop_and_dropped(gateway, upstream):
    messages = copy.deepcopy(GROUP)
    messages.insert(2, {"role": "user", "name": "erin", "content": "kernel log:\n" + "usb 1-1: reset\n" * 20_000})
    client(gateway).chat.completions.create(model="gpt-4o", messages=messages)
    assert upstream.chat_requests()[-1].json["messages"] == SELECTED
    metrics = gateway.gateway.telemetry.metrics
    before = metrics.get("memgate_context_tokens_total", stage="before")
    assert before - metrics.get("memgate_context_tokens_total", stage="after") > 20_000
