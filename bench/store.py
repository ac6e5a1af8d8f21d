"""``python -m bench store``: memory store latency and size (issue 3, item 10).

Measures, on a real Redis (an embedded redis-server in a temp dir unless ``--redis-url``):

- store query latency p50/p95 of ``search_by_vector`` (top 5, vector path; and with
  ``query_text`` for the hybrid path) at 1k, 10k, 100k memories in one tenant, and 1M
  memories spread over 10k tenants (random unit vectors, pipelined inserts);
- Redis bytes per memory: ``INFO memory`` ``used_memory`` delta / records inserted
  (record hash + vector set element + listing + keyword postings);
- query embedding latency p50/p95 of the local model, timed on its own.

Backends (``--backend``): ``auto`` measures every backend the server offers, side by side
(``vectorset`` on Redis >= 8; ``search`` too when the Query Engine is loaded, e.g.
``--redis-url`` of a Redis Stack or a redis-server started with the RediSearch module);
``--tenants N`` spreads each size over N tenants in the one index (issue 15 item 5:
``--sizes 100k --tenants 10000 --backend search``).

``--redis-url URL --keep`` leaves the memories in place; ``--reuse`` then queries them
instead of inserting again (a 100k seed takes minutes), e.g. to measure two versions of
the code on the same data in one sitting.

Targets (issue 3): store query p95 <= 5 ms at 100k memories in a tenant; query embedding
p50 <= 15 ms. Run from a checkout: ``python -m bench store --sizes 1k,10k,100k``.

``--cluster`` (issue 15): the same sizes on one plain node (the reference), then on a local
Redis Cluster of 1 and of 3 primaries (no replicas;
:class:`tests.support.redis_cluster.LocalCluster`, ``memory.cluster: true``),
the memories spread over ``--tenants`` tenants (default 300, so they spread over the
slots), written and queried by ``--concurrency`` tasks at once (default 16): insert
throughput (memories/s), query throughput (queries/s over all tasks) and per-query latency.
One Python client process drives it, so on a small machine the client, not Redis, may be
the limit; the figures say what one gateway process gets from 1 vs 3 shards.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np
import redis.asyncio as aredis

from bench.backends import BACKEND_CHOICES, available_backends
from gateway.memory.config import EmbeddingConfig, MemoryConfig
from gateway.memory.factory import open_store, redis_client
from gateway.memory.keys import KeySpace
from gateway.memory.records import NewMemory, Tenant
from gateway.memory.search import index_name
from gateway.memory.tenant_store import TenantMemoryStore
from gateway.runtime.redis_server import EmbeddedRedis

#: size name -> (memories, tenants)
SIZES = {"1k": (1_000, 1), "10k": (10_000, 1), "100k": (100_000, 1), "1m": (1_000_000, 10_000)}
INSERT_BATCH = 1000
VOCABULARY = [f"w{i}" for i in range(3000)]


class RandomDims:
    """Stands in for the model during inserts: only ``dimensions`` and ``model`` matter."""

    def __init__(self, dims: int):
        self.model, self.dimensions = "all-MiniLM-L6-v2", dims

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("the store benchmark inserts ready vectors")

    async def aclose(self) -> None:
        pass


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    """``{"p50", "p95", "p99", "n"}`` of latencies in milliseconds."""
    data = np.asarray(samples_ms)
    return {f"p{q}": round(float(np.percentile(data, q)), 3) for q in (50, 95, 99)} | {"n": len(data)}


def unit_rows(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    rows = rng.standard_normal((n, dims)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def sentence(rng: np.random.Generator, words: int = 12) -> str:
    return " ".join(VOCABULARY[i] for i in rng.integers(0, len(VOCABULARY), words))


async def used_memory(client: aredis.Redis) -> int:
    return int((await client.info("memory"))["used_memory"])


async def insert(store: TenantMemoryStore, tenants: list[Tenant], total: int, dims: int, rng) -> float:
    """Insert ``total`` memories round-robin over ``tenants``; returns seconds taken."""
    per_tenant, started = total // len(tenants), time.perf_counter()
    for tenant in tenants:
        for start in range(0, per_tenant, INSERT_BATCH):
            n = min(INSERT_BATCH, per_tenant - start)
            memories = [NewMemory(scope="profile", type="semantic", text=sentence(rng)) for _ in range(n)]
            await store.add_embedded(tenant, memories, unit_rows(rng, n, dims))
    return time.perf_counter() - started


async def insert_concurrently(store: TenantMemoryStore, tenants: list[Tenant], total: int, dims: int, rng,
                              concurrency: int) -> float:
    """:func:`insert` with the tenants split over ``concurrency`` tasks; seconds taken."""
    per_tenant, started = total // len(tenants), time.perf_counter()

    async def worker(mine: list[Tenant]) -> None:
        for tenant in mine:
            memories = [NewMemory(scope="profile", type="semantic", text=sentence(rng)) for _ in range(per_tenant)]
            await store.add_embedded(tenant, memories, unit_rows(rng, per_tenant, dims))

    await asyncio.gather(*(worker(tenants[i::concurrency]) for i in range(concurrency)))
    return time.perf_counter() - started


async def query_concurrently(store, tenants, dims, rng, queries: int, hybrid: bool, concurrency: int) -> dict:
    """``queries`` searches by ``concurrency`` tasks at once: latency percentiles and
    queries per second over all tasks."""
    samples: list[float] = []

    async def worker(offset: int) -> None:
        for i in range(offset, queries, concurrency):
            tenant, vector = tenants[i % len(tenants)], unit_rows(rng, 1, dims)[0]
            text = sentence(rng, 4) if hybrid else None
            started = time.perf_counter()
            await store.search_by_vector(tenant, vector, top_k=5, query_text=text)
            samples.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return {**percentiles(samples), "per_s": round(queries / (time.perf_counter() - started))}


async def bench_cluster(args: Options, rng) -> list[dict]:
    """Every size on one plain node (``cluster_primaries`` 0: the embedded redis-server,
    unix socket, the reference), then on local clusters of 1 and 3 primaries (module
    docstring)."""
    from tests.support.redis_cluster import LocalCluster

    results, n_tenants = [], args.tenants or 300
    for primaries in (0, 1, 3):
        async with AsyncExitStack() as stack:
            work = Path(tempfile.mkdtemp(prefix="memgate-bench-cluster-"))
            if primaries:
                url = stack.enter_context(LocalCluster(work, primaries=primaries, replicas=0)).url
            else:
                server = EmbeddedRedis(work, appendonly=False)
                url = await asyncio.to_thread(server.start)
                stack.callback(server.stop)
            config = MemoryConfig(redis_url=url, cluster=bool(primaries), socket_timeout_s=60)
            client = redis_client(url, config)
            stack.push_async_callback(client.aclose)
            for name in args.sizes:
                total = SIZES[name][0]
                store_config = config.model_copy(update={"backend": "vectorset", "key_prefix": f"bench{name}", "search_ef": args.ef})
                tenants = [Tenant(f"user{i}", "friend") for i in range(n_tenants)]
                async with open_store(client, store_config, embedder=RandomDims(args.dims), check_model=False) as store:
                    seconds = await insert_concurrently(store, tenants, total, args.dims, rng, args.concurrency)
                    result = {
                        "cluster_primaries": primaries, "size": name, "memories": total, "tenants": n_tenants,
                        "concurrency": args.concurrency, "insert_per_s": round(total / seconds),
                        "vector_query_ms": await query_concurrently(store, tenants, args.dims, rng, args.queries, False, args.concurrency),
                        "hybrid_query_ms": await query_concurrently(store, tenants, args.dims, rng, args.queries, True, args.concurrency),
                    }
                results.append(result)
                print(json.dumps(result), flush=True)
    return results


#: Commands a search sends itself (scripts count the commands they run inside them too,
#: so those are left out): the server time of a query is their ``INFO commandstats`` usec.
SEARCH_COMMANDS = frozenset({"evalsha", "evalsha_ro", "eval", "eval_ro", "fcall", "fcall_ro", "hget",
                             "FT.SEARCH", "FT.AGGREGATE", "FT.HYBRID"})


async def server_usec(client: aredis.Redis) -> int:
    """Microseconds the server spent in :data:`SEARCH_COMMANDS` since it started."""
    stats = await client.info("commandstats")
    return sum(int(v["usec"]) for k, v in stats.items() if k.removeprefix("cmdstat_") in SEARCH_COMMANDS)


async def query_latency(store, tenants, dims, rng, queries: int, hybrid: bool) -> dict[str, float]:
    """Client-side latency percentiles, plus ``server_us``: the mean server time per query
    (:func:`server_usec`), which a loaded machine's scheduling delays do not inflate."""
    samples = []
    client = store._repo.client
    before = await server_usec(client)
    for i in range(queries):
        tenant, vector = tenants[i % len(tenants)], unit_rows(rng, 1, dims)[0]
        text = sentence(rng, 4) if hybrid else None
        started = time.perf_counter()
        await store.search_by_vector(tenant, vector, top_k=5, query_text=text)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples) | {"server_us": round((await server_usec(client) - before) / queries, 1)}


