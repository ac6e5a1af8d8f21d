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
Every message is a disclosure (:func:`message`: one memory per turn, after a
near-duplicate search), so the worker does verbatim mode's real work; the gateway embeds
with the product's default embedder unless ``--embedder local``. Reported: accepted,
memorized, lost, dead letters, and the seconds from Redis's return (and from the end of
the load) until everything was stored; the turns not yet stored when the load ended
(``backlog_at_load_end``) and the rate at which the worker, alone then, stored them
(``drain_jobs_per_s``); per turn, the seconds from the later of its acceptance and
Redis's return until its record was written (``turn_lag_p50_s``, ``turn_lag_max_s``: the
worst is what "every accepted turn memorized within N s of the stall's end" asks, also
for a turn accepted just before the load ends). ``--rate R``: a paced load instead of the closed loop (each
client sends R requests per second, the rate of a chat app's users, not of a load test).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import click
import httpx

from tests.memorization.test_outage import StoppableRedis
from tests.support.embedding import SharedLocalModel
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, GatewayServer, make_config
from tests.support.loopback import LoopbackServer
from tests.support.upstream_double import UpstreamDouble


def message(n: int) -> str:
    """The ``n``-th user message: a disclosure (verbatim mode forms one profile memory of
    it, searched for near-duplicates first), each with its own number, so none is a
    near-duplicate of another (numbers must match) and every accepted turn is one record."""
    return f"I walked my dog to lake number {n} and met my friend {uuid.uuid4().hex[:6]} there."


async def load(url: str, seconds: float, concurrency: int, redis: StoppableRedis, stop_at: float, stop_for: float,
               pause: bool = False, rate: float | None = None, backlog: Callable[[], Awaitable[int]] | None = None) -> dict:
    """Run the clients and the outage. ``rate``: requests per second per client, paced
    (client ``i`` sends its ``k``-th request at ``start + (k + i / concurrency) / rate``,
    at once when it is behind); None: closed loop (each client sends its next request
    when the previous one is answered). ``backlog``: awaited when the load ends, its
    value reported as ``backlog_at_load_end``."""
    accepted = errors = sent = 0
    started = time.monotonic()
    resumed: list[float] = []
    resumed_wall: list[float] = []
    accepted_at: dict[str, float] = {}  # message -> epoch seconds its 200 arrived

    async def client(index: int) -> None:
        nonlocal accepted, errors, sent
        async with httpx.AsyncClient(timeout=30) as http:
            k = 0
            while time.monotonic() - started < seconds:
                if rate is not None:
                    due = started + (k + index / concurrency) / rate
                    k += 1
                    if due - started >= seconds:
                        break
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                sent += 1
                text = message(sent)
                body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}
                r = await http.post(url + "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {ALICE_KEY}"})
                if r.status_code == 200:
                    accepted += 1
                    accepted_at[text] = time.time()
                else:
                    errors += 1

    async def outage() -> None:
        await asyncio.sleep(stop_at)
        await asyncio.to_thread(redis.pause if pause else redis.stop)
        await asyncio.sleep(stop_for)
        await asyncio.to_thread(redis.resume if pause else redis.start)
        resumed.append(time.monotonic())
        resumed_wall.append(time.time())

    await asyncio.gather(outage(), *(client(i) for i in range(concurrency)))
    ended = time.monotonic()
    left = await backlog() if backlog is not None else None
    return {"accepted": accepted, "errors": errors, "resumed_at": resumed[0], "load_ended_at": ended,
            "backlog_at_load_end": left, "accepted_at": accepted_at, "resumed_wall": resumed_wall[0]}


async def backlog_of(gateway: GatewayServer, memorization: object) -> int:
    """Turns accepted but not yet stored: buffered in the gateway, in the queue's streams
    (waiting or in flight: an entry leaves its stream when acked) or parked for retry."""
    stats = await gateway.on_server_loop(memorization.queue.stats())  # type: ignore[attr-defined]
    return int(memorization.buffered + stats.length + stats.retrying)  # type: ignore[attr-defined]


