"""Benchmark (issue 9, item 1): does one huge chat message stall everybody else?

Starts the real pieces, each in its own process: an embedded Redis 8, the built-in
fixed-body upstream (:mod:`bench.proxy.upstream`: answers without parsing the body),
and ``memgate serve`` with the default plugin chain of ``gateway.yaml`` (auto_recall,
hybrid_injection, personalization, token_budget, memorize in verbatim mode with one
in-serve worker, local embeddings). This process is the client:

1. **baseline**: one small chat request at a time for ``--seconds`` s;
2. **under load**: the same small requests while another connection sends
   ``--big`` messages of ``--size`` bytes of unbroken hex (a new one as soon as the last
   was answered, each distinct so the memorize dedupe does not drop it; the small ones
   carry ``x-memgate-memorize: off``, so only big messages reach the worker);
3. **drain**: how long the in-serve worker needs until the memorization stream is empty.

Printed: p50 / p99 / max latency (ms) of the small requests in each phase, the number
that timed out (``--timeout`` s each), the big requests' latencies, and the drain time.
Run from the repo root:

    PYTHONPATH=$PWD .venv/bin/python bench/big_messages.py --size 10m --big 3
    PYTHONPATH=$PWD .venv/bin/python bench/big_messages.py --size 80k --big 20

``--json OUT`` writes the figures as JSON as well.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aredis

from bench.proxy.process import Child, free_port
from bench.proxy.stats import percentile
from bench.proxy.upstream import start_builtin
from gateway.memorization.keys import QueueKeys
from gateway.runtime.redis_server import EmbeddedRedis

BIGQ_STREAM = QueueKeys("bigq").stream(0)

KEY = "sk-bench-big-0123456789"
NO_MEMORIZE = {"x-memgate-memorize": "off"}  # only the big messages reach the worker


def parse_size(text: str) -> int:
    """``10m`` -> 10_485_760, ``80k`` -> 81_920, ``512`` -> 512."""
    text = text.strip().lower()
    scale = {"k": 1024, "m": 1024 * 1024}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def gateway_yaml(port: int, upstream_port: int, redis_url: str) -> dict[str, Any]:
    return {
        "server": {"host": "127.0.0.1", "port": port},
        "upstream": {"base_url": f"http://127.0.0.1:{upstream_port}/plain/v1", "api_key": "sk-upstream"},
        "clients": [{"key": KEY, "key_id": "bench", "user_id": "bench", "friend_id": "assistant"}],
        "memory": {"redis_url": redis_url, "key_prefix": "bigbench", "embedding": {"provider": "local"}},
        "plugins": [
            {"name": "auto_recall", "config": {"limit": 5, "threshold": 0.3, "high_relevance_threshold": 0.8}},
            {"name": "hybrid_injection", "config": {"placement": "separate", "max_rounds": 3}},
            {"name": "personalization"},
            {"name": "token_budget", "config": {"memory_tokens": 800}},
            {"name": "memorize", "config": {"mode": "verbatim", "queue": {"key_prefix": "bigq"}}},
        ],
        "telemetry": {"exporter": "none"},
    }


async def small_loop(session: aiohttp.ClientSession, url: str, stop: asyncio.Event, timeout: float,
                     out: list[float], timeouts: list[int]) -> None:
    i = 0
    while not stop.is_set():
        i += 1
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"hi, small request {i}"}]}
        started = time.perf_counter()
        try:
            async with session.post(url, json=body, headers=NO_MEMORIZE,
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                await resp.read()
                if resp.status != 200:
                    raise RuntimeError(f"small request answered {resp.status}")
            out.append((time.perf_counter() - started) * 1000)
        except TimeoutError:
            timeouts.append(i)


async def big_loop(session: aiohttp.ClientSession, url: str, size: int, count: int, timeout: float,
                   out: list[float], errors: list[str]) -> None:
    for _ in range(count):
        text = secrets.token_hex(size // 2 + 1)[:size]
        body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}).encode()
        started = time.perf_counter()
        try:
            async with session.post(url, data=body, headers={"content-type": "application/json"},
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                await resp.read()
                if resp.status != 200:
                    errors.append(f"status {resp.status}")
            out.append((time.perf_counter() - started) * 1000)
        except TimeoutError:
            errors.append("timeout")


def figures(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"n": 0}
    return {"n": len(samples), "p50_ms": round(percentile(samples, 50), 2),
            "p99_ms": round(percentile(samples, 99), 2), "max_ms": round(max(samples), 2)}


async def drain_seconds(redis_url: str, limit_s: float, expected: int) -> float | None:
    client = aredis.Redis.from_url(redis_url)
    started = time.perf_counter()
    try:
        # the reply is sent before the job is enqueued (completion phase): wait for it
        while time.perf_counter() - started < 10.0:
            info = await client.xinfo_stream(BIGQ_STREAM)
            if int(info.get("entries-added", 0)) >= expected:
                break
            await asyncio.sleep(0.05)
        while time.perf_counter() - started < limit_s:
            length = await client.xlen(BIGQ_STREAM) if await client.exists(BIGQ_STREAM) else 0
            pending = 0
            if length:
                info = await client.xpending(BIGQ_STREAM, "memorize")
                pending = int(info["pending"])
            retrying = await client.zcard(QueueKeys("bigq").retry(0))
            if not length and not pending and not retrying:
                return round(time.perf_counter() - started, 2)
            await asyncio.sleep(0.1)
        return None
    finally:
        await client.aclose()


async def measure(args: argparse.Namespace, base: str, redis_url: str) -> dict[str, Any]:
    url = base + "/v1/chat/completions"
    headers = {"authorization": f"Bearer {KEY}"}
    async with aiohttp.ClientSession(headers=headers) as small, aiohttp.ClientSession(headers=headers) as big:
        warm: list[float] = []
        stop = asyncio.Event()
        task = asyncio.create_task(small_loop(small, url, stop, args.timeout, warm, []))
        await asyncio.sleep(3.0)  # warm-up: first embeddings, connection pools
        stop.set()
        await task

        base_ms: list[float] = []
        base_to: list[int] = []
        stop = asyncio.Event()
        task = asyncio.create_task(small_loop(small, url, stop, args.timeout, base_ms, base_to))
        await asyncio.sleep(args.seconds)
        stop.set()
        await task

        load_ms: list[float] = []
        load_to: list[int] = []
        big_ms: list[float] = []
        big_err: list[str] = []
        stop = asyncio.Event()
        task = asyncio.create_task(small_loop(small, url, stop, args.timeout, load_ms, load_to))
        sender = asyncio.create_task(big_loop(big, url, args.size_bytes, args.big, args.timeout * 6, big_ms, big_err))
        try:
            await asyncio.wait_for(asyncio.shield(sender), args.seconds * 6)
        except TimeoutError:
            sender.cancel()
            big_err.append("sender gave up")
        # keep measuring while the worker memorizes what was sent
        drained = await drain_seconds(redis_url, args.drain_limit, len(big_ms))
        stop.set()
        await task
        client = aredis.Redis.from_url(redis_url)
        dead = int(await client.xlen(QueueKeys("bigq").dead(0))) if await client.exists(QueueKeys("bigq").dead(0)) else 0
        await client.aclose()
    return {
        "size_bytes": args.size_bytes, "big_messages": args.big,
        "baseline": {**figures(base_ms), "timeouts": len(base_to)},
        "under_load": {**figures(load_ms), "timeouts": len(load_to)},
        "big": {**figures(big_ms), "errors": big_err},
        "drain_s": drained, "dead_letters": dead,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="10m", help="Bytes per big message (k/m suffixes).")
    parser.add_argument("--big", type=int, default=3, help="How many big messages.")
    parser.add_argument("--seconds", type=float, default=10.0, help="Baseline phase length.")
    parser.add_argument("--timeout", type=float, default=10.0, help="Client timeout of a small request (s).")
    parser.add_argument("--drain-limit", type=float, default=60.0, help="Give up waiting for the worker after (s).")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args(argv)
    args.size_bytes = parse_size(args.size)

    import signal

    import yaml

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the clean-up below

    with tempfile.TemporaryDirectory(prefix="memgate-bigbench-") as tmp:
        work = Path(tmp)
        redis = EmbeddedRedis(work / "redis")
        redis.start()
        children: list[Child] = []
        try:
            upstream_port = free_port()
            children.append(start_builtin(upstream_port, work))
            port = free_port()
            config = work / "gateway.yaml"
            config.write_text(yaml.safe_dump(gateway_yaml(port, upstream_port, redis.url)))
            argv_gw = [sys.executable, "-c", "from gateway.cli.main import main; main()", "serve", "--config", str(config)]
            env = {"HF_HUB_OFFLINE": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", os.getcwd())}
            gateway = Child("gateway", argv_gw, work / "gateway.out", env=env)
            children.append(gateway)
            gateway.wait_ready(f"http://127.0.0.1:{port}/healthz", timeout=120)
            result = asyncio.run(measure(args, f"http://127.0.0.1:{port}", redis.url))
        finally:
            for child in reversed(children):
                child.stop(grace=5.0)
            redis.stop()
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