async def seeded(store: TenantMemoryStore, tenants: list[Tenant], per_tenant: int) -> bool:
    """True when every tenant already holds ``per_tenant`` memories (a ``--keep`` run's)."""
    for tenant in tenants:
        if await store.count(tenant) != per_tenant:
            return False
    return True


async def bench_size(client, name: str, backend: str, args: Options, rng) -> dict:
    total, n_tenants = SIZES[name]
    n_tenants = args.tenants or n_tenants
    # calibrate off: the vectors are random (no model to fit relevance with), and the fit
    # is once per process, not a per-query cost
    config = MemoryConfig(redis_url="unused", backend=backend, key_prefix=f"bench{name}{backend}{n_tenants}",
                          search_ef=args.ef, calibrate=False)
    tenants = [Tenant(f"user{i}", "friend") for i in range(n_tenants)]
    async with open_store(client, config, embedder=RandomDims(args.dims), check_model=False) as store:
        reused = args.reuse and await seeded(store, tenants, total // n_tenants)
        if reused:  # two --reuse runs with one --seed send the same queries
            insert_per_s = bytes_per_memory = None
        else:
            before = await used_memory(client)
            seconds = await insert(store, tenants, total, args.dims, rng)
            after = await used_memory(client)
            insert_per_s, bytes_per_memory = round(total / seconds), round((after - before) / total)
        result = {
            "backend": backend, "size": name, "memories": total, "tenants": n_tenants, "ef": args.ef,
            "reused": reused, "insert_per_s": insert_per_s, "bytes_per_memory": bytes_per_memory,
            "vector_query_ms": await query_latency(store, tenants, args.dims, rng, args.queries, False),
            "hybrid_query_ms": await query_latency(store, tenants, args.dims, rng, args.queries, True),
        }
        if not args.keep and not reused and args.redis_url is not None:  # a temporary server just goes
            for tenant in tenants:
                await store.forget_user(tenant.user_id)
            if backend == "search":
                await client.execute_command("FT.DROPINDEX", index_name(KeySpace(config.key_prefix)))
    return result


async def bench_embedding(queries: int) -> dict:
    from gateway.memory.embeddings.local import LocalEmbedder

    embedder = await LocalEmbedder.load(EmbeddingConfig())
    try:
        await embedder.embed_many(["warm up"])
        samples = []
        for i in range(queries):
            started = time.perf_counter()
            await embedder.embed_many([f"what did I tell you about my trip number {i} last year?"])
            samples.append((time.perf_counter() - started) * 1000)
        return {"embedding_query_ms": percentiles(samples)}
    finally:
        await embedder.aclose()


async def run(args: Options) -> list[dict]:
    rng = np.random.default_rng(args.seed)
    results = []
    if args.cluster:
        return await bench_cluster(args, rng)
    async with AsyncExitStack() as stack:
        url = args.redis_url
        if url is None:
            server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="memgate-bench-")), appendonly=False)
            url = await asyncio.to_thread(server.start)
            stack.callback(server.stop)
        client = redis_client(url, MemoryConfig(socket_timeout_s=60))
        stack.push_async_callback(client.aclose)
        backends = await available_backends(client, args.backend)
        for name in args.sizes:
            for backend in backends:
                results.append(await bench_size(client, name, backend, args, rng))
                print(json.dumps(results[-1]), flush=True)
    if args.embedding_queries:
        results.append(await bench_embedding(args.embedding_queries))
        print(json.dumps(results[-1]), flush=True)
    return results


