"""Memory as MCP tools (issue 13 item 2), with the official ``mcp`` SDK's own clients:
Streamable HTTP against ``/mcp`` of a real gateway on a loopback port, and stdio against a
real ``memgate mcp`` subprocess; real Redis, the real local embedding model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support.gateway import ALICE_KEY, BOB_KEY, SERVICE_KEY

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"search_memory", "add_memory", "list_memories", "get_memory", "update_memory", "delete_memory",
         "recall_memory"}


@contextlib.asynccontextmanager
async def http_session(gw: Any, key: str, **headers: str) -> AsyncIterator[ClientSession]:
    client = httpx2.AsyncClient(headers={"authorization": f"Bearer {key}", **headers}, timeout=60)
    async with client, streamable_http_client(gw.url + "/mcp", http_client=client) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@contextlib.asynccontextmanager
async def stdio_session(config_path: str, key: str, errlog: TextIO = sys.stderr, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "gateway.cli", "mcp", "--config", config_path],
        env={"MEMGATE_API_KEY": key, "PYTHONPATH": str(ROOT), **env}, cwd=str(ROOT),
    )
    async with stdio_client(params, errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    """The tool's structured result (asserting it is no error and matches the text content)."""
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content


async def error_text(session: ClientSession, name: str, **arguments: Any) -> str:
    result = await session.call_tool(name, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text  # type: ignore[union-attr]


async def round_trip(alice: ClientSession) -> None:
    """add / get / list / search / update / recall / delete through one session."""
    tools = await alice.list_tools()
    assert {t.name for t in tools.tools} == TOOLS
    by_name = {t.name: t for t in tools.tools}
    assert by_name["search_memory"].input_schema["required"] == ["query"]
    assert by_name["get_memory"].output_schema is not None

    fact = await call(alice, "add_memory", text="Alice prefers concise answers with code comments",
                      type="preference", keywords=["style"])
    assert fact["user_id"] == "alice" and fact["scope"] == "profile" and fact["friend_id"] is None
    event = await call(alice, "add_memory", text="Alice moved to Lisbon in March", scope="event",
                       type="episodic", occurred_at="2026-03-02T10:00:00+00:00")
    assert event["friend_id"] == "tutor"
    assert (await call(alice, "get_memory", memory_id=fact["id"]))["text"] == fact["text"]
    page = await call(alice, "list_memories", limit=1)
    assert [r["id"] for r in page["items"]] == [event["id"]] and page["next_cursor"]
    hits = (await call(alice, "search_memory", query="where does Alice live now?", top_k=2))["hits"]
    assert hits[0]["record"]["id"] == event["id"]
    recalled = await call(alice, "recall_memory", query="how should answers be written and where does Alice live",
                          similarity_threshold=0.0)
    assert recalled["profiles"] == [{"topic": "style", "content": fact["text"], "updated_at": fact["updated_at"][:10]}]
    assert recalled["events"] == [{"date": "2026-03-02", "content": event["text"]}]
    patched = await call(alice, "update_memory", memory_id=event["id"], text="Alice moved to Porto in March")
    assert patched["text"].endswith("Porto in March")
    assert await call(alice, "delete_memory", memory_id=event["id"]) == {"id": event["id"], "deleted": True}
    assert "memory_id" in await error_text(alice, "get_memory", memory_id=event["id"])


async def test_http_round_trip(start_gateway: Any) -> None:
    gw = start_gateway()
    async with http_session(gw, ALICE_KEY) as alice:
        await round_trip(alice)


async def test_server_info_names_the_package_and_its_version(start_gateway: Any) -> None:
    from importlib.metadata import version

    gw = start_gateway()
    client = httpx2.AsyncClient(headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=60)
    async with client, streamable_http_client(gw.url + "/mcp", http_client=client) as (read, write):
        async with ClientSession(read, write) as session:
            info = (await session.initialize()).server_info
    assert info.name == "memgate" and info.version == version("memgate") != ""


async def test_http_tenancy(start_gateway: Any) -> None:
    gw = start_gateway()
    async with http_session(gw, ALICE_KEY) as alice, http_session(gw, BOB_KEY) as bob:
        secret = await call(alice, "add_memory", text="Alice's bank PIN hint is her cat's name")
        assert "not found" in await error_text(bob, "get_memory", memory_id=secret["id"])
        assert "not found" in await error_text(bob, "delete_memory", memory_id=secret["id"])
        assert "not found" in await error_text(bob, "update_memory", memory_id=secret["id"], text="mine now")
        assert (await call(bob, "list_memories"))["items"] == []
        assert (await call(bob, "search_memory", query="bank PIN hint cat"))["hits"] == []
        assert (await call(bob, "recall_memory", query="bank PIN hint cat", similarity_threshold=0.0))["profiles"] == []
        assert (await call(alice, "get_memory", memory_id=secret["id"]))["text"] == secret["text"]
    # the same REST store and tenancy: the REST API sees what the MCP tool stored
    async with httpx.AsyncClient(base_url=gw.url, headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=30) as rest:
        assert (await rest.get(f"/v1/memories/{secret['id']}")).json()["text"] == secret["text"]


async def test_http_service_key_names_the_end_user(start_gateway: Any) -> None:
    gw = start_gateway()
    async with http_session(gw, SERVICE_KEY, **{"x-memgate-user": "end-user-5"}) as service:
        added = await call(service, "add_memory", text="likes jazz", type="trait")
    assert added["user_id"] == "end-user-5"


@pytest.mark.parametrize("authorization", [None, "Bearer sk-unknown-0123456789"])
def test_http_needs_a_key(start_gateway: Any, authorization: str | None) -> None:
    gw = start_gateway()
    headers = {"accept": "application/json, text/event-stream"}
    if authorization:
        headers["authorization"] = authorization
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    reply = httpx.post(gw.url + "/mcp", json=body, headers=headers, timeout=30)
    assert reply.status_code == 401
    assert reply.json()["error"]["type"] == "invalid_request_error"


async def test_http_bad_input_names_the_field(start_gateway: Any) -> None:
    gw = start_gateway()
    async with http_session(gw, ALICE_KEY) as alice:
        assert "top_k" in await error_text(alice, "search_memory", query="x", top_k=0)
        assert "memory_id" in await error_text(alice, "get_memory", memory_id="not-an-id")
        assert "query" in await error_text(alice, "recall_memory")
        assert "scope" in await error_text(alice, "add_memory", text="x", scope="everything")
        too_long = "x" * 100_000
        assert "text" in await error_text(alice, "add_memory", text=too_long)
        assert ": metadata.followed_by is kept by the store" in await error_text(alice, "add_memory", text="x", metadata={"followed_by": []})


@pytest.fixture
def stdio_config(tmp_path: Any, redis_url: str) -> str:
    path = tmp_path / "gateway.yaml"
    path.write_text(json.dumps({
        "memory": {"redis_url": redis_url, "key_prefix": "mcp" + uuid.uuid4().hex[:8]},
        "clients": [
            {"key": ALICE_KEY, "user_id": "alice", "friend_id": "tutor", "key_id": "alice"},
            {"key": BOB_KEY, "user_id": "bob", "friend_id": "tutor", "key_id": "bob"},
            {"key": SERVICE_KEY, "user_id": "backend", "service": True, "key_id": "svc"},
        ],
    }))
    return str(path)


async def test_stdio_round_trip_and_tenancy(stdio_config: str) -> None:
    async with stdio_session(stdio_config, ALICE_KEY) as alice:
        await round_trip(alice)
        secret = await call(alice, "add_memory", text="Alice's locker code is 4711")
    async with stdio_session(stdio_config, BOB_KEY) as bob:
        assert "not found" in await error_text(bob, "get_memory", memory_id=secret["id"])
        assert (await call(bob, "list_memories"))["items"] == []


async def test_stdio_service_key_names_the_end_user(stdio_config: str) -> None:
    async with stdio_session(stdio_config, SERVICE_KEY, MEMGATE_END_USER="caf%C3%A9", MEMGATE_END_FRIEND="pal") as service:
        added = await call(service, "add_memory", text="likes jazz", scope="event")
    assert (added["user_id"], added["friend_id"]) == ("café", "pal")


async def test_stdio_refuses_an_unknown_key(stdio_config: str, tmp_path: Any) -> None:
    """The key is checked before anything is served: the process exits with one line."""
    with (tmp_path / "stderr").open("w+") as errlog:
        with pytest.raises(ExceptionGroup) as caught:
            async with stdio_session(stdio_config, "sk-unknown-0123456789", errlog):
                pass
        assert caught.group_contains(MCPError, match="Connection closed")
        errlog.seek(0)
        assert errlog.read().strip() == "Error: Incorrect API key provided."


# --- DNS rebinding, GET, settings ---------------------------------------------------------

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
MCP_HEADERS = {"authorization": f"Bearer {ALICE_KEY}", "accept": "application/json, text/event-stream"}


def test_http_host_and_origin_are_checked_by_default(start_gateway: Any) -> None:
    gw = start_gateway()
    ok = httpx.post(gw.url + "/mcp", json=INIT, headers={**MCP_HEADERS, "origin": f"http://localhost:{gw.port}"})
    assert ok.status_code == 200, ok.text
    rebound = httpx.post(gw.url + "/mcp", json=INIT, headers={**MCP_HEADERS, "host": f"attacker.example:{gw.port}"})
    assert rebound.status_code == 421 and rebound.json()["error"]["param"] == "Host"
    foreign = httpx.post(gw.url + "/mcp", json=INIT, headers={**MCP_HEADERS, "origin": "http://attacker.example"})
    assert foreign.status_code == 403 and foreign.json()["error"]["code"] == "invalid_origin"
    # refused before the key is looked at: a missing key gets the same answer
    assert httpx.post(gw.url + "/mcp", json=INIT, headers={"host": "attacker.example"}).status_code == 421


async def test_http_allow_lists_are_configurable(start_gateway: Any) -> None:
    gw = start_gateway(mcp={"allowed_hosts": ["memgate.internal:*"], "allowed_origins": ["https://app.example"]})
    headers = {"host": f"memgate.internal:{gw.port}", "origin": "https://app.example"}
    async with http_session(gw, ALICE_KEY, **headers) as alice:
        assert {t.name for t in (await alice.list_tools()).tools} == TOOLS
    local = await asyncio.to_thread(httpx.post, gw.url + "/mcp", json=INIT, headers=MCP_HEADERS)  # Host 127.0.0.1: no longer listed
    assert local.status_code == 421
    off = start_gateway(mcp={"dns_rebinding_protection": False})
    anywhere = await asyncio.to_thread(httpx.post, off.url + "/mcp", json=INIT, headers={**MCP_HEADERS, "host": "anything.example"})
    assert anywhere.status_code == 200


def test_http_get_is_refused_not_held_open(start_gateway: Any) -> None:
    gw = start_gateway()
    # a stream: the head decides (a held SSE stream would answer 200 and never end)
    with httpx.stream("GET", gw.url + "/mcp", headers={**MCP_HEADERS, "accept": "text/event-stream"},
                      timeout=20) as reply:
        assert reply.status_code == 405
        body = json.loads(reply.read())
    assert reply.headers["allow"] == "POST, DELETE" and body["error"]["code"] == "method_not_allowed"


async def test_recall_memory_honours_the_users_settings(start_gateway: Any) -> None:
    gw = start_gateway()
    texts = ["Alice loves hiking in the Alps", "Alice loves hiking in Patagonia", "Alice loves hiking in Norway"]
    query = "where does Alice love hiking"
    async with http_session(gw, ALICE_KEY) as alice, httpx.AsyncClient(
            base_url=gw.url, headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=30) as rest:
        for text in texts:
            await call(alice, "add_memory", text=text)
        full = await call(alice, "recall_memory", query=query, similarity_threshold=0.0)
        assert len(full["profiles"]) == 3
        assert (await rest.put("/v1/memory/settings", json={"profile_topk": 1})).status_code == 200
        assert len((await call(alice, "recall_memory", query=query, similarity_threshold=0.0))["profiles"]) == 1
        assert len((await call(alice, "recall_memory", query=query, profile_topk=5,
                               similarity_threshold=0.0))["profiles"]) == 1  # bounded by the setting
        assert (await rest.put("/v1/memory/settings", json={"profile_topk": None, "similarity_threshold": 1.0})).status_code == 200
        assert (await call(alice, "recall_memory", query=query, similarity_threshold=0.0))["profiles"] == []
        assert (await rest.put("/v1/memory/settings", json={"similarity_threshold": None,
                                                            "recall_enabled": False})).status_code == 200
        assert await call(alice, "recall_memory", query=query, similarity_threshold=0.0) == {"profiles": [], "events": []}
        assert len((await call(alice, "search_memory", query=query))["hits"]) == 3  # search is not recall
        assert (await rest.put("/v1/memory/settings", json={"recall_enabled": None})).status_code == 200
        assert len((await call(alice, "recall_memory", query=query, similarity_threshold=0.0))["profiles"]) == 3


async def test_stdio_serves_while_another_clients_variable_is_unset(tmp_path: Any, redis_url: str) -> None:
    """A group key written ``key: ${GROUP_BOT_KEY}`` (README "Memory per speaker") with the
    variable unset: ``memgate mcp`` with the env of README's Claude Desktop config (only
    MEMGATE_API_KEY) serves the other keys and warns about that entry on stderr."""
    unset = "MEMGATE_TEST_UNSET_" + uuid.uuid4().hex[:8].upper()
    path = tmp_path / "gateway.yaml"
    path.write_text(
        f"memory: {{redis_url: '{redis_url}', key_prefix: mcp{uuid.uuid4().hex[:8]}}}\n"
        "clients:\n"
        f"  - {{key: {ALICE_KEY}, user_id: alice, friend_id: tutor, key_id: alice}}\n"
        f"  - {{key: '${{{unset}}}', user_id: groupbot, friend_id: kiki, service: true, group: true}}\n"
    )
    with (tmp_path / "stderr").open("w+") as errlog:
        async with stdio_session(str(path), ALICE_KEY, errlog) as alice:
            added = await call(alice, "add_memory", text="Alice waters the basil on Sundays")
            assert added["user_id"] == "alice"
        errlog.seek(0)
        warned = errlog.read()
    assert "clients.1 left out" in warned and unset in warned


async def test_recall_memory_cuts_on_calibrated_relevance_not_the_raw_cosine(start_gateway: Any) -> None:
    """Seed 002's ``similarity_threshold`` applies to P(related) when the store is
    calibrated: a threshold between a hit's cosine and its relevance keeps the hit exactly
    when the relevance clears it (raw cosines mean different things per embedder)."""
    gw = start_gateway()
    texts = ["Alice's daughter is allergic to peanuts", "Alice plays the cello in a community orchestra",
             "Alice bought a blue bicycle last spring"]
    query = "what snacks can I pack for my kid's school trip"
    async with http_session(gw, ALICE_KEY) as alice:
        for text in texts:
            await call(alice, "add_memory", text=text)
        hits = (await call(alice, "search_memory", query=query, top_k=5))["hits"]
        assert len(hits) == 3 and all(h["relevance"] is not None for h in hits)
        for hit in hits:
            cosine, relevance = hit["similarity"], hit["relevance"]
            assert abs(cosine - relevance) > 0.01, hit  # the two scales differ for this embedder
            threshold = (cosine + relevance) / 2
            recalled = await call(alice, "recall_memory", query=query, profile_topk=5, similarity_threshold=threshold)
            kept = hit["record"]["text"] in [p["content"] for p in recalled["profiles"]]
            assert kept == (relevance >= threshold), (hit, recalled)
