"""``python -m bench load``: the memory path under load (issue 10, item 5).

One gateway process (``python -m gateway.cli serve``, this checkout's, with its in-serve
memorization worker and its embedded Redis) in front of a fixed-body upstream (nginx,
one worker, when installed; else the bench's asyncio server, :mod:`bench.proxy.upstream`).
Tenants are seeded through the API: ``--tenants`` x ``--memories`` memories via
``POST /v1/memories`` with a service key naming each tenant (``X-Memgate-User``).

Cells: three gateway configurations x two concurrencies (default 1 and 64):

- ``off``: no plugins (memory configured but unused);
- ``recall``: auto_recall + hybrid_injection + personalization + token_budget;
- ``recall+memorize``: the same plus memorize (verbatim mode: every user turn is
  stored; no memory model).

Load: :mod:`bench.proxy.loadgen` in its own process, keep-alive connections, every user
message new (a sequence number and a token drawn per cell in it) and the tenant cycling over all of them per
request. Per cell: req/s, p50/p99 of the whole reply (ms), and the share of replies
served with memory (status 200 without ``x-memgate-degraded``), with the degraded
reasons, and the CPU time of the gateway process and its children (its embedded
redis-server) per request sent, which moves far less than req/s when other work shares
the machine (for ``recall+memorize`` it includes memorizing, until the lag wait ends),
split into the gateway's event-loop thread (``loop``: HTTP, the chain, the store's
Python side; one core at most, so ``1000 / loop`` ms is the req/s ceiling of one gateway
process), its other threads (``threads``: the embedding model's worker) and its
children (``redis``: the embedded redis-server), and the Redis commands per request sent
(``INFO commandstats`` deltas of the embedded server: ``redis_cmds`` counts every command,
those a Lua script runs included, as Redis counts them; ``top_cmds`` the five most frequent).
For ``recall+memorize`` the memorization lag (``memgate_memorize_lag_seconds``
from ``/metrics``) is read when the load stops and polled until it is under 5 s (at
most ``--lag-wait`` seconds). The load average is reported before and after each cell:
figures from a shared machine are only comparable with it.

Run it nice'd (``nice -n 10 python -m bench load``); ``--provider`` repeats the table per
embedding provider (a fresh data dir each: a store records its model).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from bench.proxy.bodies import CHAT_PATH, PLAIN_MODEL, PLAIN_PREFIX, load_bodies
from bench.proxy.loadgen import SEQ_MARK, TENANT_MARK, Samples, run_loadgen
from bench.proxy.nginx import nginx_binary, start_nginx
from bench.proxy.process import Child, cpu_seconds, free_port, python_env
from bench.proxy.stats import percentile
from bench.proxy.upstream import start_builtin

SERVICE_KEY = "bench-load-service-key"
RECALL = [
    {"name": "auto_recall"},
    {"name": "hybrid_injection"},
    {"name": "personalization"},
    {"name": "token_budget"},
]
MODES: dict[str, list[dict[str, Any]]] = {
    "off": [],
    "recall": RECALL,
    "recall+memorize": [*RECALL, {"name": "memorize", "config": {"mode": "verbatim"}}],
}
_TOPICS = [
    "cooking Italian food", "hiking in the Alps", "playing the piano", "learning Japanese",
    "running marathons", "reading science fiction", "growing tomatoes", "watching old films",
    "sailing on the lake", "building furniture", "photographing birds", "baking sourdough bread",
]


def memory_text(tenant: int, i: int) -> dict[str, str]:
    """The ``i``-th seeded memory of ``tenant`` (a NewMemory body): facts and a few preferences."""
    topic = _TOPICS[(tenant + i) % len(_TOPICS)]
    if i % 10 == 0:
        return {"scope": "profile", "type": "preference", "text": f"Prefers short answers about {topic} (note {i})"}
    if i % 2:
        return {"scope": "event", "type": "episodic", "text": f"Last week went {topic} with a friend, visit {i}"}
    return {"scope": "profile", "type": "semantic", "text": f"Enjoys {topic} and has done it for {i} years"}


def user_message(run: str = "") -> str:
    """The client's user message template; :data:`SEQ_MARK` makes every message of a run
    new, and ``run`` (a fresh token per cell) keeps one cell's messages from repeating an
    earlier cell's (the store's embedding cache would otherwise answer them)."""
    return f"Question {run}{SEQ_MARK.decode()}: any tips for my weekend plans with hobbies like cooking or hiking?"


def gateway_config(upstream_port: int, port: int, data_dir: Path, mode: str, provider: str,
                   generous_budgets: bool = False) -> dict[str, Any]:
    """gateway.yaml (as a mapping) for one cell's gateway. ``generous_budgets``: the chain's
    budgets, the recall plugins' query limits and the settings read get the test suite's
    generous limits (:data:`tests.support.gateway.GENEROUS_MS`) instead of the product's,
    so a busy machine does not degrade replies (the bench's test asserts every reply has
    memory)."""
    config: dict[str, Any] = {
        "server": {"host": "127.0.0.1", "port": port},
        "upstream": {"base_url": f"http://127.0.0.1:{upstream_port}{PLAIN_PREFIX}", "api_key": "upstream-key"},
        "clients": [{"key": SERVICE_KEY, "user_id": "bench", "service": True}],
        "memory": {"redis_url": None, "data_dir": str(data_dir), "embedding": {"provider": provider}},
        "plugins": MODES[mode],
        "telemetry": {"exporter": "none"},
    }
    if generous_budgets:
        from tests.support.gateway import GENEROUS_MS, generous

        config["plugins"] = generous(config["plugins"])
        config["chain"] = {"request_deadline_ms": GENEROUS_MS, "hook_budget_ms": GENEROUS_MS, "chunk_budget_ms": GENEROUS_MS}
        config["settings"] = {"read_timeout_ms": GENEROUS_MS}
    return config


def start_gateway(upstream_port: int, workdir: Path, data_dir: Path, mode: str, provider: str,
                  generous_budgets: bool = False) -> tuple[Child, int]:
    """``memgate serve`` for ``mode``, ready (``/healthz``)."""
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    conf = workdir / f"gateway-{mode}.yaml"
    conf.write_text(json.dumps(gateway_config(upstream_port, port, data_dir, mode, provider, generous_budgets), indent=2))
    child = Child(f"memgate-{mode}", [sys.executable, "-m", "gateway.cli", "serve", "--config", str(conf)],
                  workdir / f"memgate-{mode}.out", env=python_env())
    try:
        child.wait_ready(f"http://127.0.0.1:{port}/healthz", timeout=180)
    except BaseException:
        child.stop()
        raise
    return child, port


def tenant_headers(tenant: int | str) -> dict[str, str]:
    return {"authorization": f"Bearer {SERVICE_KEY}", "x-memgate-user": f"tenant-{tenant}"}


async def seed(port: int, tenants: int, memories: int, concurrency: int = 16) -> float:
    """Store ``memories`` memories for each of ``tenants`` tenants through the API;
    seconds taken. Raises ``RuntimeError`` on any non-201 answer."""
    import logging

    import httpx

    logging.getLogger("httpx").setLevel(logging.WARNING)
    jobs = [(t, i) for t in range(tenants) for i in range(memories)]
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        async def worker() -> None:
            while jobs:
                t, i = jobs.pop()
                response = await client.post("/v1/memories", json=memory_text(t, i), headers=tenant_headers(f"{t:02d}"))
                if response.status_code != 201:
                    raise RuntimeError(f"seeding failed: {response.status_code} {response.text[:300]}")

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


def cpu_split(pid: int) -> dict[str, float]:
    """CPU seconds so far of ``pid``'s main thread (``loop``), its other threads
    (``threads``) and its live descendants (``redis``), from ``/proc`` (Linux; zeros
    elsewhere). Resolution: one clock tick (10 ms)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    out = {"loop": 0.0, "threads": 0.0, "redis": 0.0}
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        out["loop" if task.name == str(pid) else "threads"] += (int(fields[11]) + int(fields[12])) / tick
    out["redis"] = max(cpu_seconds(pid) - out["loop"] - out["threads"], 0.0)
    return out


