"""A Redis Cluster primary killed under chat load (issue 15 item 4), the small version of
``python -m bench failover``: a private local cluster (3 primaries + 3 replicas), a real
gateway on it with recall and memorization, 4 clients for 8 s and on until 6 s after the
cluster is ok again, the primary of some users' slots SIGKILLed 3 s in and never
restarted. The recall plugins keep the product's 800 ms query limit (what makes recall
fail open while the slots have no primary: with 3 s, requests waited for the failover and
none degraded); the chain's budgets and the settings read (250 ms in the product) get
the suite's generous limits, and the recovery is judged on failures a dead node causes,
not on recall timeouts a busy machine causes to every user."""

from __future__ import annotations

import asyncio
import sys

import pytest

from bench.failover import run_failover
from tests.support.gateway import GENEROUS_MS

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the cluster harness needs Linux")


def test_at_most_the_replication_window_is_lost_and_recall_recovers_by_itself(tmp_path):
    result = run_failover(seconds=8.0, concurrency=4, users=12, kill_at=3.0, node_timeout_ms=1000,
                          breaker_cooldown_s=1.0, workers=2, drain_timeout_s=120.0, directory=tmp_path,
                          settings_read_timeout_ms=GENEROUS_MS, chain=None, min_after_ok_s=6.0)
    summary = result.summary(tail_s=3.0)
    assert summary["affected_users"] > 0 and result.accepted > 0
    assert summary["errors"] == 0  # the chat path never failed: memory fails open
    assert summary["dead_letters"] == 0
    assert result.memorized <= result.accepted, summary  # none memorized twice
    # Redis replication is asynchronous and memgate sends no WAIT: a write the killed
    # primary acknowledged but had not yet sent to its replica is gone. The bench lost 0
    # in its runs; one run of this test under a loaded machine lost 1 of 589 (README,
    # "A cluster primary killed under load"). Bounded here, not hidden: at most 1 %.
    assert result.accepted - result.memorized <= max(1, result.accepted // 100), summary
    assert summary["degraded"] > 0, summary  # recall did fail open for the affected users...
    # ...and serves them with memory again, no restart: judged on their replies in the last
    # 3 s. None may fail for the dead node (breaker_open, memory_unavailable, any error);
    # a recall over the product's 800 ms limit (memory_timeout) is a busy machine, which
    # hits every user alike (seen seconds after the cluster was ok, and before the kill,
    # for users of healthy shards), so it only may not be the rule there.
    last = max(t for t, *_ in result.replies)
    affected = set(result.affected_users)
    tail = [d for t, user, _status, d in result.replies if user in affected and t > last - 3.0]
    reasons = [part for d in tail if d for part in d.split(",")]
    details = f"{summary}; tail of the affected users: {tail}"
    assert tail and all(r.endswith(":memory_timeout") for r in reasons), details
    assert 2 * sum(1 for d in tail if d) < len(tail), details


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
    client = cached = None
    try:
        config = MemoryConfig(redis_url=cluster.url, cluster=True, key_prefix="fo", socket_timeout_s=10.0)
        client = redis_client(cluster.url, config)
        inner = shared_model.for_gateway()
        cached = CachedEmbedder(inner, client, KeySpace("fo"), 3600)
        text = "Which crates went to the Lisbon depot?"
        expected = await inner.embed_many([text])
        cluster.kill(cluster.primary_for_key(cached._key(text)))
        got = await cached.embed_many([text])
        assert got.tolist() == expected.tolist()
    finally:
        if cached is not None:
            await cached.close()  # its write-back (to the dead node) ends before the client closes
        if client is not None:
            await client.aclose()
        cluster.stop()


async def test_an_enqueue_failing_with_a_non_redis_error_is_buffered_not_dropped(redis_url):
    """While a node dies, redis-py's cluster client has failed an enqueue with
    ``AttributeError: 'NoneType' object has no attribute 'writelines'`` (a connection torn
    down under the command; bench failover lost 1 accepted turn of 450 to it): the job is
    kept in the gateway's buffer and XADDed by its flusher, as for a lost connection."""
    import time
    import uuid
    from datetime import UTC, datetime

    import redis.asyncio as aredis

    from gateway.chain.sdk import CallContext
    from gateway.chain.services import PluginServices
    from gateway.proxy.assembly import reply_from_completion
    from gateway.proxy.wire import ChatRequest
    from gateway.runtime.principal import Principal
    from plugins.memorize import MemorizePlugin
    from tests.memorization.conftest import memorize_config, user_stream
    from tests.support.upstream_double import completion

    redis = aredis.Redis.from_url(redis_url)
    plugin = MemorizePlugin(memorize_config("verbatim"), PluginServices(redis=redis))
    queue = plugin.memorization.queue
    real_append, failures = queue.append, []

    async def torn_down_once(shard, fields):
        if not failures:
            failures.append(shard)
            raise AttributeError("'NoneType' object has no attribute 'writelines'")
        return await real_append(shard, fields)

    queue.append = torn_down_once
    call = CallContext(request_id="req_" + uuid.uuid4().hex, principal=Principal("k", "alice", "tutor"),
                       original=ChatRequest(model="gpt-4o-mini", messages=[
                           {"role": "user", "content": "Crate 17 went to the Lisbon depot."}]),
                       headers={}, upstream=None)  # type: ignore[arg-type]  # no upstream calls
    try:
        entry = await plugin.memorization.enqueue(call, reply_from_completion(completion("Noted.")), datetime.now(UTC))
        assert entry == "buffered" and failures
        deadline = time.monotonic() + 30
        while await redis.xlen(user_stream(queue)) == 0:  # the flusher retries with backoff
            assert time.monotonic() < deadline, "the buffered job never reached the stream"
            await asyncio.sleep(0.02)
        assert plugin.memorization.buffered == 0
    finally:
        await redis.aclose()