def parse_sizes(text: str) -> tuple[str, ...]:
    """``"1k,10k"`` -> ``("1k", "10k")``.

    Raises:
        ValueError: a size not in :data:`SIZES` (the message lists the choices).
    """
    sizes = tuple(s.strip().lower() for s in text.split(",") if s.strip())
    unknown = [s for s in sizes if s not in SIZES]
    if unknown or not sizes:
        raise ValueError(f"unknown sizes {unknown or [text]}; choose from {list(SIZES)}")
    return sizes


@dataclass(frozen=True)
class Options:
    """One run's settings; defaults are the command line's (``python -m bench store --help``)."""

    sizes: tuple[str, ...] = ("1k", "10k", "100k")
    redis_url: str | None = None
    queries: int = 500
    embedding_queries: int = 300
    dims: int = 384
    ef: int = MemoryConfig().search_ef
    seed: int = 1
    keep: bool = False
    reuse: bool = False
    cluster: bool = False
    concurrency: int = 16
    backend: str = "auto"
    tenants: int | None = None


def _sizes(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    try:
        return parse_sizes(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("store")
@click.option("--sizes", default="1k,10k,100k", show_default=True, callback=_sizes,
              help=f"Comma list of {','.join(SIZES)}.")
@click.option("--redis-url", default=None, help="Redis >= 8 to use (default: an embedded redis-server in a temp dir).")
@click.option("--queries", type=int, default=500, show_default=True, help="Store queries per size and path.")
@click.option("--embedding-queries", type=int, default=300, show_default=True, help="Query embeddings timed; 0 skips the model.")
@click.option("--dims", type=int, default=384, show_default=True, help="Vector size (all-MiniLM-L6-v2: 384).")
@click.option("--ef", type=int, default=MemoryConfig().search_ef, show_default=True, help="VSIM EF (memory.search_ef).")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--keep", is_flag=True, help="Keep the inserted data.")
@click.option("--reuse", is_flag=True,
              help="With --redis-url: query the memories an earlier --keep run left (same size and tenants) "
              "instead of inserting; no insert rate or bytes per memory then.")
@click.option("--cluster", is_flag=True, help="On one plain node, then local Redis Clusters of 1 and 3 primaries (module docstring).")
@click.option("--concurrency", type=int, default=16, show_default=True, help="--cluster: concurrent writers / searchers.")
@click.option("--backend", type=click.Choice(BACKEND_CHOICES), default="auto", show_default=True,
              help="auto: every backend the server offers, side by side.")
@click.option("--tenants", type=click.IntRange(min=1), default=None,
              help="Spread each size's memories over this many tenants (default: the size's own; 300 with --cluster).")
def command(**settings: object) -> None:
    """Memory store query latency, bytes per memory, query embedding latency; one JSON
    line per measurement."""
    asyncio.run(run(Options(**settings)))  # type: ignore[arg-type]
