"""Scores and rank fusion, sans-IO.

- VSIM ``WITHSCORES`` returns ``(1 + cos) / 2`` (Redis docs, "VSIM"); RediSearch COSINE
  returns the distance ``1 - cos``. Both become cosine clamped to [0, 1].
- Keyword scores are BM25 (Robertson & Zaragoza 2009) with k1 = 1.2, b = 0.75. The
  term-frequency part is computed at write time against a fixed average record length
  (:data:`AVG_RECORD_TOKENS`, memories are short sentences) so a posting is one number.
- Fusion (``memory.fusion``) is either a convex combination of the two scores, each
  divided by its maximum over the candidates (:func:`convex_scores`; Bruch, Gai & Ingber
  2023, "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS), or weighted
  reciprocal rank fusion of the two rankings (:func:`fused_scores`, :func:`weighted_rrf`;
  Cormack, Clarke & Buettcher 2009, k = 60). ``memory.hybrid_alpha`` is the vector side's
  weight in both.
- :func:`rerank` adds the other signals (:mod:`gateway.memory.signals`) to the fused
  score with the weights of :class:`~gateway.memory.config.RankingConfig`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.memory.config import RankingConfig
from gateway.memory.records import MemoryRecord
from gateway.memory.signals import carries_date, emotion_of, is_when_question, query_period, recency, record_emotion, speaker_of
from gateway.memory.tokenize import tokenize

__all__ = ['AVG_RECORD_TOKENS', 'BM25_B', 'BM25_K1', 'RRF_K', 'QuerySignals', 'bm25_idf', 'bm25_term_weight', 'clamp01', 'convex_scores', 'cosine_from_distance', 'cosine_from_vsim', 'fused_scores', 'rerank', 'weighted_rrf']

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


def fused_scores(vector_ids: Sequence[str], keyword_ids: Sequence[str], alpha: float, k: int = RRF_K) -> dict[str, float]:
    """Weighted RRF score of every id of both rankings, scaled by ``k + 1`` into (0, 1]:
    1.0 is first in both rankings, and an id found by one ranking only scores at most that
    ranking's weight. Ranks start at 1; an id missing from a ranking gets nothing from it.

    >>> fused_scores(["a", "b"], ["b", "c"], 0.5)["b"] > fused_scores(["a", "b"], ["b", "c"], 0.5)["a"]
    True
    """
    scores: dict[str, float] = {}
    for weight, ranking in ((alpha, vector_ids), (1.0 - alpha, keyword_ids)):
        for rank, doc_id in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + weight * (k + 1) / (k + rank)
    return scores


def weighted_rrf(vector_ids: Sequence[str], keyword_ids: Sequence[str], alpha: float, k: int = RRF_K,
                 scores: Mapping[str, float] | None = None) -> list[str]:
    """Ids of both rankings ordered by ``alpha/(k+rank_v) + (1-alpha)/(k+rank_k)``
    (:func:`fused_scores`; ``scores``: its result for these arguments when the caller
    already has it). Ties keep the vector ranking's order, then the keyword ranking's.

    >>> weighted_rrf(["a", "b"], ["b", "c"], 0.5)
    ['b', 'a', 'c']
    """
    if scores is None:
        scores = fused_scores(vector_ids, keyword_ids, alpha, k)
    first: dict[str, int] = {}
    for position, doc_id in enumerate([*vector_ids, *keyword_ids]):
        first.setdefault(doc_id, position)
    return sorted(scores, key=lambda d: (-scores[d], first[d]))


def convex_scores(cosines: Mapping[str, float], keyword_scores: Mapping[str, float], alpha: float) -> dict[str, float]:
    """Convex combination of normalised scores (Bruch, Gai & Ingber 2023) of every id of
    ``cosines`` (id -> cosine in [0, 1], every candidate's) and ``keyword_scores`` (id ->
    BM25 >= 0, the keyword ranking's candidates):
    ``alpha * cos(d) / max cos + (1 - alpha) * bm25(d) / max bm25``, maxima over those
    ids; an id missing from a mapping gets 0 from it, and a side whose maximum is 0 adds
    nothing (no division by zero). In [0, 1]: 1.0 is the best of both sides. Unlike RRF it
    keeps how far apart the scores are, not only their order. Linear in the ids; the
    caller orders (:func:`rerank` sorts, ties keeping the candidates' order).

    >>> convex_scores({"a": 0.8, "b": 0.4}, {"b": 6.0, "c": 3.0}, 0.5)
    {'a': 0.5, 'b': 0.75, 'c': 0.25}
    >>> convex_scores({"a": 0.0}, {}, 0.5)
    {'a': 0.0}
    """
    top_cos = max(cosines.values(), default=0.0)
    top_bm25 = max(keyword_scores.values(), default=0.0)
    cos_weight = alpha / top_cos if top_cos > 0.0 else 0.0
    bm25_weight = (1.0 - alpha) / top_bm25 if top_bm25 > 0.0 else 0.0
    scores = {doc_id: cos_weight * cosine for doc_id, cosine in cosines.items()}
    for doc_id, score in keyword_scores.items():
        scores[doc_id] = scores.get(doc_id, 0.0) + bm25_weight * score
    return scores


@dataclass(frozen=True, slots=True)
class QuerySignals:
    """What the query says besides its words: its emotion, the period it names (relative
    to ``now``) and whether it asks "when"."""

    now: datetime
    emotion: str | None = None
    period: tuple[datetime, datetime] | None = None
    when: bool = False
    words: frozenset[str] = frozenset()

    @classmethod
    def of(cls, text: str | None, now: datetime) -> QuerySignals:
        """The signals of ``text`` asked at ``now`` (None: a vector-only search)."""
        if not text:
            return cls(now)
        return cls(now, emotion_of(text), query_period(text, now), is_when_question(text), frozenset(tokenize(text[:2000])))


def _group(record: MemoryRecord) -> str:
    """The conversation a record belongs to: ``metadata.conversation_id``, else the day it
    happened."""
    conversation = record.metadata.get("conversation_id")
    if isinstance(conversation, str) and conversation:
        return "c:" + conversation
    return "d:" + record.occurred_at.date().isoformat()


def _position(record: MemoryRecord) -> int | None:
    position = record.metadata.get("position")
    return position if isinstance(position, int) and not isinstance(position, bool) else None


#: What :func:`rerank` derives from a record alone: its conversation (:func:`_group`), its
#: position in it and its signal terms (:func:`_signal_terms`).
_Derived = tuple[str, int | None, tuple[float, ...]]


def _signal_terms(record: MemoryRecord, query: QuerySignals, config: RankingConfig) -> tuple[float, ...]:
    """What :func:`rerank` adds to a candidate's score for ``record`` whatever the other
    candidates are, in the order it adds them (recency, importance, emotion, priors,
    period, date, speaker; a signal that does not apply adds nothing)."""
    terms = []
    if config.recency_weight:
        terms.append(config.recency_weight * recency(record.occurred_at, query.now, config.recency_half_life_s))
    terms.append(config.importance_weight * (record.importance - 0.5))
    if config.emotion_weight and query.emotion is not None and record_emotion(record) == query.emotion:
        terms.append(config.emotion_weight)
    terms.append(config.type_priors.get(record.type.value, 0.0) + config.scope_priors.get(record.scope.value, 0.0))
    if query.period is not None and query.period[0] <= record.occurred_at < query.period[1]:
        terms.append(config.period_weight)
    if query.when and config.dated_weight and carries_date(record):
        terms.append(config.dated_weight)
    if config.speaker_weight and query.words:
        speaker = speaker_of(record)
        if speaker and set(tokenize(speaker)) <= query.words:
            terms.append(config.speaker_weight)
    return tuple(terms)


def rerank(
    order: Sequence[str], base: Mapping[str, float], records: Mapping[str, MemoryRecord],
    query: QuerySignals, config: RankingConfig, memo: dict[str, _Derived] | None = None,
) -> list[tuple[str, float]]:
    """``(id, score)`` of the ids of ``order`` that have a record, best first: ``base``
    (the fused score) plus each signal times its weight (:class:`RankingConfig`); ties
    keep ``order``. Linear in the number of candidates (times the neighbour window).
    ``memo``: what is derived from each record alone (its conversation, position and
    signal terms) by id, kept across the reranks of one query over the same records and
    ranking config (computed once per record; the sums are the same, added in the same
    order).

    >>> from datetime import UTC
    >>> now = datetime(2024, 1, 1, tzinfo=UTC)
    >>> rerank([], {}, {}, QuerySignals(now), RankingConfig())
    []
    """
    memo = {} if memo is None else memo
    ids = [d for d in order if d in records]
    derived = {}
    for d in ids:
        known = memo.get(d)
        if known is None:
            record = records[d]
            known = memo[d] = (_group(record), _position(record), _signal_terms(record, query, config))
        derived[d] = known
    groups = {d: known[0] for d, known in derived.items()}
    totals: dict[str, float] = {}
    for d in ids:
        totals[groups[d]] = totals.get(groups[d], 0.0) + base.get(d, 0.0)
    best_total = max(totals.values(), default=0.0) or 1.0
    at: dict[tuple[str, int], float] = {}
    for d in ids:
        position = derived[d][1]
        if position is not None:
            key = (groups[d], position)
            at[key] = max(at.get(key, 0.0), base.get(d, 0.0))
    scored = []
    for rank, d in enumerate(ids):
        score = base.get(d, 0.0)
        group, position, terms = derived[d]
        for term in terms:
            score += term
        if config.session_weight:
            score += config.session_weight * totals[group] / best_total
        if config.neighbour_weight and position is not None:
            near = max((at.get((group, position + step), 0.0)
                        for w in range(1, config.neighbour_window + 1) for step in (-w, w)), default=0.0)
            score += config.neighbour_weight * near
        scored.append((rank, d, score))
    scored.sort(key=lambda row: (-row[2], row[0]))
    if config.diversity_weight:
        return _diversified(scored, groups, config.diversity_weight)
    return [(d, score) for _, d, score in scored]


def _diversified(scored: list[tuple[int, str, float]], groups: Mapping[str, str], weight: float) -> list[tuple[str, float]]:
    """Greedy re-selection where a candidate loses ``weight`` for each candidate of its
    conversation already chosen (a vector-free maximal marginal relevance, Carbonell &
    Goldstein 1998, with "same conversation" as the redundancy): a heap of each
    conversation's next candidate, O(n log n). Scores returned are the penalised ones."""
    queues: dict[str, list[tuple[int, str, float]]] = {}
    for row in scored:  # best first within each conversation
        queues.setdefault(groups[row[1]], []).append(row)
    heap = [(-rows[0][2], rows[0][0], group, 0) for group, rows in queues.items()]
    heapq.heapify(heap)
    out = []
    while heap:
        neg, _, group, index = heapq.heappop(heap)
        _rank, doc_id, _ = queues[group][index]
        out.append((doc_id, -neg))
        if index + 1 < len(queues[group]):
            nxt = queues[group][index + 1]
            heapq.heappush(heap, (-(nxt[2] - weight * (index + 1)), nxt[0], group, index + 1))
    return out