async def stored_records(url: str) -> list[dict]:
    """alice's records (the admin export, one JSON object a line)."""
    async with httpx.AsyncClient(timeout=120) as http:
        r = await http.get(url + "/v1/admin/users/alice/export", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
        r.raise_for_status()
        return [json.loads(line) for line in r.text.splitlines()]


def turn_lags(records: list[dict], accepted_at: dict[str, float], resumed_wall: float) -> list[float]:
    """For each stored turn, the seconds from the later of its acceptance (its 200) and
    Redis's return until its record was written (``created_at``): what "every turn
    memorized within N s of the stall's end" measures, for turns of the stall and after it."""
    lags = []
    for record in records:
        at = accepted_at.get(record.get("text", ""))
        if at is not None:
            written = datetime.fromisoformat(record["created_at"]).timestamp()
            lags.append(written - max(at, resumed_wall))
    return lags


async def wait_drained(gateway: GatewayServer, memorization: object, timeout_s: float) -> float:
    """The :func:`time.monotonic` moment the gateway's buffer and the queue were found
    empty (nothing waiting, in flight or parked for retry), polled every 0.2 s, at most
    ``timeout_s`` from now."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        stats = await gateway.on_server_loop(memorization.queue.stats())  # type: ignore[attr-defined]
        if memorization.buffered == 0 and stats.length == 0 and stats.pending == 0 and stats.retrying == 0:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.2)
    return time.monotonic()


@click.command("outage")
@click.option("--seconds", default=20.0, show_default=True, help="Length of the load.")
@click.option("--concurrency", default=16, show_default=True, help="Concurrent clients.")
@click.option("--stop-at", default=5.0, show_default=True, help="Seconds into the load when Redis stops.")
@click.option("--stop-for", default=6.0, show_default=True, help="Seconds Redis stays down.")
@click.option("--drain-timeout", default=900.0, show_default=True, help="Most seconds to wait for the backlog.")
@click.option("--pause", is_flag=True, help="Stall Redis (SIGSTOP / SIGCONT) instead of stopping it.")
@click.option("--embedder", type=click.Choice(["product", "local"]), default="product", show_default=True,
              help="product: the gateway's own (for a new store: script, onnx int8 for these English texts); local: the tests' torch MiniLM.")
@click.option("--rate", type=float, default=None,
              help="Paced load: requests per second per client (default: closed loop, as fast as answered).")
def command(seconds: float, concurrency: int, stop_at: float, stop_for: float, drain_timeout: float, pause: bool,
            embedder: str, rate: float | None) -> None:
    """Turns accepted vs memorized across a Redis stop."""
    redis = StoppableRedis(Path(tempfile.mkdtemp(prefix="mg-bench-outage-")))
    redis.start()
    double = UpstreamDouble()
    upstream = LoopbackServer(double, lifespan="off").start()
    config = make_config(upstream.url, redis.url, plugins=[
        {"name": "auto_recall"}, {"name": "hybrid_injection"},
        {"name": "memorize", "config": {"mode": "verbatim", "worker": {"block_ms": 50}}},
    ])
    # the product's embedder (memory.embedding.provider auto: script for a new store, onnx int8 for English texts);
    # --embedder local: the test suite's shared torch MiniLM instead (the figures before
    # this bench used it)
    gateway = GatewayServer(config, embedder=SharedLocalModel().for_gateway() if embedder == "local" else None).start()
    try:
        memorize = next(p.instance for p in gateway.gateway.chains.default.plugins if p.name == "memorize")
        result = asyncio.run(load(gateway.url, seconds, concurrency, redis, stop_at, stop_for, pause, rate,
                                  backlog=lambda: backlog_of(gateway, memorize.memorization)))
        drained_at = asyncio.run(wait_drained(gateway, memorize.memorization, drain_timeout))
        queue = asyncio.run(gateway.on_server_loop(memorize.memorization.queue.stats()))
        records = asyncio.run(stored_records(gateway.url))
        stored = len(records)
        lags = sorted(turn_lags(records, result.pop("accepted_at"), result.pop("resumed_wall")))
        resumed_at, ended_at = result.pop("resumed_at"), result.pop("load_ended_at")
        result.update(memorized=stored, lost=result["accepted"] - stored, dead_letters=queue.dead,
                      redis_down_s=stop_for, concurrency=concurrency, seconds=seconds,
                      how="SIGSTOP" if pause else "stop", embedder=embedder,
                      load="closed loop" if rate is None else f"{rate:g} req/s per client",
                      drained_s_after_load=round(drained_at - ended_at, 1),
                      drain_jobs_per_s=round(result["backlog_at_load_end"] / max(drained_at - ended_at, 1e-3), 1),
                      all_stored_s_after_redis_back=round(drained_at - resumed_at, 1),
                      turn_lag_p50_s=round(lags[len(lags) // 2], 2) if lags else None,
                      turn_lag_max_s=round(lags[-1], 2) if lags else None)
        click.echo(json.dumps(result))
    finally:
        gateway.stop()
        upstream.stop()
        redis.stop()
