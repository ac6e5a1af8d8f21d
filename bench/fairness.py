"""``python -m bench fairness``: one tenant's bulk or hostile calls against another
tenant's latency.

One gateway process (``python -m gateway.cli serve``, this checkout's, with its embedded
Redis and in-serve memorization worker; plugins ``world_book``, ``auto_recall``,
``hybrid_injection`` and ``memorize`` in verbatim mode) in front of the bench's asyncio
upstream (fixed reply). Tenant B (a service key naming ``tenant-b``) sends small chat
requests, ``--b-concurrency`` at a time, and its reply latencies are recorded:

- ``quiet``: B alone;
- ``regex``: tenant A owns a lorebook whose keys are catastrophic-backtracking regexes
  (``/(a|a)+$/`` and kin) and sends chats whose text triggers them (``"a" * 24 + "!"``),
  ``--a-concurrency`` at a time;
- ``keywords``: A sends memory writes with 100,000 keywords (refused), lorebook imports
  with 100,000 keys (refused) and memory writes with the most keywords allowed;
- ``ingest``: A sends conversation ingests of ``--ingest-messages`` messages x
  ``--ingest-chars`` characters (``POST /v1/memories`` with ``messages``).

Each phase runs ``--seconds``; B's p50 / p99 / max (ms) are reported with the ratio of
its p99 to the quiet p99 (target: at most 3), and A's status codes. The machine may be
shared: compare the ratios within one run, and rerun when the load average is high.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import click

from bench.proxy.bodies import PLAIN_MODEL, PLAIN_PREFIX
from bench.proxy.process import Child, free_port, python_env
from bench.proxy.stats import percentile
from bench.proxy.upstream import start_builtin

SERVICE_KEY = "bench-fairness-service-key"
PLUGINS: list[dict[str, Any]] = [
    {"name": "world_book"},
    {"name": "auto_recall"},
    {"name": "hybrid_injection"},
    {"name": "memorize", "config": {"mode": "verbatim"}},
]
HOSTILE_KEYS = ["/(a|a)+$/", "/(a+)+$/", "/(a|aa)+$/", "/(.*a){12}$/", "/^(a?){25}a{25}$/"]


def headers(tenant: str) -> dict[str, str]:
    return {"authorization": f"Bearer {SERVICE_KEY}", "x-memgate-user": tenant, "x-memgate-friend": "bench"}


def start_gateway(upstream_port: int, workdir: Path) -> tuple[Child, int]:
    port = free_port()
    conf = workdir / "gateway.yaml"
    conf.write_text(json.dumps({
        "server": {"host": "127.0.0.1", "port": port},
        "upstream": {"base_url": f"http://127.0.0.1:{upstream_port}{PLAIN_PREFIX}", "api_key": "upstream-key"},
        "clients": [{"key": SERVICE_KEY, "user_id": "bench", "friend_id": "bench", "service": True}],
        "memory": {"redis_url": None, "data_dir": str(workdir / "data")},
        "plugins": PLUGINS,
        "telemetry": {"exporter": "none"},
    }, indent=2))
    child = Child("memgate-fairness", [sys.executable, "-m", "gateway.cli", "serve", "--config", str(conf)],
                  workdir / "memgate.out", env=python_env())
    try:
        child.wait_ready(f"http://127.0.0.1:{port}/healthz", timeout=180)
    except BaseException:
        child.stop()
        raise
    return child, port


def chat_body(text: str) -> dict[str, Any]:
    return {"model": PLAIN_MODEL, "messages": [{"role": "system", "content": "You are a helpful assistant."},
                                               {"role": "user", "content": text}]}


async def tenant_b(client: Any, stop: asyncio.Event, concurrency: int) -> tuple[list[float], Counter[str]]:
    """B's chat latencies (ms) until ``stop``; status counts (``degraded`` when the reply
    carries ``x-memgate-degraded``)."""
    latencies: list[float] = []
    statuses: Counter[str] = Counter()

    async def one() -> None:
        while not stop.is_set():
            started = time.perf_counter()
            r = await client.post("/v1/chat/completions", json=chat_body(f"Any tips for hiking? {uuid.uuid4().hex[:8]}"),
                                  headers=headers("tenant-b"))
            latencies.append((time.perf_counter() - started) * 1000)
            degraded = r.headers.get("x-memgate-degraded")
            statuses[str(r.status_code) + (f" degraded {degraded}" if degraded else "")] += 1

    await asyncio.gather(*(one() for _ in range(concurrency)))
    return latencies, statuses


async def attacker(client: Any, phase: str, stop: asyncio.Event, concurrency: int, messages: int,
                   chars: int) -> Counter[str]:
    """Tenant A's calls of ``phase`` until ``stop``: status counts per kind of call."""
    seen: Counter[str] = Counter()
    a = headers("tenant-a")
    if phase == "regex":
        book = {"entries": {str(i): {"uid": i, "key": [key], "content": f"lore {i}"} for i, key in enumerate(HOSTILE_KEYS)}}
        r = await client.post("/v1/lorebooks", json=book, headers=a)
        seen[f"import {r.status_code}"] += 1

    async def one(n: int) -> None:
        k = 0
        while not stop.is_set():
            k += 1
            if phase == "regex":
                r = await client.post("/v1/chat/completions", json=chat_body("a" * 24 + "!"), headers=a)
                seen[f"chat {r.status_code}" + (" degraded" if r.headers.get("x-memgate-degraded") else "")] += 1
            elif phase == "keywords":
                kind = k % 3
                if kind == 0:
                    body: dict[str, Any] = {"scope": "profile", "text": f"note {n}-{k}", "keywords": [f"k{i}" for i in range(100_000)]}
                    r = await client.post("/v1/memories", json=body, headers=a)
                    seen[f"memory 100k keywords {r.status_code}"] += 1
                elif kind == 1:
                    book = {"entries": {"0": {"uid": 0, "key": [f"w{i}" for i in range(100_000)], "content": "x"}}}
                    r = await client.post("/v1/lorebooks", json=book, headers=a)
                    seen[f"lorebook 100k keys {r.status_code}"] += 1
                else:
                    body = {"scope": "profile", "text": f"note {n}-{k} " + uuid.uuid4().hex,
                            "keywords": [f"kw{n}x{k}x{i}" for i in range(64)]}
                    r = await client.post("/v1/memories", json=body, headers=a)
                    seen[f"memory 64 keywords {r.status_code}"] += 1
            else:
                tag = uuid.uuid4().hex
                body = {"messages": [{"role": "user" if i % 2 == 0 else "assistant",
                                      "content": (f"{tag} message {i} " + "lorem ipsum dolor sit amet " * chars)[:chars]}
                                     for i in range(messages)], "mode": "verbatim"}
                r = await client.post("/v1/memories", json=body, headers=a)
                seen[f"ingest {r.status_code}"] += 1

    await asyncio.gather(*(one(n) for n in range(concurrency)))
    return seen


