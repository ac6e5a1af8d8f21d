"""``python -m bench memorize``: worker throughput and request-path enqueue cost (issue 5,
item 10).

Figures:

- **enqueue**: p50/p99/max of ``MemorizePlugin.enqueue`` (what ``on_complete`` does: hash
  the candidate turns + two Redis round trips: claim, XADD) for a request carrying ``--history``
  messages, over ``--enqueues`` calls; target p99 <= 1 ms.
- **verbatim jobs/s per worker**: ``--jobs`` jobs enqueued, then one worker drains them
  (redaction, plan, near-duplicate search, embedding with the store's model, store
  write, ack). Each job is one user message that is a disclosure ("I walked my dog Rex
  to lake number <i> and we met Anna."): verbatim mode (formation ``disclosure``) forms
  one profile memory of it, with two views (the reply follows it: ``context_after``), and
  searches the user's profile for a near-duplicate first (each number is new: none is).
- **verbatim, recalled**: as many jobs (other numbers), run after the verbatim ones (their
  memories are in the profile searched) and after each message was embedded as a
  recall query, as ``auto_recall`` does on the request path (not timed): the worker finds
  the message's vector in the embedding cache and embeds only the second view.
- **extract jobs/s per worker**: the same with an in-process instant memory model (an
  object answering ``complete_json`` at once with 2 facts; no HTTP), so the figure is
  the pipeline's own cost: decide/extract/reconcile plumbing, 2 searches, embedding,
  writes.

Redis: ``--redis-url`` or an embedded redis-server in a temporary directory.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from gateway.memorization.config import MemorizeConfig
from gateway.memorization.runtime import queue_for, run_workers, wait_drained
from gateway.memorization.schemas import Decision, ExtractedFact, Extraction, Reconciliation


class InstantModel:
    """An in-process memory model that answers every schema at once."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete_json(self, messages: list[dict[str, Any]], schema: type, name: str, **_: Any) -> Any:
        self.calls += 1
        if schema is Decision:
            return Decision(should_remember=True, reason="bench")
        if schema is Extraction:
            n = self.calls
            return Extraction(facts=[ExtractedFact(text=f"The user likes hobby number {n}", scope="profile"),
                                     ExtractedFact(text=f"The user went hiking on trip {n}", occurred="yesterday")],
                              gist=f"Conversation {n} about hobbies.")
        if schema is Reconciliation:
            return Reconciliation(decisions=[])
        raise ValueError(name)


