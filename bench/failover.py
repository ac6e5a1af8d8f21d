"""``python -m bench failover``: a Redis Cluster primary killed under chat load (issue 15
item 4).

A local cluster of the embedded redis-server (``--primaries`` primaries with one replica
each, ``cluster-node-timeout`` ``--node-timeout-ms``; :class:`tests.support.redis_cluster.LocalCluster`),
a real gateway (in-process, loopback port, ``memory.cluster: true``) with ``auto_recall``,
``hybrid_injection`` and ``memorize`` (verbatim, in-serve workers) and the product's
time budgets (recall 800 ms per query, 1 s per hook, 3 s per request phase); the upstream
is the model double. ``--concurrency`` clients send chat requests for ``--users`` end
users (a service key naming them, round robin), each a new user message, for
``--seconds``; ``--kill-at`` seconds in, the primary serving the first user's hash slot
is SIGKILLed (its replica is promoted by the cluster, nothing is restarted). Then the
queue drains and the memories are counted per user (admin export) against the requests
answered 200 (accepted).

Reported (one JSON object): ``accepted``, ``memorized``, ``lost`` (accepted -
memorized), ``errors`` (non-200 replies); for the users whose slots were on the killed
primary (``affected_users``): ``degraded`` replies (served without memory,
``x-memgate-degraded``) and ``degraded_window_s`` (kill to the last degraded reply),
``recovered`` (their replies in the last ``--tail-s`` seconds all carry no degradation);
``degraded_unaffected`` for the other users after the kill, ``degraded_before_kill`` for
all before it, ``degraded_reasons`` (``x-memgate-degraded`` entries of the whole run); ``cluster_ok_after_s`` (kill to every live
node reporting ``cluster_state:ok`` with the replica promoted) and ``drain_s``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import click
import httpx
from redis.cluster import key_slot

from gateway.memory.keys import escape_key_part
from tests.support.gateway import ADMIN_KEY, SERVICE_KEY, GatewayServer, make_config
from tests.support.loopback import LoopbackServer
from tests.support.redis_cluster import LocalCluster
from tests.support.upstream_double import UpstreamDouble

__all__ = ["FailoverResult", "command", "run_failover"]

#: the product's defaults (tests/support/gateway.make_config raises them for tests)
PRODUCT_CHAIN = {"request_deadline_ms": 3000.0, "hook_budget_ms": 1000.0, "chunk_budget_ms": 1000.0}
#: ms: the product's defaults of the recall plugins' store-query limit and the settings read
PRODUCT_RECALL_TIMEOUT_MS = 800.0
PRODUCT_SETTINGS_READ_TIMEOUT_MS = 250.0
#: s: the most the load goes on past ``seconds`` waiting for ``min_after_ok_s`` (run_failover)
MAX_EXTRA_S = 120.0


@dataclass
class FailoverResult:
    """What one run measured (module docstring)."""

    accepted: int = 0
    errors: int = 0
    memorized: int = 0
    per_user_accepted: dict[str, int] = field(default_factory=dict)
    replies: list[tuple[float, str, int, str]] = field(default_factory=list)  # (t - kill, user, status, x-memgate-degraded)
    affected_users: list[str] = field(default_factory=list)
    cluster_ok_after_s: float | None = None
    drain_s: float = 0.0
    dead_letters: int = 0

    def summary(self, tail_s: float) -> dict[str, Any]:
        affected = set(self.affected_users)
        degraded = [t for t, user, status, d in self.replies if d and user in affected and t >= 0]
        last_t = max((t for t, *_ in self.replies), default=0.0)
        tail = [d for t, user, _s, d in self.replies if user in affected and t > last_t - tail_s]
        return {
            "accepted": self.accepted, "memorized": self.memorized, "lost": self.accepted - self.memorized,
            "errors": self.errors, "dead_letters": self.dead_letters,
            "affected_users": len(affected), "users": len(self.per_user_accepted),
            "degraded": len(degraded),
            "degraded_window_s": round(max(degraded), 2) if degraded else 0.0,
            "degraded_unaffected": sum(1 for t, user, _s, d in self.replies if d and user not in affected and t >= 0),
            "degraded_before_kill": sum(1 for t, *_, d in self.replies if d and t < 0),
            "degraded_reasons": dict(Counter(part.strip() for *_, d in self.replies if d for part in d.split(","))),
            "recovered": bool(tail) and not any(tail),
            "cluster_ok_after_s": None if self.cluster_ok_after_s is None else round(self.cluster_ok_after_s, 2),
            "drain_s": round(self.drain_s, 1),
        }


def user_slot(user_id: str) -> int:
    """The hash slot of every key of ``user_id`` (its ``{<escaped id>}`` hash tag,
    :mod:`gateway.memory.keys`)."""
    return key_slot(("{" + escape_key_part(user_id) + "}").encode())


async def _load(url: str, users: list[str], seconds: float, concurrency: int, kill_at: float,
                kill: Any, result: FailoverResult, min_after_ok_s: float = 0.0) -> None:
    """``concurrency`` clients for ``seconds``, and (``min_after_ok_s`` > 0) on until that
    long after the cluster is ok again, at most :data:`MAX_EXTRA_S` more."""
    started = time.monotonic()
    killed_at: list[float] = []
    ok_at: list[float] = []

    def going() -> bool:
        now = time.monotonic()
        if now - started < seconds:
            return True
        if min_after_ok_s <= 0 or now - started >= seconds + MAX_EXTRA_S:
            return False
        return not ok_at or now < ok_at[0] + min_after_ok_s

    async def client(index: int) -> None:
        turn = index
        async with httpx.AsyncClient(timeout=60) as http:
            while going():
                user = users[turn % len(users)]
                turn += concurrency
                body = {"model": "gpt-4o-mini", "messages": [
                    {"role": "user", "content": f"Logbook entry {uuid.uuid4().hex[:12]}: crate {turn} shipped to dock {turn % 17}."}]}
                headers = {"authorization": f"Bearer {SERVICE_KEY}", "x-memgate-user": quote(user, safe="")}
                try:
                    reply = await http.post(url + "/v1/chat/completions", json=body, headers=headers)
                    status, degraded = reply.status_code, reply.headers.get("x-memgate-degraded", "")
                except httpx.HTTPError:
                    status, degraded = 0, ""
                result.replies.append((time.monotonic(), user, status, degraded))
                if status == 200:
                    result.accepted += 1
                    result.per_user_accepted[user] = result.per_user_accepted.get(user, 0) + 1
                else:
                    result.errors += 1

    async def fault() -> None:
        await asyncio.sleep(kill_at)
        killed_at.append(time.monotonic())
        result.cluster_ok_after_s = await asyncio.to_thread(kill)
        ok_at.append(time.monotonic())

    await asyncio.gather(fault(), *(client(i) for i in range(concurrency)))
    kill_time = killed_at[0] if killed_at else float("inf")  # reply times relative to the kill
    result.replies = [(t - kill_time, u, s, d) for t, u, s, d in result.replies]


async def _drain(url: str, timeout_s: float) -> tuple[float, int]:
    """Seconds until nothing is buffered, queued, in flight or parked for retry (polled
    every 0.2 s through the admin API, at most ``timeout_s``) and the dead letters."""
    started = time.monotonic()
    dead = 0
    async with httpx.AsyncClient(timeout=60, headers={"authorization": f"Bearer {ADMIN_KEY}"}) as http:
        while time.monotonic() - started < timeout_s:
            reply = await http.get(url + "/v1/admin/queue")
            if reply.status_code == 200:
                queues = reply.json()["data"]
                dead = sum(q["dead"] for q in queues)
                if all(q["length"] == 0 and q["pending"] == 0 and q["retrying"] == 0 and q["buffered"] == 0 for q in queues):
                    break
            await asyncio.sleep(0.2)
    return time.monotonic() - started, dead


async def _count(url: str, users: list[str]) -> int:
    total = 0
    async with httpx.AsyncClient(timeout=120, headers={"authorization": f"Bearer {ADMIN_KEY}"}) as http:
        for user in users:
            reply = await http.get(f"{url}/v1/admin/users/{quote(user, safe='')}/export")
            reply.raise_for_status()
            total += len([line for line in reply.text.splitlines() if line.strip()])
    return total


def run_failover(*, seconds: float = 20.0, concurrency: int = 8, users: int = 24, kill_at: float = 6.0,
                 primaries: int = 3, node_timeout_ms: int = 2000, drain_timeout_s: float = 300.0,
                 workers: int = 2, breaker_cooldown_s: float = 10.0, directory: Path | None = None,
                 recall_timeout_ms: float = PRODUCT_RECALL_TIMEOUT_MS,
                 settings_read_timeout_ms: float = PRODUCT_SETTINGS_READ_TIMEOUT_MS,
                 chain: dict[str, float] | None = PRODUCT_CHAIN, min_after_ok_s: float = 0.0) -> FailoverResult:
    """One run (module docstring); everything it starts is stopped before it returns.

    The time budgets default to the product's; the test on a busy machine raises them
    (``chain`` None: make_config's generous ones) so that only the dead shard, not a slow
    machine, degrades replies. ``min_after_ok_s``: the load goes on until that long after
    the cluster is ok again (at least ``seconds``), so the recovery window the summary's
    ``tail_s`` judges exists whatever the failover took."""
    own = directory is None
    root = directory or Path(tempfile.mkdtemp(prefix="mg-bench-failover-"))
    cluster = LocalCluster(root / "cluster", primaries=primaries, replicas=1, node_timeout_ms=node_timeout_ms).start()
    double = UpstreamDouble()
    upstream = LoopbackServer(double, lifespan="off").start()
    gateway: GatewayServer | None = None
    breaker = {"cooldown_s": breaker_cooldown_s}
    try:
        config = make_config(
            upstream.url, cluster.url,
            memory={"cluster": True, "embedding": {"provider": "onnx"}},
            settings={"read_timeout_ms": settings_read_timeout_ms},
            **({"chain": chain} if chain is not None else {}),
            plugins=[
                {"name": "auto_recall", "config": {"timeout_ms": recall_timeout_ms, "breaker": breaker}},
                {"name": "hybrid_injection", "config": {"timeout_ms": recall_timeout_ms, "breaker": breaker}},
                {"name": "memorize", "config": {"mode": "verbatim", "queue": {"shards": 2 * primaries}, "worker": {
                    "in_serve": workers, "block_ms": 50, "claim_min_idle_ms": 2000, "claim_every_s": 0.5}}},
            ],
        )
        gateway = GatewayServer(config).start()
        names = [f"fo-{i:03d}" for i in range(users)]
        victim = cluster.primary_for_slot(user_slot(names[0]))
        result = FailoverResult()
        result.affected_users = [u for u in names if cluster.primary_for_slot(user_slot(u)) is victim]

        def kill() -> float:
            at = time.monotonic()
            cluster.kill(victim)
            cluster.wait_ok(120)
            return time.monotonic() - at

        asyncio.run(_load(gateway.url, names, seconds, concurrency, kill_at, kill, result, min_after_ok_s))
        result.drain_s, result.dead_letters = asyncio.run(_drain(gateway.url, drain_timeout_s))
        result.memorized = asyncio.run(_count(gateway.url, names))
        return result
    finally:
        if gateway is not None:
            gateway.stop()
        upstream.stop()
        cluster.stop()
        if own:
            shutil.rmtree(root, ignore_errors=True)


@click.command("failover")
@click.option("--seconds", default=20.0, show_default=True, help="Length of the load.")
@click.option("--concurrency", default=8, show_default=True, help="Concurrent clients.")
@click.option("--users", default=24, show_default=True, help="End users (tenants), spread over the slots.")
@click.option("--kill-at", default=6.0, show_default=True, help="Seconds into the load when the primary is killed.")
@click.option("--primaries", default=3, show_default=True, help="Cluster primaries (each with one replica).")
@click.option("--node-timeout-ms", default=2000, show_default=True, help="cluster-node-timeout of every node.")
@click.option("--workers", default=2, show_default=True, help="Memorization workers in the gateway.")
@click.option("--breaker-cooldown-s", default=10.0, show_default=True,
              help="The recall plugins' breaker cool-down (the product's default: 10 s).")
@click.option("--tail-s", default=3.0, show_default=True, help="Window at the end in which the affected users must be served with memory.")
@click.option("--drain-timeout", default=300.0, show_default=True, help="Most seconds to wait for the queue to drain.")
def command(seconds: float, concurrency: int, users: int, kill_at: float, primaries: int, node_timeout_ms: int,
            workers: int, breaker_cooldown_s: float, tail_s: float, drain_timeout: float) -> None:
    """Accepted vs memorized turns, and recall failing open, across a primary's failover."""
    result = run_failover(seconds=seconds, concurrency=concurrency, users=users, kill_at=kill_at, primaries=primaries,
                          node_timeout_ms=node_timeout_ms, workers=workers, breaker_cooldown_s=breaker_cooldown_s,
                          drain_timeout_s=drain_timeout)
    click.echo(json.dumps({**result.summary(tail_s), "seconds": seconds, "concurrency": concurrency,
                           "kill_at": kill_at, "node_timeout_ms": node_timeout_ms, "breaker_cooldown_s": breaker_cooldown_s}))
