"""Untrusted patterns and sizes in world books: regex keys run on RE2 (linear time), keys
RE2 cannot run and books over the size limits are refused with a 400 naming the field
before anything is written, and a request whose scan would overrun its budget goes on
without world-book entries (``x-memgate-degraded``), through the real gateway."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
import pytest
import redis.asyncio as aioredis

from gateway.lorebook.model import (
    MAX_ENTRIES,
    MAX_KEYS_PER_BOOK,
    MAX_KEYS_PER_ENTRY,
    MAX_REGEX_KEYS,
    Lorebook,
    LoreEntry,
    parse_regex_key,
    regex_key_problem,
)
from gateway.lorebook.repository import LorebookRepository
from tests.support.gateway import ALICE_KEY

SYSTEM = {"role": "system", "content": "You are Luna, a silver fox spirit guarding the shrine."}


def sent_text(upstream: Any) -> str:
    """Every message text of the last request the upstream received."""
    return "\n".join(str(m["content"]) for m in upstream.requests[-1].json["messages"])


def world(entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"entries": {uid: {"uid": uid, "content": f"lore {uid}", **fields} for uid, fields in entries.items()}}


def test_regex_keys_run_on_a_linear_time_engine() -> None:
    hostile = parse_regex_key("/(a|a)+$/")
    assert hostile is not None and type(hostile).__module__ == "re2"
    assert hostile.search("a" * 100_000 + "!") is None  # backtracking engines take 2^100000 steps
    assert parse_regex_key("/DRAGONS?/i").search("a dragon").start() == 2
    assert parse_regex_key(r"/\u732b+/").search("我的猫猫").start() == 2  # JavaScript \uXXXX
    assert parse_regex_key("/a(?=b)/") is None and parse_regex_key("/[/") is None
    assert "lookaround" in regex_key_problem("/a(?=b)/") and "RE2" in regex_key_problem(r"/(\w)\1/")
    assert regex_key_problem("/[/") is None and regex_key_problem("dragon") is None  # plain keys


@pytest.fixture
def gw(start_gateway: Any) -> Any:
    return start_gateway(plugins=[{"name": "world_book", "config": {"scan_depth": 2}}])


async def _book_keys(redis_url: str, prefix: str) -> int:
    client = aioredis.Redis.from_url(redis_url)
    try:
        return len([k async for k in client.scan_iter(match=f"{prefix}:*lore*", count=1000)])
    finally:
        await client.aclose()


@pytest.mark.parametrize(("body", "param"), [
    (world({"0": {"key": [f"w{i}" for i in range(100_000)]}}), "entries.0.key"),
    (world({str(i): {"key": [f"w{i}x{j}" for j in range(90)]} for i in range(MAX_KEYS_PER_BOOK // 90 + 1)}), "entries"),
    (world({"0": {"key": [f"a{i}" for i in range(60)], "keysecondary": [f"b{i}" for i in range(60)]}}),
     "entries.0.keywords"),
    (world({str(i): {"key": ["x"]} for i in range(MAX_ENTRIES + 1)}), "entries"),
    (world({"0": {"key": ["moon", "/(?<=silver )fox/i"]}}), "entries.0.keywords.1"),
    (world({"7": {"key": ["moon"], "keysecondary": [r"/(\w+) \1/"]}}), "entries.7.secondaryKeys.0"),
    (world({str(i): {"key": [f"/w{i}x?/"]} for i in range(MAX_REGEX_KEYS + 1)}), f"entries.{MAX_REGEX_KEYS}.keywords"),
    ({"spec": "chara_card_v2", "data": {"character_book": {"entries": [
        {"keys": ["moon"], "content": "x"}, {"keys": ["a(?!b)"], "use_regex": True, "content": "y"}]}}},
     "entries.1.keywords.0"),
])
async def test_imports_over_the_limits_are_400_naming_the_field_and_write_nothing(gw: Any, redis_url: str, body: Any,
                                                                              param: str) -> None:
    prefix = gw.config.memory.key_prefix
    async with httpx.AsyncClient(base_url=gw.url, headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=120) as http:
        refused = await http.post("/v1/lorebooks", json=body)
        assert refused.status_code == 400, refused.text[:500]
        assert param in refused.json()["error"]["param"], refused.json()  # maybe behind the union tag (world.)
        assert await _book_keys(redis_url, prefix) == 0
        assert (await http.get("/v1/lorebooks")).json() == []


async def test_entry_edits_over_the_limits_are_400_naming_the_field(gw: Any, redis_url: str) -> None:
    async with httpx.AsyncClient(base_url=gw.url, headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=60) as http:
        made = await http.post("/v1/lorebooks", json=world({"0": {"key": ["/(a|a)+$/", "moon"]}}))
        assert made.status_code == 201, made.text
        url = f"/v1/lorebooks/{made.json()['id']}/entries"
        for entry, param in (({"content": "x", "keywords": [f"k{i}" for i in range(MAX_KEYS_PER_ENTRY + 1)]}, "keywords"),
                             ({"content": "x", "keywords": ["moon", "/(?<!new )moon/"]}, "keywords.1"),
                             ({"content": "x", "keywords": ["moon"], "secondaryKeys": ["x" * 1001]}, "secondaryKeys.0")):
            refused = await http.put(f"{url}/e1", json=entry)
            assert refused.status_code == 400, refused.text[:300]
            assert refused.json()["error"]["param"] == param
        many = [{"content": "x", "keywords": [f"/r{n}x{i}?/" for i in range(49)]} for n in range(5)]
        answers = [(await http.put(f"{url}/r{n}", json=entry)).status_code for n, entry in enumerate(many)]
        assert answers == [200, 200, 200, 200, 400]  # the book's regex keys would pass MAX_REGEX_KEYS
        exported = (await http.get(f"/v1/lorebooks/{made.json()['id']}")).json()
        assert sorted(exported["entries"]) == ["0", "r0", "r1", "r2", "r3"]


def test_a_catastrophic_regex_key_answers_at_once(gw: Any, upstream: Any, redis_url: str) -> None:
    """``/(a|a)+$/`` against 40 "a" and "!" would take 2^40 backtracking steps."""
    async def write() -> None:
        client = aioredis.Redis.from_url(redis_url)
        try:
            await LorebookRepository(client, gw.config.memory.key_prefix).put(Lorebook(
                id="trap", friend_id="tutor", user_id="alice", entries=(
                    LoreEntry(id="trap", content="[A trap entry.]", keywords=("/(a|a)+$/", "/^(a+)+b/")),
                    LoreEntry(id="moon", content="[The Moon Gate opens at midnight.]", keywords=("moon gate",)))))
        finally:
            await client.aclose()

    asyncio.run(write())
    alice = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0, timeout=30)
    alice.chat.completions.create(model="gpt-4o", messages=[SYSTEM, {"role": "user", "content": "a" * 40 + "!"}])
    assert "[A trap entry.]" not in sent_text(upstream)
    alice.chat.completions.create(model="gpt-4o", messages=[SYSTEM, {"role": "user", "content": "a" * 40 + " moon gate"}])
    sent = sent_text(upstream)
    assert "[The Moon Gate opens at midnight.]" in sent and "[A trap entry.]" not in sent


@pytest.mark.parametrize(("config", "text", "reason"), [
    ({"max_scan_work": 1000}, "moon gate " * 200, "world_book:scan_budget"),
    ({"scan_timeout_ms": 0.001}, "moon gate " + "x" * 300_000, "world_book:scan_timeout"),
    ({"max_entries": 1}, "moon gate", "world_book:too_large"),
])
def test_a_scan_over_its_budget_fails_open_for_that_request(start_gateway: Any, upstream: Any, redis_url: str,
                                                            config: dict[str, Any], text: str, reason: str) -> None:
    gw = start_gateway(plugins=[{"name": "world_book", "config": {"scan_depth": 2, **config}}])

    async def write() -> None:
        client = aioredis.Redis.from_url(redis_url)
        try:
            await LorebookRepository(client, gw.config.memory.key_prefix).put(Lorebook(
                id="shrine", friend_id="tutor", user_id="alice", entries=(
                    LoreEntry(id="moon", content="[The Moon Gate opens at midnight.]", keywords=("moon gate", "/gate+/")),
                    LoreEntry(id="fox", content="[Luna is nine centuries old.]", keywords=("luna",)))))
        finally:
            await client.aclose()

    asyncio.run(write())
    alice = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0, timeout=60)
    raw = alice.chat.completions.with_raw_response.create(model="gpt-4o", messages=[SYSTEM, {"role": "user", "content": text}])
    assert raw.status_code == 200
    assert reason in raw.headers.get("x-memgate-degraded", "")
    assert "[The Moon Gate" not in sent_text(upstream)
    ok = alice.chat.completions.with_raw_response.create(model="gpt-4o", messages=[SYSTEM, {"role": "user", "content": "luna?"}])
    if reason != "world_book:too_large":  # the next, small request is served in full
        assert "world_book" not in ok.headers.get("x-memgate-degraded", "")
        assert "[Luna is nine centuries old.]" in sent_text(upstream)