def _call(plugin: Any, messages: list[dict[str, Any]]) -> tuple[Any, Any]:
    from gateway.chain.sdk import CallContext
    from gateway.proxy.assembly import reply_from_completion
    from gateway.proxy.wire import ChatRequest
    from gateway.runtime.principal import Principal

    call = CallContext(request_id="req_" + uuid.uuid4().hex, principal=Principal("k", "bench", "friend"),
                       original=ChatRequest(model="gpt-4o-mini", messages=messages), headers={},
                       upstream=None)  # type: ignore[arg-type]  # no upstream calls
    reply = reply_from_completion({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Sure, noted. " * 10}}]})
    return call, reply


def _history(n: int, tag: str) -> list[dict[str, Any]]:
    text = "I have been thinking about my garden, the tomatoes and the basil are growing well this year. "
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{tag} {i} {text}"} for i in range(n)]


async def bench_enqueue(redis: Any, count: int, history: int) -> dict[str, Any]:
    from gateway.chain.services import PluginServices
    from plugins.memorize import MemorizePlugin

    config = MemorizeConfig(queue={"key_prefix": "bq" + uuid.uuid4().hex[:8]})
    plugin = MemorizePlugin(config, PluginServices(redis=redis))
    now = datetime.now(UTC)
    samples = []
    base = _history(history - 1, "h")
    for i in range(count):
        call, reply = _call(plugin, [*base, {"role": "user", "content": f"new turn {i}"}])
        started = time.perf_counter()
        await plugin.memorization.enqueue(call, reply, now)
        samples.append((time.perf_counter() - started) * 1000)
    await _cleanup(redis, config)
    pings = []
    for _ in range(count):
        started = time.perf_counter()
        await redis.ping()
        pings.append((time.perf_counter() - started) * 1000)
    return {**_percentiles(samples), "history_messages": history, "calls": count,
            "ping": _percentiles(pings)}


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": statistics.median(ordered), "p99_ms": ordered[int(len(ordered) * 0.99) - 1], "max_ms": ordered[-1]}


async def bench_worker(redis: Any, store: Any, mode: str, jobs: int, recalled: bool = False,
                       worker: dict[str, Any] | None = None, memorize: dict[str, Any] | None = None,
                       text: str | None = None) -> dict[str, float]:
    """``recalled``: each message is first embedded as a recall query through the store's
    embedder (what ``auto_recall`` does on the request path; not timed), so the worker
    finds the message's vector in the embedding cache and embeds only the second view.
    Also reported: the process's CPU per job while the worker drains (the embedding
    thread included). ``worker``: ``memorize.worker`` settings over the bench's own;
    ``memorize``: other ``memorize`` settings (verbatim jobs); ``text``: the user message
    instead of the disclosure above, ``{i}`` replaced by the job's number."""
    from gateway.chain.services import PluginServices
    from gateway.memory.embeddings.base import query_text
    from plugins.memorize import MemorizePlugin

    config = MemorizeConfig(**{**((memorize or {}) if mode == "verbatim" else {}), "mode": mode,
                               "queue": {"key_prefix": "bq" + uuid.uuid4().hex[:8]},
                               "worker": {"block_ms": 20, **(worker or {})}})
    plugin = MemorizePlugin(config, PluginServices(redis=redis))
    now = datetime.now(UTC)
    first = jobs if recalled else 0  # other numbers than the plain run's: nothing cached from it
    template = text or "I walked my dog Rex to lake number {i} and we met Anna."
    texts = [template.replace("{i}", str(i)) for i in range(first, first + jobs)]
    for text in texts:
        call, reply = _call(plugin, [{"role": "user", "content": text}])
        await plugin.memorization.enqueue(call, reply, now)
    if recalled:
        await store.embedder.embed_many([query_text(store.embedder, t) for t in texts])
        await store.embedder.flush()  # the cache write-back landed, as a request's does long before its job runs
    model = InstantModel() if mode == "extract" else None
    started, cpu = time.perf_counter(), time.process_time()
    async with run_workers(config, redis, store, n=1, model=model):
        await wait_drained(queue_for(config, redis), timeout_s=600, poll_s=0.05)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    await _cleanup(redis, config)
    return {"jobs": jobs, "seconds": seconds, "jobs_per_s": jobs / seconds, "cpu_ms_per_job": cpu / jobs * 1000}


async def _cleanup(redis: Any, config: MemorizeConfig) -> None:
    keys = [k async for k in redis.scan_iter(match=config.queue.key_prefix + ":*", count=1000)]
    for start in range(0, len(keys), 500):
        await redis.unlink(*keys[start:start + 500])


@dataclass(frozen=True)
class Options:
    """One run's settings; defaults are the command line's (``python -m bench memorize --help``)."""

    redis_url: str | None = None
    jobs: int = 200
    enqueues: int = 2000
    history: int = 20
    provider: str = "auto"
    json_out: str | None = None
    worker: str | None = None
    memorize: str | None = None
    text: str | None = None


async def run(args: Options) -> dict[str, Any]:
    import redis.asyncio as aredis

    from gateway.memory.config import MemoryConfig
    from gateway.memory.factory import open_store
    from gateway.runtime.redis_server import EmbeddedRedis

    server = None
    url = args.redis_url
    if not url:
        server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="memgate-bench-")))
        url = await asyncio.to_thread(server.start)
    client = aredis.Redis.from_url(url)
    try:
        results: dict[str, Any] = {"enqueue": await bench_enqueue(client, args.enqueues, args.history)}
        memory = MemoryConfig(redis_url=url, key_prefix="bm" + uuid.uuid4().hex[:8],
                              embedding={"provider": args.provider})
        async with open_store(client, memory) as store:
            await store.warm()  # the model's first pass (session start-up) is not a job's cost
            worker = json.loads(args.worker) if args.worker else None
            memorize = json.loads(args.memorize) if args.memorize else None
            results["verbatim"] = await bench_worker(client, store, "verbatim", args.jobs, worker=worker,
                                                     memorize=memorize, text=args.text)
            results["verbatim_recalled"] = await bench_worker(client, store, "verbatim", args.jobs, recalled=True,
                                                              worker=worker, memorize=memorize, text=args.text)
            results["extract_instant_model"] = await bench_worker(client, store, "extract", args.jobs, worker=worker)
            keys = [k async for k in client.scan_iter(match=memory.key_prefix + ":*", count=1000)]
            for start in range(0, len(keys), 500):
                await client.unlink(*keys[start:start + 500])
        return results
    finally:
        await client.aclose()
        if server is not None:
            await asyncio.to_thread(server.stop)


@click.command("memorize")
@click.option("--redis-url", default=None, help="Redis >= 8 URL (default: an embedded server).")
@click.option("--jobs", type=int, default=200, show_default=True, help="Jobs per worker benchmark.")
@click.option("--enqueues", type=int, default=2000, show_default=True, help="Enqueue calls timed.")
@click.option("--history", type=int, default=20, show_default=True, help="Messages per request (history resent).")
@click.option("--provider", default="auto", show_default=True,
              type=click.Choice(["auto", "local", "onnx", "model2vec"]),
              help="memory.embedding.provider of the bench store (auto: by memory.embedding.language for a new store, script by default).")
@click.option("--json", "json_out", default=None, type=click.Path(dir_okay=False), help="Write results as JSON here.")
@click.option("--worker", default=None,
              help='memorize.worker settings for the worker runs, as JSON, e.g. \'{"batch": 128}\'.')
@click.option("--memorize", default=None,
              help='other memorize settings for the verbatim runs, as JSON, e.g. \'{"verbatim_clause_classifier": true}\'.')
@click.option("--text", default=None, help="The verbatim jobs' user message instead of the disclosure; {i}: the job's number.")
def command(**settings: object) -> None:
    """Memorization jobs/s per worker and the enqueue cost on the request path."""
    args = Options(**settings)  # type: ignore[arg-type]
    results = asyncio.run(run(args))
    e = results["enqueue"]
    print(f"enqueue (on_complete, {e['history_messages']} messages): p50 {e['p50_ms']:.3f} ms  "
          f"p99 {e['p99_ms']:.3f} ms  max {e['max_ms']:.3f} ms  ({e['calls']} calls)")
    print(f"embedding provider: {args.provider}")
    print(f"  reference: Redis PING round trip p50 {e['ping']['p50_ms']:.3f} ms  p99 {e['ping']['p99_ms']:.3f} ms")
    for name in ("verbatim", "verbatim_recalled", "extract_instant_model"):
        r = results[name]
        print(f"{name:<22} 1 worker: {r['jobs_per_s']:.1f} jobs/s ({r['jobs']} jobs in {r['seconds']:.2f} s, "
              f"{r['cpu_ms_per_job']:.2f} ms CPU per job)")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2))
