"""Paraphrase recall per embedder (issue 11 item 5): ``python -m bench.embedders --zh``.

The set, ``tests/fixtures/paraphrases/pairs.json``: 32 Chinese and 10 English
memory / paraphrase pairs from companion chat (preferences, events, people, health,
plans), the paraphrase sharing few words with its memory. Every memory of both languages
is one corpus (42 texts, embedded as stored memories); each paraphrase is embedded as a
search text (:func:`gateway.memory.embeddings.embed_query`'s role: ``query: `` for E5)
and ranks the whole corpus by cosine. Per language: top-1 (its own memory ranked first)
and recall@3 (ranked in the first three), as counts.

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
