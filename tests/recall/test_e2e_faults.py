"""End to end: Redis goes away or hangs; requests pass through unchanged, the breaker
opens and fails fast, and recall comes back by itself once Redis answers again.

Nothing here depends on the machine's speed: the breaker reads a clock the test moves
(the breaker's injected clock, reached through the recall plugins' ``services``), so the
cool-down passes exactly when the test says; the recall time limit is generous, so a
loaded machine does not trip it, and where the test is about tripping it Redis is
stopped (SIGSTOP), so the search can never finish in time; "no I/O while open" is
checked by counting the store calls, not by timing them."""

import copy
import json
import os
import signal

import httpx
import pytest
import redis

from gateway.runtime.breaker import BreakerRegistry
from gateway.runtime.redis_server import EmbeddedRedis
from plugins.auto_recall import AutoRecall
from plugins.hybrid_injection import HybridInjection
from tests.recall.conftest import REGISTRY
from tests.support.gateway import ALICE_KEY

BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Recommend me a movie for tonight"}]}
BREAKER = {"failure_threshold": 2, "cooldown_s": 10.0}
#: ms: far above a search on a loaded machine; a stopped Redis still never answers in it
RECALL_TIMEOUT_MS = 3000
PLUGINS = [{"name": "auto_recall", "config": {"breaker": BREAKER, "timeout_ms": RECALL_TIMEOUT_MS}},
           {"name": "hybrid_injection", "config": {"breaker": BREAKER}}]


class Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class CountingStore:
    """The real store; counts ``search`` calls (each one is Redis I/O)."""

    def __init__(self, store) -> None:
        self.store = store
        self.searches = 0

    async def search(self, *args, **kwargs):
        self.searches += 1
        return await self.store.search(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.store, name)


@pytest.fixture
def clocked():
    """``(registry, clock, stores)``: the recall plugins with breakers on ``clock`` and
    their stores counted (``stores`` fills when the gateway builds its chains)."""
    clock, stores = Clock(), []
    breakers = BreakerRegistry(clock)

    def seam(services):
        store = CountingStore(services.memory)
        stores.append(store)
        seamed = copy.copy(services)  # the gateway's services with this test's breakers and store
        seamed.breakers, seamed.memory = breakers, store
        return seamed

    class ClockedAutoRecall(AutoRecall):
        def __init__(self, config, services) -> None:
            super().__init__(config, seam(services))

    class ClockedHybridInjection(HybridInjection):
        def __init__(self, config, services) -> None:
            super().__init__(config, seam(services))

    registry = {**REGISTRY, "auto_recall": ClockedAutoRecall, "hybrid_injection": ClockedHybridInjection}
    return registry, clock, stores


def post(gw):
    return httpx.post(gw.base_url + "/chat/completions", content=json.dumps(BODY).encode(), timeout=60,
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


def test_redis_down_degrades_and_the_open_breaker_fails_fast(start_gateway, upstream, own_redis, clocked):
    registry, _clock, stores = clocked
    gw = start_gateway(registry=registry, plugins=PLUGINS, memory={"redis_url": own_redis.url})
    assert degraded_reasons(gw, upstream, 1) == [None]
    own_redis.stop()
    reasons = degraded_reasons(gw, upstream, 2)
    assert reasons == ["auto_recall:memory_unavailable"] * 2
    searches = sum(s.searches for s in stores)
    reasons = degraded_reasons(gw, upstream, 2)
    assert reasons == ["auto_recall:breaker_open"] * 2
    assert sum(s.searches for s in stores) == searches  # open: refused with no I/O at all


def test_a_hanging_redis_times_out_opens_the_breaker_and_recovery_is_automatic(
        start_gateway, upstream, own_redis, clocked):
    registry, clock, _ = clocked
    # the memory settings read on the first request stays cached throughout (otherwise,
    # seconds into the hang, it times out too and adds settings:timeout: tests/test_settings.py)
    gw = start_gateway(registry=registry, plugins=PLUGINS, memory={"redis_url": own_redis.url},
                       settings={"cache_ttl_s": 3600})
    assert degraded_reasons(gw, upstream, 1) == [None]
    pid = redis.Redis.from_url(own_redis.url).info("server")["process_id"]
    os.kill(pid, signal.SIGSTOP)
    try:
        reasons = degraded_reasons(gw, upstream, 3)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert reasons == ["auto_recall:memory_timeout"] * 2 + ["auto_recall:breaker_open"]
    clock.advance(BREAKER["cooldown_s"] - 0.001)
    assert degraded_reasons(gw, upstream, 1) == ["auto_recall:breaker_open"]  # still cooling down
    clock.advance(0.001)
    assert degraded_reasons(gw, upstream, 2) == [None, None]  # the probe succeeded and closed it
