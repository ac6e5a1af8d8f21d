"""A Redis Cluster primary killed under chat load (issue 15 item 4), the small version of
``python -m bench failover``: a private local cluster (3 primaries + 3 replicas), a real
gateway on it with recall and memorization, 4 clients for 14 s, the primary of some
users' slots SIGKILLed 3 s in and never restarted."""

from __future__ import annotations

import sys

import pytest

from bench.failover import run_failover

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the cluster harness needs Linux")


def test_no_accepted_turn_is_lost_and_recall_recovers_by_itself(tmp_path):
    result = run_failover(seconds=14.0, concurrency=4, users=12, kill_at=3.0, node_timeout_ms=1000,
                          breaker_cooldown_s=1.0, workers=2, drain_timeout_s=120.0, directory=tmp_path)
    summary = result.summary(tail_s=3.0)
    assert summary["affected_users"] > 0 and result.accepted > 0
    assert summary["errors"] == 0  # the chat path never failed: memory fails open
    assert summary["dead_letters"] == 0
    assert result.memorized == result.accepted, summary  # no accepted turn lost, none twice
    assert summary["degraded"] > 0, summary  # recall did fail open for the affected users...
    assert summary["recovered"], summary  # ...and serves them with memory again, no restart


async def test_a_dead_shard_holding_embedding_cache_keys_does_not_fail_embedding(tmp_path, shared_model):
    """The cache keys of query texts spread over every shard, unrelated to the tenant's:
    on a cluster a cache node that is down is skipped (the model embeds), so one dead
    primary does not fail every user's recall."""
    from gateway.memory.config import MemoryConfig
    from gateway.memory.embeddings.cache import CachedEmbedder
    from gateway.memory.factory import redis_client
    from gateway.memory.keys import KeySpace
    from tests.support.redis_cluster import LocalCluster

    cluster = LocalCluster(tmp_path / "cluster", primaries=3, replicas=0).start()  # no failover: it stays down
    client = None
    try:
        config = MemoryConfig(redis_url=cluster.url, cluster=True, key_prefix="fo", socket_timeout_s=1.0)
        client = redis_client(cluster.url, config)
        inner = shared_model.for_gateway()
        cached = CachedEmbedder(inner, client, KeySpace("fo"), 3600)
        text = "Which crates went to the Lisbon depot?"
        expected = await inner.embed_many([text])
        cluster.kill(cluster.primary_for_key(cached._key(text)))
        got = await cached.embed_many([text])
        assert got.tolist() == expected.tolist()
    finally:
        if client is not None:
            await client.aclose()
        cluster.stop()
