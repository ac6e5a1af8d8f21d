"""``python -m bench outage``: turns accepted vs memorized across a Redis stop (issue 9
item 5).

A real gateway (in-process, loopback port) with ``auto_recall``, ``hybrid_injection`` and
``memorize`` (verbatim, one in-serve worker) on its own redis-server (unix socket, AOF
``always``); the upstream is the model double. ``--concurrency`` clients send chat
requests, each a new user message, for ``--seconds``; Redis is stopped ``--stop-at``
seconds in for ``--stop-for`` seconds and started again on the same files, or with
``--pause`` stalled instead (SIGSTOP, then SIGCONT: connections stay open and the
commands sent meanwhile run when it resumes, the case where a claim's reply is lost). Then the
gateway drains its buffer and queue (the backlog's speed is the worker's: one in-serve
worker), and the turns stored are counted against the requests answered 200 (accepted).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import uuid
from pathlib import Path

import click
import httpx

from tests.memorization.test_outage import StoppableRedis
from tests.support.embedding import SharedLocalModel
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, GatewayServer, make_config
from tests.support.loopback import LoopbackServer
from tests.support.upstream_double import UpstreamDouble


async def load(url: str, seconds: float, concurrency: int, redis: StoppableRedis, stop_at: float, stop_for: float,
               pause: bool = False) -> dict:
    accepted = errors = 0
    started = time.monotonic()

    async def client() -> None:
        nonlocal accepted, errors
        async with httpx.AsyncClient(timeout=30) as http:
            while time.monotonic() - started < seconds:
                body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"note {uuid.uuid4().hex}"}]}
                r = await http.post(url + "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {ALICE_KEY}"})
                if r.status_code == 200:
                    accepted += 1
                else:
                    errors += 1

    async def outage() -> None:
        await asyncio.sleep(stop_at)
        await asyncio.to_thread(redis.pause if pause else redis.stop)
        await asyncio.sleep(stop_for)
        await asyncio.to_thread(redis.resume if pause else redis.start)

    await asyncio.gather(outage(), *(client() for _ in range(concurrency)))
    return {"accepted": accepted, "errors": errors}


async def count_stored(url: str) -> int:
    async with httpx.AsyncClient(timeout=120) as http:
        r = await http.get(url + "/v1/admin/users/alice/export", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        r.raise_for_status()
        return len(r.text.splitlines())


async def wait_drained(gateway: GatewayServer, memorization: object, timeout_s: float) -> float:
    """Seconds until the gateway's buffer and the queue are empty (nothing waiting, in
    flight or parked for retry), polled every 0.5 s, at most ``timeout_s``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        stats = await gateway.on_server_loop(memorization.queue.stats())  # type: ignore[attr-defined]
        if memorization.buffered == 0 and stats.length == 0 and stats.pending == 0 and stats.retrying == 0:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.5)
    return time.monotonic() - started


@click.command("outage")
@click.option("--seconds", default=20.0, show_default=True, help="Length of the load.")
@click.option("--concurrency", default=16, show_default=True, help="Concurrent clients.")
@click.option("--stop-at", default=5.0, show_default=True, help="Seconds into the load when Redis stops.")
@click.option("--stop-for", default=6.0, show_default=True, help="Seconds Redis stays down.")
@click.option("--drain-timeout", default=900.0, show_default=True, help="Most seconds to wait for the backlog.")
@click.option("--pause", is_flag=True, help="Stall Redis (SIGSTOP / SIGCONT) instead of stopping it.")
def command(seconds: float, concurrency: int, stop_at: float, stop_for: float, drain_timeout: float, pause: bool) -> None:
    """Turns accepted vs memorized across a Redis stop."""
    redis = StoppableRedis(Path(tempfile.mkdtemp(prefix="mg-bench-outage-")))
    redis.start()
    double = UpstreamDouble()
    upstream = LoopbackServer(double, lifespan="off").start()
    config = make_config(upstream.url, redis.url, plugins=[
        {"name": "auto_recall"}, {"name": "hybrid_injection"},
        {"name": "memorize", "config": {"mode": "verbatim", "worker": {"block_ms": 50}}},
    ])
    gateway = GatewayServer(config, embedder=SharedLocalModel().for_gateway()).start()
    try:
        stalled = time.monotonic()
        result = asyncio.run(load(gateway.url, seconds, concurrency, redis, stop_at, stop_for, pause))
        memorize = next(p.instance for p in gateway.gateway.chains.default.plugins if p.name == "memorize")
        waited = asyncio.run(wait_drained(gateway, memorize.memorization, drain_timeout))
        queue = asyncio.run(gateway.on_server_loop(memorize.memorization.queue.stats()))
        stored = asyncio.run(count_stored(gateway.url))
        result.update(memorized=stored, lost=result["accepted"] - stored, drain_s=round(waited, 1),
                      dead_letters=queue.dead, redis_down_s=stop_for, concurrency=concurrency, seconds=seconds,
                      how="SIGSTOP" if pause else "stop",
                      all_stored_s_after_redis_back=round(time.monotonic() - stalled - stop_at - stop_for, 1))
        click.echo(json.dumps(result))
    finally:
        gateway.stop()
        upstream.stop()
        redis.stop()