async def run_phases(port: int, phases: list[str], seconds: float, b_concurrency: int, a_concurrency: int,
                     messages: int, chars: int) -> list[dict[str, Any]]:
    import httpx

    logging.getLogger("httpx").setLevel(logging.WARNING)
    rows: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=600, limits=limits) as client:
        for _ in range(20):  # warm-up: first embeddings, compiled books, connections
            await client.post("/v1/chat/completions", json=chat_body("warm up"), headers=headers("tenant-b"))
        quiet_p99 = None
        for phase in phases:
            stop = asyncio.Event()
            b_task = asyncio.ensure_future(tenant_b(client, stop, b_concurrency))
            a_task = (asyncio.ensure_future(attacker(client, phase, stop, a_concurrency, messages, chars))
                      if phase != "quiet" else None)
            await asyncio.sleep(seconds)
            stop.set()
            latencies, statuses = await b_task
            a_seen = await a_task if a_task is not None else Counter()
            latencies.sort()
            p99 = percentile(latencies, 99)
            if phase == "quiet":
                quiet_p99 = p99
            rows.append({
                "phase": phase, "b_requests": len(latencies), "b_p50_ms": round(percentile(latencies, 50), 1),
                "b_p99_ms": round(p99, 1), "b_max_ms": round(latencies[-1], 1),
                "p99_x_quiet": round(p99 / quiet_p99, 2) if quiet_p99 else None,
                "b_status": dict(statuses), "a_calls": dict(a_seen), "load_avg": os.getloadavg()[0],
            })
            click.echo(json.dumps(rows[-1]), err=True)
            await asyncio.sleep(2)  # let A's last calls and queued memorization settle
    return rows


@click.command("fairness")
@click.option("--seconds", default=15.0, show_default=True, help="Length of each phase.")
@click.option("--phase", "phases", multiple=True, default=("quiet", "regex", "keywords", "ingest"),
              show_default=True, type=click.Choice(["quiet", "regex", "keywords", "ingest"]),
              help="Phases in order; quiet first gives the baseline.")
@click.option("--b-concurrency", default=2, show_default=True, help="Tenant B's concurrent requests.")
@click.option("--a-concurrency", default=3, show_default=True, help="Tenant A's concurrent calls.")
@click.option("--ingest-messages", default=300, show_default=True, help="Messages per ingest call.")
@click.option("--ingest-chars", default=5000, show_default=True, help="Characters per ingested message.")
@click.option("--json-out", type=click.Path(dir_okay=False, path_type=Path), help="Write the rows as JSON here.")
def command(seconds: float, phases: tuple[str, ...], b_concurrency: int, a_concurrency: int, ingest_messages: int,
            ingest_chars: int, json_out: Path | None) -> None:
    """Tenant B's p99 while tenant A sends hostile regexes, huge keyword lists, bulk ingests."""
    with tempfile.TemporaryDirectory(prefix="memgate-fairness-") as tmp:
        workdir = Path(tmp)
        upstream_port = free_port()
        upstream = start_builtin(upstream_port, workdir)
        try:
            gateway, port = start_gateway(upstream_port, workdir)
            try:
                click.echo(f"cpus {os.cpu_count()}; load average {os.getloadavg()}", err=True)
                rows = asyncio.run(run_phases(port, list(phases), seconds, b_concurrency, a_concurrency,
                                              ingest_messages, ingest_chars))
            finally:
                gateway.stop()
        finally:
            upstream.stop()
    click.echo(json.dumps(rows, indent=2))
    if json_out is not None:
        json_out.write_text(json.dumps(rows, indent=2))
