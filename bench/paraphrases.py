"""Paraphrase recall per embedder (issue 11 item 5): ``python -m bench.embedders --zh``.

The set, ``tests/fixtures/paraphrases/pairs.json``: 32 Chinese and 10 English
memory / paraphrase pairs from companion chat (preferences, events, people, health,
plans), the paraphrase sharing few words with its memory. Every memory of both languages
is one corpus (42 texts, embedded as stored memories); each paraphrase is embedded as a
search text (:func:`gateway.memory.embeddings.embed_query`'s role: ``query: `` for E5)
and ranks the whole corpus by cosine. Per language: top-1 (its own memory ranked first)
and recall@3 (ranked in the first three), as counts.

Through the store (``--zh``'s second table): the same memories added to a real store
(embedded Redis, vectorset backend) as one user's, each paraphrase searched with
``TenantMemoryStore.search`` (top 3) at ``memory.hybrid_alpha`` 0.3 (the default: BM25
fused in) and 1.0 (vector ranking alone).

Cosine ranges, for calibration (the relevance score of the ranking work must mean the
same for every embedder): "related" is each paraphrase with its own memory, "unrelated"
each paraphrase with every other memory of the same language.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

PAIRS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "paraphrases" / "pairs.json"
LANGUAGES = ("zh", "en")


def load_pairs(path: Path = PAIRS) -> dict[str, list[tuple[str, str]]]:
    """language -> [(memory, paraphrase), ...]."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {lang: [(m, p) for m, p in data[lang]] for lang in LANGUAGES}


async def evaluate(embedder: Any, pairs: dict[str, list[tuple[str, str]]] | None = None) -> dict[str, Any]:
    """Top-1 / recall@3 counts and cosine ranges per language for ``embedder`` (any
    :class:`~gateway.memory.embeddings.base.Embedder`)."""
    from gateway.memory.embeddings.base import QUERY_PREFIX, QUERY_PREFIXES

    pairs = pairs or load_pairs()
    memories = [m for lang in LANGUAGES for m, _ in pairs[lang]]
    prefix = QUERY_PREFIX if embedder.model in QUERY_PREFIXES else ""
    corpus = await embedder.embed_many(memories)
    out: dict[str, Any] = {"model": embedder.model}
    offset = 0
    for lang in LANGUAGES:
        n = len(pairs[lang])
        queries = await embedder.embed_many([prefix + p for _, p in pairs[lang]])
        sims = queries @ corpus.T  # (n, all memories)
        targets = np.arange(offset, offset + n)
        target_sim = sims[np.arange(n), targets]
        rank = (sims > target_sim[:, None]).sum(axis=1)  # 0 = ranked first
        block = sims[:, offset:offset + n]
        unrelated = block[~np.eye(n, dtype=bool)]
        out[lang] = {
            "pairs": n, "top1": int((rank == 0).sum()), "recall3": int((rank < 3).sum()),
            "missed_top1": [pairs[lang][i][1] for i in np.flatnonzero(rank > 0)],
            "related_cos": _spread(target_sim), "unrelated_cos": _spread(unrelated),
        }
        offset += n
    return out


def _spread(values: np.ndarray) -> dict[str, float]:
    return {k: round(float(v), 3) for k, v in (
        ("min", values.min()), ("p5", np.percentile(values, 5)), ("mean", values.mean()),
        ("p95", np.percentile(values, 95)), ("max", values.max()))}


def table(results: list[dict[str, Any]]) -> str:
    """Markdown: one row per embedder."""
    lines = ["| embedder | zh top-1 | zh recall@3 | en top-1 | en recall@3 | zh cosine related (min / mean / max) "
             "| zh cosine unrelated (mean / p95 / max) | en cosine related | en cosine unrelated |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        cells = [r["embedder"]]
        for lang in LANGUAGES:
            s = r[lang]
            cells += [f"{s['top1']}/{s['pairs']}", f"{s['recall3']}/{s['pairs']}"]
        for lang in LANGUAGES:
            rel, unrel = r[lang]["related_cos"], r[lang]["unrelated_cos"]
            cells += [f"{rel['min']} / {rel['mean']} / {rel['max']}", f"{unrel['mean']} / {unrel['p95']} / {unrel['max']}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


async def evaluate_store(embedder: Any, redis_url: str, alpha: float,
                         pairs: dict[str, list[tuple[str, str]]] | None = None) -> dict[str, Any]:
    """Top-1 / recall@3 counts per language through a real store's search (see module
    docstring) with ``hybrid_alpha`` ``alpha``."""
    import uuid

    from gateway.memory import NewMemory, Tenant
    from gateway.memory.config import MemoryConfig
    from gateway.memory.factory import open_memory

    pairs = pairs or load_pairs()
    config = MemoryConfig(redis_url=redis_url, backend="vectorset", key_prefix="pp" + uuid.uuid4().hex[:8],
                          hybrid_alpha=alpha)
    user = Tenant("paraphrase-user", "companion")
    out: dict[str, Any] = {"hybrid_alpha": alpha}
    async with open_memory(config, embedder=embedder) as store:
        memories = [m for lang in LANGUAGES for m, _ in pairs[lang]]
        added = await store.add(user, [NewMemory(scope="event", type="episodic", text=m) for m in memories])
        offset = 0
        for lang in LANGUAGES:
            top1 = recall3 = 0
            for i, (_, paraphrase) in enumerate(pairs[lang]):
                ids = [h.record.id for h in await store.search(user, paraphrase, top_k=3)]
                top1 += ids[:1] == [added[offset + i].id]
                recall3 += added[offset + i].id in ids
            out[lang] = {"pairs": len(pairs[lang]), "top1": top1, "recall3": recall3}
            offset += len(pairs[lang])
    return out


def store_table(results: list[dict[str, Any]]) -> str:
    """Markdown: one row per embedder and ``hybrid_alpha``."""
    lines = ["| embedder | hybrid_alpha | zh top-1 | zh recall@3 | en top-1 | en recall@3 |", "|---|---|---|---|---|---|"]
    for r in results:
        cells = [r["embedder"], str(r["hybrid_alpha"])]
        for lang in LANGUAGES:
            cells += [f"{r[lang]['top1']}/{r[lang]['pairs']}", f"{r[lang]['recall3']}/{r[lang]['pairs']}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
