"""End to end: Redis goes away or hangs; requests pass through unchanged, the breaker
opens and fails fast, and recall comes back by itself once Redis answers again."""

import json
import os
import signal
import time

import httpx
import pytest
import redis

from gateway.redis_server import EmbeddedRedis
from tests.recall.conftest import REGISTRY
from tests.support.gateway import ALICE_KEY

BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Recommend me a movie for tonight"}]}
BREAKER = {"failure_threshold": 2, "cooldown_s": 0.5}
PLUGINS = [{"name": "auto_recall", "config": {"breaker": BREAKER, "timeout_ms": 200}},
           {"name": "hybrid_injection", "config": {"breaker": BREAKER}}]


def post(gw):
    return httpx.post(gw.base_url + "/chat/completions", content=json.dumps(BODY).encode(), timeout=20,
                      headers={"authorization": f"Bearer {ALICE_KEY}", "content-type": "application/json"})


def degraded_reasons(gw, upstream, n):
    reasons = []
    for _ in range(n):
        response = post(gw)
        assert response.status_code == 200
        assert upstream.chat_requests()[-1].body == json.dumps(BODY).encode()  # went on unchanged
        reasons.append(response.headers.get("x-memgate-degraded"))
    return reasons


@pytest.fixture
def own_redis(tmp_path):
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


def test_redis_down_degrades_and_the_open_breaker_fails_fast(start_gateway, upstream, own_redis):
    gw = start_gateway(registry=REGISTRY, plugins=PLUGINS, memory={"redis_url": own_redis.url})
    assert degraded_reasons(gw, upstream, 1) == [None]
    own_redis.stop()
    reasons = degraded_reasons(gw, upstream, 4)
    assert reasons == ["auto_recall:memory_unavailable"] * 2 + ["auto_recall:breaker_open"] * 2
    spans = [s for s in gw.spans.get_finished_spans() if s.name == "plugin auto_recall.rewrite_request"]
    assert (spans[-1].end_time - spans[-1].start_time) / 1e6 < 1.0  # ms: no I/O while open


def test_a_hanging_redis_times_out_opens_the_breaker_and_recovery_is_automatic(start_gateway, upstream, own_redis):
    gw = start_gateway(registry=REGISTRY, plugins=PLUGINS, memory={"redis_url": own_redis.url})
    assert degraded_reasons(gw, upstream, 1) == [None]
    pid = redis.Redis.from_url(own_redis.url).info("server")["process_id"]
    os.kill(pid, signal.SIGSTOP)
    try:
        reasons = degraded_reasons(gw, upstream, 3)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert reasons == ["auto_recall:memory_timeout"] * 2 + ["auto_recall:breaker_open"]
    time.sleep(BREAKER["cooldown_s"])
    assert degraded_reasons(gw, upstream, 2) == [None, None]  # the probe succeeded and closed it
