"""``python -m bench locomo-probes PATH``: ranking mechanisms tried on LoCoMo before any of
them is built into the store (README, "Per conversation, leave one conversation out").

Each probe wraps the running store's ranking in this process only, for measurement: the
store is the one of :mod:`bench.locomo.sweep` (both ways stored once, every question asked
again through ``POST /v1/memories/search`` per probe, R@k per conversation printed), and
the wrappers are removed when the run ends. Nothing here is product code.

- ``entity``: entity links. The top ``seeds`` hits after the store's ranking give their
  capitalised words (3+ letters) minus the query's words and the hit's own speaker; every
  other candidate sharing one gains ``weight`` times that seed's share of the best score.
- ``term``: term links. The same with the seeds' stemmed index terms not in the query,
  each weighted by its idf over the candidates (``ln(1 + n / df)``): a candidate gains
  ``weight * seed share * (idf of the shared terms) / (idf of all the seed's terms)``.
- ``two-stage``: a second BM25 search (the backend's keyword search, one more round trip)
  with the words of the top ``seeds`` hits' text that are not query terms (``with_query``:
  the query's words first, RM3-style); every hit gains ``weight`` times its normalised
  second-stage score, and second-stage records not among the first stage's 50 best join
  with that alone (fetched one by one here; a store version would fetch them with their
  stored vectors in one more round trip). ``insert_only``: the first stage's scores stay,
  only the new records are added.

All are linear in the candidates (times the seeds).
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

import gateway.memory.tenant_store as tenant_store
from gateway.memory.config import RankingConfig
from gateway.memory.ranking import QuerySignals
from gateway.memory.records import MemoryRecord, ScoredMemory
from gateway.memory.signals import speaker_of
from gateway.memory.tokenize import index_terms, stem, tokenize

#: name -> probe settings (``mode`` entity / term / two-stage / none)
PROBES: dict[str, dict[str, Any]] = {
    "none": {"mode": "none"},
    "entity 0.05": {"mode": "entity", "weight": 0.05, "seeds": 3},
    "entity 0.1": {"mode": "entity", "weight": 0.1, "seeds": 3},
    "entity 0.2": {"mode": "entity", "weight": 0.2, "seeds": 3},
    "term 0.1": {"mode": "term", "weight": 0.1, "seeds": 3},
    "term 0.2": {"mode": "term", "weight": 0.2, "seeds": 3},
    "term 0.4": {"mode": "term", "weight": 0.4, "seeds": 3},
    "two-stage 0.1": {"mode": "two-stage", "weight": 0.1, "seeds": 3},
    "two-stage 0.2": {"mode": "two-stage", "weight": 0.2, "seeds": 3},
    "two-stage 0.4": {"mode": "two-stage", "weight": 0.4, "seeds": 3},
    "two-stage 0.2 seeds 1": {"mode": "two-stage", "weight": 0.2, "seeds": 1},
    "two-stage 0.2 seeds 5": {"mode": "two-stage", "weight": 0.2, "seeds": 5},
    "two-stage 0.2 with query": {"mode": "two-stage", "weight": 0.2, "seeds": 3, "with_query": True},
    "two-stage insert 0.3": {"mode": "two-stage", "weight": 0.3, "seeds": 3, "insert_only": True},
    "two-stage insert 0.5": {"mode": "two-stage", "weight": 0.5, "seeds": 3, "insert_only": True},
}
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
_POOL = 50
_active: dict[str, Any] = {"mode": "none"}


def _stem_of(token: str) -> str:
    return stem(token) if token.isalpha() else token


def _terms(record: MemoryRecord, mode: str, query_words: frozenset[str]) -> set[str]:
    """What links ``record`` to others: capitalised names (entity) or stemmed terms (term)."""
    text = f"{record.context or ''}\n{record.text}"
    if mode == "entity":
        speaker = set(tokenize(speaker_of(record) or ""))
        return {w.lower() for w in _CAPITALISED.findall(text)} - speaker - query_words
    return set(index_terms(text)) - {_stem_of(w) for w in query_words}


def linked(ranked: list[tuple[str, float]], records: dict[str, MemoryRecord], query: QuerySignals,
           probe: dict[str, Any]) -> list[tuple[str, float]]:
    """``ranked`` (the store's ``(id, score)``, best first) with the entity or term link
    bonus of the module docstring added, re-sorted (ties keep the order)."""
    if probe["mode"] not in ("entity", "term") or not ranked:
        return ranked
    terms = {d: _terms(records[d], probe["mode"], query.words) for d, _ in ranked}
    df: dict[str, int] = {}
    for found in terms.values():
        for t in found:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1 + len(ranked) / n) for t, n in df.items()}
    top = ranked[0][1] or 1.0
    bonus: dict[str, float] = {}
    for seed, seed_score in ranked[:probe["seeds"]]:
        total = sum(idf[t] for t in terms[seed]) or 1.0
        for d, _ in ranked:
            shared = terms[seed] & terms[d]
            if d == seed or not shared:
                continue
            share = 1.0 if probe["mode"] == "entity" else sum(idf[t] for t in shared) / total
            bonus[d] = max(bonus.get(d, 0.0), seed_score / top * share)
    order = {d: i for i, (d, _) in enumerate(ranked)}
    out = [(d, s + probe["weight"] * bonus.get(d, 0.0)) for d, s in ranked]
    out.sort(key=lambda row: (-row[1], order[row[0]]))
    return out


def expansion_text(query_text: str, seeds: Sequence[ScoredMemory], with_query: bool) -> str:
    """The second-stage query: the seeds' words whose stem is not a query term (the
    query's words first with ``with_query``)."""
    query_terms = set(index_terms(query_text))
    words = [w for h in seeds for w in tokenize(h.record.text) if _stem_of(w) not in query_terms]
    return " ".join([*tokenize(query_text), *words] if with_query else words)


async def two_stage(store: Any, original: Any, tenant: Any, vector: Any, query_text: str | None,
                    searches: Sequence[dict[str, Any]], probe: dict[str, Any]) -> list[list[ScoredMemory]]:
    """The store's ``_search_vector`` for one search with the second stage of the module
    docstring."""
    if probe["mode"] != "two-stage" or not query_text or len(searches) != 1:
        return await original(store, tenant, vector, query_text, searches)
    (options,) = searches
    top_k = options["top_k"]
    (hits,) = await original(store, tenant, vector, query_text, [{**options, "top_k": max(top_k, _POOL)}])
    plan = store._plan(tenant, **options)
    second = await store._repo.backend.keyword_search(
        plan.parts, expansion_text(query_text, hits[:probe["seeds"]], probe.get("with_query", False)),
        2 * _POOL, plan.flt)
    if not second:
        return [hits[:top_k]]
    best = max(score for _, score in second) or 1.0
    extra = {d: score / best for d, score in second}
    gain = 0.0 if probe.get("insert_only") else probe["weight"]
    scored = {h.record.id: (h.score + gain * extra.get(h.record.id, 0.0), h) for h in hits}
    for d, value in extra.items():
        if d not in scored:
            try:
                record = await store.get(tenant, d)
            except Exception:  # not visible to this tenant, or gone
                continue
            scored[d] = (probe["weight"] * value, ScoredMemory(record=record, score=0.0, similarity=0.0))
    ranked = sorted(scored.values(), key=lambda row: -row[0])
    return [[h.model_copy(update={"score": min(1.0, score)}) for score, h in ranked[:top_k]]]


@contextmanager
def wrapped_ranking() -> Iterator[None]:
    """Wrap the store's rerank and ``_search_vector`` with the active probe (:data:`_active`)
    for the duration; restored after."""
    rerank, search_vector = tenant_store.rerank, tenant_store.TenantMemoryStore._search_vector

    def probe_rerank(order: Sequence[str], base: Any, records: Any, query: QuerySignals,
                     config: RankingConfig, memo: Any = None) -> list[tuple[str, float]]:
        return linked(rerank(order, base, records, query, config, memo), records, query, _active)

    async def probe_search(self: Any, tenant: Any, vector: Any, query_text: str | None,
                           searches: Sequence[dict[str, Any]]) -> list[list[ScoredMemory]]:
        return await two_stage(self, search_vector, tenant, vector, query_text, searches, _active)

    tenant_store.rerank = probe_rerank
    tenant_store.TenantMemoryStore._search_vector = probe_search  # type: ignore[method-assign]
    try:
        yield
    finally:
        tenant_store.rerank = rerank
        tenant_store.TenantMemoryStore._search_vector = search_vector  # type: ignore[method-assign]


def _activate(name: str) -> None:
    _active.clear()
    _active.update(PROBES[name])


@click.command("locomo-probes")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--probe", "probes", multiple=True, help=f"Probe(s) (repeatable; default all): {', '.join(PROBES)}.")
@click.option("--embedder", type=click.Choice(["local", "onnx", "model2vec"]), default="local", show_default=True)
def command(path: str, probes: tuple[str, ...], embedder: str) -> None:
    """LoCoMo evidence recall per ranking probe over the current defaults, per conversation."""
    import logging

    from bench.locomo.sweep import run_async

    logging.getLogger("httpx").setLevel(logging.WARNING)
    names = list(probes) or list(PROBES)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise click.BadParameter(f"unknown probe(s) {unknown}", param_hint="'--probe'")
    with wrapped_ranking():
        asyncio.run(run_async(path, (5, 10, 25), names, embedder, {n: {} for n in names}, _activate))
