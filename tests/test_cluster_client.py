"""The gateway's Redis Cluster client (:func:`gateway.memory.factory.cluster_client`) across
a failover leaves no connection open: redis-py 7.4 put fresh node objects into its slot
table at every topology refresh while keeping the old ones in its node cache, so the
connections commands opened on them were dropped unclosed ("Unclosed ClusterNode object"
at garbage collection). A private cluster (3 primaries + 1 replica each), a primary
SIGKILLed under traffic, every topology refresh watched."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import warnings

import pytest

from gateway.memory.config import MemoryConfig
from gateway.memory.factory import cluster_client
from tests.support.redis_cluster import LocalCluster

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the cluster harness needs Linux")

KEYS = [f"k{i}" for i in range(48)]  # spread over every primary's slots


async def round_of_traffic(client) -> int:
    """SET then GET every key, concurrently; how many failed."""
    async def one(key: str) -> int:
        try:
            await client.set(key, "v")
            return 0 if await client.get(key) == b"v" else 1
        except Exception:  # a dead primary's keys fail until its replica takes over
            return 1

    return sum(await asyncio.gather(*(one(k) for k in KEYS)))


def assert_one_object_per_node(client) -> None:
    manager = client.nodes_manager
    for nodes in manager.slots_cache.values():
        assert all(node is manager.nodes_cache[node.name] for node in nodes)


async def test_a_failover_under_traffic_leaves_one_object_per_node_and_nothing_open(tmp_path):
    cluster = LocalCluster(tmp_path / "cluster", primaries=3, replicas=1, node_timeout_ms=1000).start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            config = MemoryConfig(redis_url=cluster.url, cluster=True, key_prefix="cc", socket_timeout_s=2.0)
            client = cluster_client(cluster.url, config)
            deadline = time.monotonic() + 30
            while await round_of_traffic(client):  # the first round also finds the topology
                assert time.monotonic() < deadline, "the client did not find the cluster"
            assert_one_object_per_node(client)
            victim = cluster.primary_for_key(KEYS[0])
            cluster.kill(victim)
            failover = asyncio.create_task(asyncio.to_thread(cluster.wait_ok))
            while not failover.done():  # traffic through the whole failover: refresh after refresh
                await round_of_traffic(client)
            await failover
            deadline = time.monotonic() + 30
            while await round_of_traffic(client):  # until every key is served by a live primary
                assert time.monotonic() < deadline, "the client did not find the new primary"
            assert_one_object_per_node(client)
            assert victim.url.removeprefix("redis://") not in client.nodes_manager.nodes_cache
            await client.aclose()
            known = [*client.nodes_manager.nodes_cache.values(), *client.retired_nodes]
            assert not [c for node in known for c in node._connections if c.is_connected]
            del client, known
            gc.collect()
        unclosed = [str(w.message) for w in caught if "Unclosed" in str(w.message)]
        assert unclosed == []
    finally:
        cluster.stop()
