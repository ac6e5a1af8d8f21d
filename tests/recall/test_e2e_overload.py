"""End to end (issue 10, item 2): a burst of concurrent chats larger than recall can serve
in time degrades only some requests, each flagged ``auto_recall:overloaded``; the others
keep their memory, and the circuit breaker stays closed (overload is not a store failure).

Recall here: the real local embedding model (one inference thread, ~5-30 ms a query) and
the real Redis. 64 requests at once with a 300 ms recall limit need ~1 s of embedding, so
some must be shed; two searches at a time keep each admitted one well inside its limit.
"""

import asyncio
import json

import httpx

from gateway.memory.records import Tenant
from gateway.runtime.breaker import BreakerConfig
from tests.recall.conftest import REGISTRY, memory
from tests.support.gateway import ALICE_KEY

BREAKER = {"failure_threshold": 2, "cooldown_s": 60}
PLUGINS = [{"name": "auto_recall", "config": {
    "breaker": BREAKER, "timeout_ms": 300, "threshold": 0.0, "admission": {"max_concurrent": 2},
}}]
BURST = 64


async def burst(gw):
    headers = {"authorization": f"Bearer {ALICE_KEY}", "content-type": "application/json"}
    limits = httpx.Limits(max_connections=BURST, max_keepalive_connections=BURST)
    async with httpx.AsyncClient(base_url=gw.base_url, headers=headers, timeout=30, limits=limits) as client:
        async def one(i):
            body = {"model": "gpt-4o", "messages": [{"role": "user", "content": f"Plan trip number {i} to the sea"}]}
            response = await client.post("/chat/completions", content=json.dumps(body).encode())
            assert response.status_code == 200
            return response.headers.get("x-memgate-degraded")

        return await asyncio.gather(*(one(i) for i in range(BURST)))


def test_a_burst_sheds_some_requests_as_overloaded_and_the_breaker_stays_closed(start_gateway, seed):
    gw = start_gateway(registry=REGISTRY, plugins=PLUGINS)
    seed(gw, Tenant("alice", "default"), memory("Alice loves sailing trips to the sea"))
    reasons = asyncio.run(burst(gw))
    served = [r for r in reasons if r is None]
    shed = [r for r in reasons if r is not None]
    assert served and shed, reasons
    assert set(shed) == {"auto_recall:overloaded"}, reasons
    breaker = gw.gateway.services.breakers.get(BreakerConfig(**BREAKER))
    assert breaker.state == "closed"
    assert asyncio.run(burst_one(gw)) is None  # after the burst recall works at once


async def burst_one(gw):
    headers = {"authorization": f"Bearer {ALICE_KEY}", "content-type": "application/json"}
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "One more trip?"}]}
    async with httpx.AsyncClient(base_url=gw.base_url, headers=headers, timeout=30) as client:
        response = await client.post("/chat/completions", content=json.dumps(body).encode())
    return response.headers.get("x-memgate-degraded")
