"""Scores and rank fusion, sans-IO.

- VSIM ``WITHSCORES`` returns ``(1 + cos) / 2`` (Redis docs, "VSIM"); RediSearch COSINE
  returns the distance ``1 - cos``. Both become cosine clamped to [0, 1].
- Keyword scores are BM25 (Robertson & Zaragoza 2009) with k1 = 1.2, b = 0.75. The
  term-frequency part is computed at write time against a fixed average record length
  (:data:`AVG_RECORD_TOKENS`, memories are short sentences) so a posting is one number.
- Fusion is weighted reciprocal rank fusion (Cormack, Clarke & Buettcher 2009, k = 60).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ['AVG_RECORD_TOKENS', 'BM25_B', 'BM25_K1', 'RRF_K', 'bm25_idf', 'bm25_term_weight', 'clamp01', 'cosine_from_distance', 'cosine_from_vsim', 'fused_scores', 'weighted_rrf']

BM25_K1 = 1.2
BM25_B = 0.75
AVG_RECORD_TOKENS = 16.0
RRF_K = 60


def clamp01(value: float) -> float:
    """``value`` limited to [0, 1] (NaN -> 0)."""
    if value != value:  # NaN
        return 0.0
    return min(1.0, max(0.0, value))


def cosine_from_vsim(score: float) -> float:
    """VSIM score ``(1 + cos) / 2`` -> cosine in [0, 1]."""
    return clamp01(2.0 * score - 1.0)


def cosine_from_distance(distance: float) -> float:
    """RediSearch COSINE distance ``1 - cos`` -> cosine in [0, 1]."""
    return clamp01(1.0 - distance)


def bm25_term_weight(tf: int, record_tokens: int) -> float:
    """The tf part of BM25 for one term of one record (stored as the posting's score)."""
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * record_tokens / AVG_RECORD_TOKENS)
    return tf * (BM25_K1 + 1.0) / (tf + norm)


def bm25_idf(doc_freq: int, total_docs: int) -> float:
    """Lucene's non-negative idf: ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""
    return math.log(1.0 + (max(total_docs - doc_freq, 0) + 0.5) / (doc_freq + 0.5))


def fused_scores(vector_ids: Sequence[str], keyword_ids: Sequence[str], alpha: float) -> dict[str, float]:
    """Weighted RRF score of every id of both rankings, scaled by ``k + 1`` into (0, 1]:
    1.0 is first in both rankings, and an id found by one ranking only scores at most that
    ranking's weight. Ranks start at 1; an id missing from a ranking gets nothing from it.

    >>> fused_scores(["a", "b"], ["b", "c"], 0.5)["b"] > fused_scores(["a", "b"], ["b", "c"], 0.5)["a"]
    True
    """
    scores: dict[str, float] = {}
    for weight, ranking in ((alpha, vector_ids), (1.0 - alpha, keyword_ids)):
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + weight * (RRF_K + 1) / (RRF_K + rank)
    return scores


def weighted_rrf(vector_ids: Sequence[str], keyword_ids: Sequence[str], alpha: float) -> list[str]:
    """Ids of both rankings ordered by ``alpha/(k+rank_v) + (1-alpha)/(k+rank_k)``
    (:func:`fused_scores`). Ties keep the vector ranking's order, then the keyword
    ranking's.

    >>> weighted_rrf(["a", "b"], ["b", "c"], 0.5)
    ['b', 'a', 'c']
    """
    scores = fused_scores(vector_ids, keyword_ids, alpha)
    first: dict[str, int] = {}
    for position, doc_id in enumerate([*vector_ids, *keyword_ids]):
        first.setdefault(doc_id, position)
    return sorted(scores, key=lambda d: (-scores[d], first[d]))
