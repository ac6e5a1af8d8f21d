"""The local Redis Cluster of the tests (tests/support/redis_cluster.py) forms a real
cluster and fails over for real: a killed primary's replica takes its slots, the cluster
client finds the new primary by itself, and the old node rejoins as a replica."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from gateway.memory.config import MemoryConfig
from gateway.memory.factory import redis_client
from tests.support.redis_cluster import SLOTS, LocalCluster


async def test_a_killed_primary_is_replaced_by_its_replica_and_rejoins_as_a_replica(tmp_path: Path):
    with LocalCluster(tmp_path, primaries=3, replicas=1) as cluster:
        assert len(cluster.urls) == 6 and cluster.url == ",".join(cluster.urls)
        assert sorted(n.role() for n in cluster.nodes) == ["master"] * 3 + ["slave"] * 3
        client = redis_client(cluster.url, MemoryConfig(redis_url=cluster.url, cluster=True, socket_timeout_s=2))
        try:
            await client.set("mg:{alice}:x", "kept")
            old = cluster.primary_for_key("mg:{alice}:x")
            assert old.role() == "master"
            assert old.command("WAIT", 1, 5000) == 1  # the write reached the replica
            cluster.kill(old)
            cluster.wait_ok()
            new = cluster.primary_for_key("mg:{alice}:x")
            assert new is not old and new.role() == "master"
            assert await client.get("mg:{alice}:x") == b"kept"  # the client follows the failover
            cluster.restart(old)
            cluster.wait_ok()
            assert old.role() == "slave" and cluster.primary_for_key("mg:{alice}:x") is new
            assert sum(int(last) - int(first) + 1 for first, last, *_ in new.command("CLUSTER", "SLOTS")) == SLOTS
        finally:
            await client.aclose()
    assert not any(n.alive for n in cluster.nodes)


async def test_a_cluster_that_is_down_makes_the_store_unavailable_not_broken(tmp_path: Path):
    """No replica to promote: once the nodes mark the cluster failed, commands answer
    CLUSTERDOWN even for slots of live primaries; the store turns that into
    MemoryUnavailable (503 on the memory API, fail-open on the chat path), like a lost
    connection."""

    from gateway.memory.factory import open_memory
    from gateway.memory.keys import KeySpace
    from gateway.memory.records import NewMemory, Tenant
    from gateway.runtime.errors import MemoryUnavailable
    from tests.memory.fakes import HashEmbedder

    with LocalCluster(tmp_path, primaries=3, replicas=0) as cluster:
        config = MemoryConfig(redis_url=cluster.url, cluster=True, socket_timeout_s=2, key_prefix="down")
        async with open_memory(config, embedder=HashEmbedder()) as store:
            tenant = Tenant("alice", "tutor")
            await store.add(tenant, NewMemory(scope="profile", type="semantic", text="I keep bees"))
            alive = cluster.primary_for_key(KeySpace("down").user_base("alice"))
            victim = next(n for n in cluster.nodes if n is not alive)
            cluster.kill(victim)
            deadline = time.monotonic() + 30
            while b"cluster_state:fail" not in alive.command("CLUSTER", "INFO"):  # type: ignore[operator]
                assert time.monotonic() < deadline, "the cluster was never marked failed"
                await asyncio.sleep(0.05)  # polling cluster gossip: nothing to wait on
            with pytest.raises(MemoryUnavailable):
                await store.search(tenant, "bees", top_k=3)