def redis_counts(data_dir: Path) -> dict[str, int]:
    """Calls so far per command (``INFO commandstats``) of the embedded redis-server of
    ``data_dir``; empty when its ``redis.url`` is missing or it does not answer."""
    import redis

    url_file = data_dir / "redis" / "redis.url"
    try:
        client = redis.Redis.from_url(url_file.read_text().strip())
    except OSError:
        return {}
    try:
        stats = client.info("commandstats")
        return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}
    except redis.RedisError:
        return {}
    finally:
        client.close()


def memorize_lag(port: int) -> float | None:
    """``memgate_memorize_lag_seconds`` from ``/metrics`` (None when absent)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    match = re.search(r"^memgate_memorize_lag_seconds(?:\{[^}]*\})?\s+([0-9.eE+-]+)", text, re.MULTILINE)
    return float(match.group(1)) if match else None


@dataclass
class Cell:
    """One measured cell."""

    provider: str
    mode: str
    concurrency: int
    samples: Samples
    load_before: float
    load_after: float
    lag: dict[str, Any] = field(default_factory=dict)
    cpu_ms: float | None = None  # gateway + its redis-server, per request sent (warm-up included)
    cpu_split_ms: dict[str, float] = field(default_factory=dict)  # cpu_ms by loop / threads / redis
    redis_cmds: dict[str, float] = field(default_factory=dict)  # Redis commands per request sent, by name

    @property
    def served(self) -> int:
        return len(self.samples.total)

    @property
    def with_memory(self) -> int:
        return self.served - sum(self.samples.degraded.values())

    def row(self) -> dict[str, Any]:
        s = self.samples
        rps = self.served / s.elapsed if s.elapsed else 0.0
        share = self.with_memory / self.served if self.served else 0.0
        return {
            "provider": self.provider, "mode": self.mode, "c": self.concurrency,
            "req_s": round(rps, 1),
            "p50_ms": round(percentile(s.total, 50) * 1000, 2) if s.total else None,
            "p99_ms": round(percentile(s.total, 99) * 1000, 2) if s.total else None,
            "with_memory": round(share, 4) if self.mode != "off" else None,
            "memory_req_s": round(rps * share, 1) if self.mode != "off" else None,
            "cpu_ms": None if self.cpu_ms is None else round(self.cpu_ms, 2),
            "cpu_split_ms": {k: round(v, 2) for k, v in self.cpu_split_ms.items()},
            "redis_cmds": round(sum(self.redis_cmds.values()), 1),
            "top_cmds": {k: round(v, 1) for k, v in sorted(self.redis_cmds.items(), key=lambda kv: -kv[1])[:5]},
            "errors": s.errors, "degraded": s.degraded,
            "load": f"{self.load_before:.2f}->{self.load_after:.2f}", **({"lag": self.lag} if self.lag else {}),
        }


def render(cells: list[Cell]) -> str:
    """A Markdown table of the cells."""
    lines = ["| provider | plugins | c | req/s | p50 ms | p99 ms | with memory | req/s with memory | CPU ms / req "
             "| loop / threads / redis | Redis cmds / req | load avg | notes |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|"]
    for cell in cells:
        r = cell.row()
        share = "-" if r["with_memory"] is None else f"{r['with_memory'] * 100:.1f} %"
        mem = "-" if r["memory_req_s"] is None else f"{r['memory_req_s']}"
        notes = ", ".join(f"{k} {v}" for k, v in r["degraded"].items())
        if r["errors"]:
            notes += f" errors {r['errors']}"
        if "lag" in r:
            notes += f" lag {r['lag']}"
        split = " / ".join(str(r["cpu_split_ms"].get(k, "-")) for k in ("loop", "threads", "redis"))
        lines.append(f"| {r['provider']} | {r['mode']} | {r['c']} | {r['req_s']} | {r['p50_ms']} | {r['p99_ms']} "
                     f"| {share} | {mem} | {r['cpu_ms']} | {split} | {r['redis_cmds']} "
                     f"| {r['load']} | {notes} |")
    return "\n".join(lines)


def measure(
    provider: str, upstream_port: int, workdir: Path, tenants: int, memories: int,
    concurrencies: list[int], requests: int, requests_c1: int, lag_wait: float, modes: list[str],
    generous_budgets: bool = False,
) -> list[Cell]:
    """Every cell for one embedding provider (fresh data dir, seeded once)."""
    data_dir = workdir / f"data-{provider}"
    cells: list[Cell] = []
    seeded = False
    headers = {"authorization": f"Bearer {SERVICE_KEY}", "x-memgate-user": f"tenant-{TENANT_MARK.decode()}"}
    for mode in modes:
        child, port = start_gateway(upstream_port, workdir, data_dir, mode, provider, generous_budgets)
        try:
            if not seeded:
                took = asyncio.run(seed(port, tenants, memories))
                click.echo(f"[{provider}] seeded {tenants} x {memories} memories in {took:.1f} s", err=True)
                seeded = True
            for concurrency in concurrencies:
                n = requests_c1 if concurrency == 1 else requests
                warmup = min(n // 10, 20 * concurrency)
                body = json.dumps({"model": PLAIN_MODEL, "messages": [
                    {"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": user_message(f"{secrets.token_hex(2)}-")},
                ]}).encode()
                before, split, commands = os.getloadavg()[0], cpu_split(child.pid), redis_counts(data_dir)
                samples = run_loadgen("127.0.0.1", port, "/v1" + CHAT_PATH, body, headers, requests=n,
                                      concurrency=concurrency, warmup=warmup,
                                      workdir=workdir, timeout=60.0, tenants=tenants)
                cell = Cell(provider, mode, concurrency, samples, before, os.getloadavg()[0])
                if "memorize" in mode:
                    cell.lag = lag_after(port, lag_wait)
                sent = len(samples.total) + samples.errors + warmup
                cell.cpu_split_ms = {k: max(v - split[k], 0.0) * 1000 / max(sent, 1) for k, v in cpu_split(child.pid).items()}
                cell.cpu_ms = sum(cell.cpu_split_ms.values())
                after = redis_counts(data_dir)
                cell.redis_cmds = {k: (v - commands.get(k, 0)) / max(sent, 1) for k, v in after.items()
                                   if v > commands.get(k, 0)}
                cells.append(cell)
                click.echo(json.dumps(cell.row()), err=True)
        finally:
            child.stop()
    return cells


def lag_after(port: int, wait: float) -> dict[str, Any]:
    """Memorization lag when the load stopped, and how long until it was under 5 s."""
    started = time.monotonic()
    at_stop = memorize_lag(port)
    lag = at_stop
    while lag is not None and lag >= 5.0 and time.monotonic() - started < wait:
        time.sleep(0.25)
        lag = memorize_lag(port)
    under = None if lag is None or lag >= 5.0 else round(time.monotonic() - started, 1)
    return {"at_stop_s": at_stop, "under_5s_after_s": under, "last_s": lag}


@click.command("load")
@click.option("--provider", "providers", multiple=True, default=("auto",), show_default=True,
              type=click.Choice(["auto", "local", "onnx", "model2vec"]), help="Embedding provider(s); repeat to compare.")
@click.option("--mode", "modes", multiple=True, default=tuple(MODES), show_default=True, type=click.Choice(list(MODES)))
@click.option("--tenants", type=int, default=16, show_default=True)
@click.option("--memories", type=int, default=60, show_default=True, help="Memories seeded per tenant.")
@click.option("--concurrency", "concurrencies", multiple=True, type=int, default=(1, 64), show_default=True)
@click.option("--requests", type=int, default=4000, show_default=True, help="Requests per cell at c > 1.")
@click.option("--requests-c1", type=int, default=400, show_default=True, help="Requests per cell at c = 1.")
@click.option("--lag-wait", type=float, default=10.0, show_default=True,
              help="Seconds to wait for the memorization lag to drop under 5 s after the load.")
@click.option("--builtin-upstream", is_flag=True, help="Use the asyncio upstream even when nginx is installed.")
@click.option("--json-out", type=click.Path(dir_okay=False, path_type=Path), help="Write the rows as JSON here.")
@click.option("--generous-budgets", is_flag=True,
              help="Time budgets far above the product's (the suite's check on a busy machine; not for figures).")
def command(providers: tuple[str, ...], modes: tuple[str, ...], tenants: int, memories: int,
            concurrencies: tuple[int, ...], requests: int, requests_c1: int, lag_wait: float,
            builtin_upstream: bool, json_out: Path | None, generous_budgets: bool) -> None:
    """The memory path under load: plugins off / recall / recall + memorize (module docstring)."""
    if not 1 <= tenants <= 100:
        raise click.BadParameter("must be 1..100 (two-digit tenant numbers)", param_hint="--tenants")
    cells: list[Cell] = []
    with tempfile.TemporaryDirectory(prefix="memgate-load-") as tmp:
        workdir = Path(tmp)
        upstream_port = free_port()
        binary = None if builtin_upstream else nginx_binary()
        upstream = (start_nginx(binary, workdir / "nginx", upstream_port, load_bodies()) if binary
                    else start_builtin(upstream_port, workdir))
        click.echo(f"upstream: {'nginx ' + binary if binary else 'builtin asyncio server'}; "
                   f"cpus {os.cpu_count()}; load average {os.getloadavg()}", err=True)
        try:
            for provider in providers:
                cells += measure(provider, upstream_port, workdir, tenants, memories, list(concurrencies),
                                 requests, requests_c1, lag_wait, list(modes), generous_budgets)
        finally:
            upstream.stop()
    click.echo(render(cells))
    if json_out is not None:
        json_out.write_text(json.dumps([c.row() for c in cells], indent=2))
