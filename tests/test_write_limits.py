"""Lists a client sends into storage are bounded and checked before anything is written:
a refused memory write (REST ``POST /v1/memories``, MCP ``add_memory``) answers 400
naming the field and leaves no Redis key behind."""

from __future__ import annotations

from typing import Any

import httpx
import redis.asyncio as aioredis

from gateway.memory.records import MAX_KEYWORD_CHARS, MAX_KEYWORDS
from tests.support.gateway import ALICE_KEY
from tests.test_mcp import error_text, http_session


async def _keys(redis_url: str, prefix: str) -> int:
    """The store's keys under ``prefix``, without the embedding cache's (``<prefix>:emb:*``:
    a text's vector, written back after the reply without being waited for, so it may land
    after any count; it is no memory state)."""
    client = aioredis.from_url(redis_url)
    try:
        return len([k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)
                    if not k.startswith(f"{prefix}:emb:".encode())])
    finally:
        await client.aclose()


async def test_rest_refuses_a_huge_keyword_list_before_writing(start_gateway: Any, redis_url: str) -> None:
    gw = start_gateway()
    prefix = gw.config.memory.key_prefix
    async with httpx.AsyncClient(base_url=gw.url, headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=60) as rest:
        ok = await rest.post("/v1/memories", json={"scope": "profile", "text": "Alice keeps bees",
                                                   "keywords": [f"k{i}" for i in range(MAX_KEYWORDS)]})
        assert ok.status_code == 201, ok.text
        before = await _keys(redis_url, prefix)
        for keywords in ([f"k{i}" for i in range(100_000)], [f"k{i}" for i in range(MAX_KEYWORDS + 1)],
                         ["x" * (MAX_KEYWORD_CHARS + 1)]):
            refused = await rest.post("/v1/memories", json={"scope": "profile", "text": "Alice keeps wasps",
                                                            "keywords": keywords})
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["param"].startswith("keywords")
        patched = await rest.patch(f"/v1/memories/{ok.json()['id']}", json={"keywords": [f"k{i}" for i in range(5000)]})
        assert patched.status_code == 400 and patched.json()["error"]["param"].startswith("keywords")
        assert await _keys(redis_url, prefix) == before  # no orphan postings, no record


async def test_mcp_refuses_a_huge_keyword_list_before_writing(start_gateway: Any, redis_url: str) -> None:
    gw = start_gateway()
    prefix = gw.config.memory.key_prefix
    async with http_session(gw, ALICE_KEY) as alice:
        before = await _keys(redis_url, prefix)
        assert "keywords" in await error_text(alice, "add_memory", text="Alice keeps wasps",
                                              keywords=[f"k{i}" for i in range(20_000)])
        assert await _keys(redis_url, prefix) == before
