"""A relevance score that means the same whatever the embedder.

Cosine similarities are not comparable across embedding models: all-MiniLM-L6-v2 gives a
question and the memory that answers it ~0.4 in English, while its Chinese scores all sit
near 0.55, related or not (``python -m bench threshold-study``). So seed 000's
``high_relevance_threshold`` 0.8 meant "near paraphrase" for one model and "never" or
"anything" for another. Calibration turns a cosine into the probability that the pair is
related, measured for the embedder in use:

1. :data:`PAIRS_FILE` (package data, written for memgate) holds, per language (``en``,
   ``zh``), 24 *related* pairs (a request and a memory that matters to it, or a
   paraphrase: "What should I cook for dinner tonight?" / "I'm vegetarian.") and 24
   *unrelated* ones (the same requests with a memory about something else).
2. At the first search the store embeds them once with its own embedder (~200 short
   texts; the embedding cache keeps them), each request in the role a search text has
   (:func:`~gateway.memory.embeddings.base.query_text`: ``query: `` for E5) and each
   memory as a stored text, and takes each pair's cosine: the cosine a search compares.
   For E5 the roles matter: a ``query: `` request scores ~0.03 lower against its memory
   than the same text as a passage, so a curve fitted on passage/passage cosines put
   fewer than half of the related pairs over 0.8 at search time (13/24 English, 11/24
   Chinese, multilingual-e5-small).
3. Per language, a Gaussian is fitted to each set of cosines with one pooled standard
   deviation (floored at :data:`MIN_STD`); with equal priors the posterior is a logistic
   function of the cosine (linear discriminant analysis): ``relevance = 1 / (1 +
   exp(-(a * cos + b)))``, ``a = (m1 - m0) / s**2``, ``b = -(m1**2 - m0**2) / (2 s**2)``.
   It is 0.5 halfway between the two means, rises with the cosine, and stays near 0.5
   everywhere when the embedder cannot tell the sets apart (MiniLM on Chinese), so no
   unrelated memory reaches a 0.8 cut by accident.
4. A query with CJK characters uses the ``zh`` fit, any other the ``en`` one.

Fits are cached per process by the embedder's model name and size
(:func:`calibration_for`).
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from importlib import resources

import numpy as np

from gateway.memory.embeddings.base import Embedder, query_text, routes_to_cjk

__all__ = ['MIN_STD', 'PAIRS_FILE', 'Calibration', 'LanguageFit', 'calibration_for', 'fit', 'load_pairs']

PAIRS_FILE = "calibration_pairs.json"
MIN_STD = 0.02


@dataclass(frozen=True, slots=True)
class LanguageFit:
    """The logistic ``1 / (1 + exp(-(a * cos + b)))`` of one language, with the sample
    means it came from (for reports)."""

    a: float
    b: float
    related_mean: float
    unrelated_mean: float
    std: float

    def relevance(self, cosine: float) -> float:
        """P(related | cosine) in [0, 1]."""
        z = self.a * cosine + self.b
        if z < -60:
            return 0.0
        return 1.0 / (1.0 + math.exp(-z))


def fit(related: np.ndarray, unrelated: np.ndarray, iterations: int = 100) -> LanguageFit:
    """Platt's (1999) logistic fit of P(related | cosine) to two samples of cosines:
    maximum likelihood by Newton's method, with Platt's smoothed targets
    ``(n1 + 1) / (n1 + 2)`` and ``1 / (n0 + 2)`` so that separable samples still give a
    finite slope (module docstring)."""
    x = np.concatenate([related, unrelated]).astype(np.float64)
    n1, n0 = len(related), len(unrelated)
    t = np.concatenate([np.full(n1, (n1 + 1) / (n1 + 2)), np.full(n0, 1 / (n0 + 2))])
    a, b = 0.0, math.log((n1 + 1) / (n0 + 1))
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(a * x + b)))
        w = np.maximum(p * (1 - p), 1e-12)
        grad = np.array([np.sum((p - t) * x), np.sum(p - t)])
        hess = np.array([[np.sum(w * x * x), np.sum(w * x)], [np.sum(w * x), np.sum(w)]]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        a, b = a - float(step[0]), b - float(step[1])
        if abs(step[0]) + abs(step[1]) < 1e-9:
            break
    m1, m0 = float(np.mean(related)), float(np.mean(unrelated))
    pooled = np.concatenate([related - m1, unrelated - m0])
    return LanguageFit(a, b, m1, m0, float(np.sqrt(np.mean(pooled**2))))


@dataclass(frozen=True, slots=True)
class Calibration:
    """One embedder's fits by language."""

    model: str
    fits: dict[str, LanguageFit]

    def fit_for(self, query: str) -> LanguageFit:
        """The fit for ``query``: ``zh`` when it has a CJK character in its first 2,000
        characters, else ``en``: the script-routed embedder's rule, one function
        (:func:`~gateway.memory.embeddings.base.routes_to_cjk`)."""
        return self.fits["zh" if routes_to_cjk(query) else "en"]

    def relevance(self, cosine: float, query: str) -> float:
        """P(related) of a hit with ``cosine`` to ``query`` (:meth:`fit_for`)."""
        return self.fit_for(query).relevance(cosine)


def load_pairs() -> dict[str, dict[str, list[list[str]]]]:
    """The bundled pairs (:data:`PAIRS_FILE`): language -> related/unrelated -> pairs."""
    text = resources.files("gateway.memory").joinpath("data", PAIRS_FILE).read_text(encoding="utf-8")
    data = json.loads(text)
    return {lang: data[lang] for lang in ("en", "zh")}


def _cosines(vectors: np.ndarray) -> np.ndarray:
    """Cosine of rows 0/1, 2/3, ... of ``vectors``."""
    v = np.asarray(vectors, dtype=np.float64)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return np.sum(v[0::2] * v[1::2], axis=1)


async def compute(embedder: Embedder) -> Calibration:
    """Embed the bundled pairs with ``embedder`` (request as a search text, memory as a
    stored one; module docstring, step 2) and fit each language."""
    pairs = load_pairs()
    texts: list[str] = []
    spans: list[tuple[str, str, int, int]] = []
    for lang, sets in pairs.items():
        for kind in ("related", "unrelated"):
            start = len(texts) // 2
            texts += [t for request, memory in sets[kind] for t in (query_text(embedder, request), memory)]
            spans.append((lang, kind, start, len(texts) // 2))
    cos = _cosines(await embedder.embed_many(texts))
    samples = {(lang, kind): cos[a:b] for lang, kind, a, b in spans}
    fits = {lang: fit(samples[(lang, "related")], samples[(lang, "unrelated")]) for lang in pairs}
    return Calibration(getattr(embedder, "model", "?"), fits)


_CACHE: dict[tuple[str, int], asyncio.Task[Calibration]] = {}


async def calibration_for(embedder: Embedder) -> Calibration:
    """The embedder's calibration, computed once per process per (model, dimensions);
    concurrent first callers share one computation, and a failed one is retried by the
    next caller."""
    key = (str(getattr(embedder, "model", "?")), int(getattr(embedder, "dimensions", 0)))
    task = _CACHE.get(key)
    if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
        task = asyncio.ensure_future(compute(embedder))
        _CACHE[key] = task
    return await asyncio.shield(task)
