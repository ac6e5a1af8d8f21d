"""The gateway on a real Redis Cluster (issue 15 item 1): ``memory.cluster: true`` with
seed node URLs; key store, settings, memorization over a sharded queue, admin listing and
forgetting, through the real HTTP API. The local cluster is 3 primaries + 3 replicas of
the embedded redis-server (tests/support/redis_cluster.py)."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest
from pydantic import ValidationError
from redis.cluster import RedisCluster

from gateway.memorization.keys import QueueKeys
from gateway.memory.config import MemoryConfig
from gateway.memory.factory import is_cluster, redis_client
from gateway.proxy.keystore import RedisKeyStore, key_digest
from tests.support.gateway import ADMIN_KEY, ALICE_KEY
from tests.support.redis_cluster import free_ports


def client(gw, key: str) -> httpx.Client:
    return httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}"}, timeout=30)


def poll(check, what: str, timeout_s: float = 60.0):
    """``check()`` until truthy (returned), with a deadline (memorization is asynchronous)."""
    deadline = time.monotonic() + timeout_s
    while not (result := check()):
        assert time.monotonic() < deadline, f"not {what} within {timeout_s} s"
        time.sleep(0.05)  # polling an HTTP API: no event to wait on
    return result


def test_cluster_mode_needs_urls_of_redis_nodes():
    with pytest.raises(ValidationError, match=r"needs memory\.redis_url"):
        MemoryConfig(cluster=True)
    with pytest.raises(ValidationError, match="redis:// or rediss://"):
        MemoryConfig(cluster=True, redis_url="redis://127.0.0.1:7000,unix:///tmp/redis.sock")
    assert MemoryConfig(cluster=True, redis_url="redis://a:7000, redis://b:7000").cluster


async def test_any_live_seed_node_finds_the_cluster(redis_cluster_url):
    dead = f"redis://127.0.0.1:{free_ports(1)[0]}"  # nothing listens there
    url = dead + "," + redis_cluster_url.split(",")[-1]  # one live node (a replica) among the seeds
    client_ = redis_client(url, MemoryConfig(redis_url=url, cluster=True, socket_timeout_s=2))
    try:
        assert is_cluster(client_)
        key = "t" + uuid.uuid4().hex
        for n in range(20):  # keys of many slots: every primary is found from one seed
            await client_.set(f"{key}:{n}", n)
        assert [int(v) for v in await client_.mget_nonatomic([f"{key}:{n}" for n in range(20)])] == list(range(20))  # type: ignore[attr-defined]
    finally:
        await client_.aclose()


async def test_the_key_store_works_on_a_cluster(redis_cluster_url):
    """Its record and id index live in different slots: no MULTI across them (CROSSSLOT)."""
    client_ = redis_client(redis_cluster_url, MemoryConfig(redis_url=redis_cluster_url, cluster=True))
    try:
        store = RedisKeyStore(client_, prefix="tk" + uuid.uuid4().hex[:8])
        key, stored = await store.create("dana", "coach")
        assert (await store.lookup(key_digest(key))).user_id == "dana"
        assert [k.key_id for k in await store.list()] == [stored.key_id]
        assert (await store.revoke(stored.key_id)).revoked_at
    finally:
        await client_.aclose()


def test_the_gateway_memorizes_recalls_lists_and_forgets_on_a_cluster(start_gateway, redis_cluster_url):
    queue_prefix = "q" + uuid.uuid4().hex[:10]
    gw = start_gateway(
        memory={"redis_url": redis_cluster_url, "cluster": True},
        auth={"cache_ttl_s": 0},
        plugins=[{"name": "memorize", "config": {"mode": "verbatim", "queue": {"key_prefix": queue_prefix, "shards": 3},
                                                  "worker": {"block_ms": 50}}}],
    )
    with client(gw, ALICE_KEY) as alice, client(gw, ADMIN_KEY) as admin:
        reply = alice.post("/v1/chat/completions", json={
            "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "I keep three beehives on my roof in Lyon."}]})
        assert reply.status_code == 200, reply.text
        texts = poll(lambda: [m["text"] for m in alice.get("/v1/memories").json()["items"]], "memorized")
        assert texts == ["I keep three beehives on my roof in Lyon."]
        hits = alice.post("/v1/memories/search", json={"query": "where are the bees kept?"}).json()["data"]
        assert hits and "beehives" in hits[0]["record"]["text"]
        assert alice.put("/v1/memory/settings", json={"inference": False}).status_code == 200
        assert alice.get("/v1/memory/settings").json()["overrides"] == {"inference": False}
        made = admin.post("/v1/admin/keys", json={"user_id": "dave", "friend_id": "coach"}).json()
        with client(gw, made["key"]) as dave:
            assert dave.post("/v1/memories", json={"scope": "event", "text": "Dave met the coach"}).status_code in (200, 201)
            assert admin.post(f"/v1/admin/keys/{made['key_id']}/revoke").status_code == 200
            assert dave.get("/v1/memories").status_code == 401
        users = {u["user_id"] for u in admin.get("/v1/admin/users").json()["data"]}
        assert {"alice", "dave"} <= users
        queue = admin.get("/v1/admin/queue").json()["data"]
        assert [(q["prefix"], q["length"], q["dead"]) for q in queue] == [(queue_prefix, 0, 0)]
        assert admin.post("/v1/admin/users/alice/forget").status_code == 200
        assert alice.get("/v1/memories").json()["items"] == []
        assert alice.get("/v1/memory/settings").json()["overrides"] == {}
    seed = redis_cluster_url.split(",")[0].removeprefix("redis://").split(":")
    with RedisCluster(host=seed[0], port=int(seed[1])) as cluster:  # SCAN over every primary
        left = list(cluster.scan_iter(match=QueueKeys(queue_prefix).user_base("alice") + "*"))
        assert [k for k in left if not k.endswith(b":epoch")] == []  # the seen set is gone, the epoch stays


def test_the_cli_works_on_a_cluster(redis_cluster_url, tmp_path):
    """``memgate keys`` and ``memgate settings`` open their Redis with ``memory.cluster``."""
    import json

    from click.testing import CliRunner

    from gateway.cli.main import main

    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({"memory": {"redis_url": redis_cluster_url, "cluster": True,
                                             "key_prefix": "tc" + uuid.uuid4().hex[:8]}}))
    runner = CliRunner()
    made = [json.loads(runner.invoke(main, ["keys", "create", "--config", str(config), "--user", f"u{i}", "--friend", "pal"]).stdout)
            for i in range(6)]  # key records of several slots
    listed = runner.invoke(main, ["keys", "list", "--config", str(config)])
    assert listed.exit_code == 0, listed.output
    assert all(m["key_id"] in listed.output for m in made)
    assert runner.invoke(main, ["keys", "revoke", "--config", str(config), made[0]["key_id"]]).exit_code == 0
    changed = runner.invoke(main, ["settings", "set", "--config", str(config), "--user", "u1", "--friend", "f", "recall_rounds=2"])
    assert changed.exit_code == 0, changed.output
    shown = runner.invoke(main, ["settings", "get", "--config", str(config), "--user", "u1", "--friend", "f"])
    assert json.loads(shown.stdout)["overrides"] == {"recall_rounds": 2}


async def test_the_search_backend_is_refused_on_a_cluster_even_with_a_query_engine(redis_cluster_url, monkeypatch):
    """The search index is per node and queries are not routed to the tenant's shard, so a
    cluster whose nodes all had the Query Engine would search one node's records: auto
    takes vectorset and search is refused with a message naming the setting."""
    from gateway.memory import factory

    async def engine_everywhere(_client) -> bool:
        return True

    monkeypatch.setattr(factory, "has_query_engine", engine_everywhere)
    client_ = redis_client(redis_cluster_url, MemoryConfig(redis_url=redis_cluster_url, cluster=True))
    try:
        assert await factory.choose_backend(client_, "auto") == "vectorset"
        assert await factory.choose_backend(client_, "auto", recorded="search") == "vectorset"
        with pytest.raises(factory.BackendUnavailable, match=r"memory\.cluster"):
            await factory.choose_backend(client_, "search")
    finally:
        await client_.aclose()
