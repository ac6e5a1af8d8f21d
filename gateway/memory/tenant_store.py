"""``TenantMemoryStore``: the :class:`~gateway.memory.store.MemoryStore` on Redis, over
either index backend (:mod:`gateway.memory.vectorset`, :mod:`gateway.memory.search`).

Tenancy: reads go through :func:`keys.visible_partitions` (keys of the tenant's own user,
the profile partition plus the tenant's friend's event partition) and every hit is checked
again with :func:`records.visible_to`. Search: the vector ranking (cosine) and, when
``hybrid_alpha < 1`` and there is query text, the keyword ranking (BM25) are fused
(``memory.fusion``, weight ``hybrid_alpha`` for the vector side): ``convex``, a convex
combination of the cosine and the BM25 score each divided by its maximum over the
candidates that can be returned (:func:`ranking.convex_scores`, computed once every
candidate's cosine is known, keyword-only ones' from their stored vector), or ``rrf``,
weighted reciprocal rank fusion (:func:`ranking.weighted_rrf`). Hits carry the fused score
as ``score`` (the score they are ranked by) and the cosine similarity of their vector as
``similarity``; ``threshold`` applies to the similarity. Without fusion (no query text,
``hybrid_alpha`` 1, or no keyword match) both are the cosine. Every candidate
(``top_k * candidate_factor`` of each ranking, at least 20) is fetched in one round trip
and reordered by :func:`ranking.rerank` (recency, importance, emotion,
type/scope priors, the period a query names, neighbours, session; ``memory.ranking``);
``score`` becomes that final score clamped to [0, 1]. With ``memory.calibrate`` each hit
also gets ``relevance`` (:mod:`gateway.memory.calibration`).

PATCH of ``text`` without ``keywords`` recomputes the keywords (:func:`recomputed_keywords`).

Concurrency: writes are atomic per user (one script call), but ``update``/``retire`` read then
write without WATCH, so two concurrent updates of one record resolve last-writer-wins.
"""

from __future__ import annotations

import asyncio
import builtins
import typing
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice

import numpy as np
from pydantic import ValidationError

import gateway.memory.maintenance as maintenance
import gateway.memory.scripts as scripts
from gateway.memory.calibration import calibration_for
from gateway.memory.codec import record_from_packed
from gateway.memory.config import MemoryConfig
from gateway.memory.embeddings.base import Embedder, embed_memories, embed_query
from gateway.memory.filters import SearchFilter
from gateway.memory.ids import check_memory_id, new_memory_id
from gateway.memory.keys import Partition, visible_partitions
from gateway.memory.ranking import QuerySignals, clamp01, convex_scores, fused_scores, rerank, weighted_rrf
from gateway.memory.records import (
    STATEMENTS,
    MemoryPage,
    MemoryPatch,
    MemoryRecord,
    NewMemory,
    ScoredMemory,
    Tenant,
    build_record,
    visible_to,
)
from gateway.memory.redis_errors import redis_boundary
from gateway.memory.repository import RecordRepository
from gateway.memory.tokenize import tokenize
from gateway.memory.validation import check_new_memory, check_range, check_text, check_vector
from gateway.runtime.errors import NotFound, UnprocessableInput
from gateway.runtime.text import CJK_RE

__all__ = ['MAX_PAGE', 'MAX_TEXT_KEYWORDS', 'MIN_CANDIDATES', 'WARM_TEXT', 'WARM_TEXTS', 'TenantMemoryStore', 'recomputed_keywords', 'select_hits']

MIN_CANDIDATES = 20
#: The texts :meth:`TenantMemoryStore.warm` embeds: one Latin, one CJK, so an embedder
#: that routes by script (:mod:`gateway.memory.embeddings.script_routed`) runs both parts.
WARM_TEXT = "What did I tell you about my plans for the weekend?"
WARM_TEXTS = (WARM_TEXT, "我跟你说过周末有什么打算吗？")
MAX_PAGE = 1000


def select_hits(
    order: Sequence[str], records: dict[str, MemoryRecord], cosines: dict[str, float],
    tenant: Tenant, flt: SearchFilter, threshold: float, top_k: int,
    fused: dict[str, float] | None = None,
) -> list[ScoredMemory]:
    """The first ``top_k`` of ``order`` that exist, are visible to ``tenant``, pass
    ``flt`` and have a cosine of at least ``threshold`` (pure): :func:`kept_candidates` as
    hits. ``score`` is the fused score when ``fused`` is given (the order was fused), else
    the cosine."""
    kept = kept_candidates(order, records, cosines, tenant, flt, threshold, fused)
    return [ScoredMemory(record=record, score=score, similarity=cosine)
            for record, cosine, score in islice(kept.values(), top_k)]


def kept_candidates(
    order: Sequence[str], records: dict[str, MemoryRecord], cosines: dict[str, float],
    tenant: Tenant, flt: SearchFilter, threshold: float, fused: dict[str, float] | None = None,
) -> dict[str, tuple[MemoryRecord, float, float]]:
    """The candidates of ``order`` that exist, are visible to ``tenant``, pass ``flt`` and
    have a cosine of at least ``threshold`` (pure), without building hits: ``id ->
    (record, cosine, score)`` in ``order``; ``score`` as in :func:`select_hits`."""
    kept = {}
    for doc_id in order:
        record, cosine = records.get(doc_id), cosines.get(doc_id)
        if record is None or cosine is None or cosine < threshold:
            continue
        if visible_to(record, tenant) and flt.matches(record):
            kept[doc_id] = (record, cosine, min(1.0, fused[doc_id]) if fused is not None else cosine)
    return kept


MAX_TEXT_KEYWORDS = 12  # as many as verbatim memorization derives from a turn


def recomputed_keywords(old_text: str, old_keywords: Sequence[str], new_text: str) -> builtins.list[str]:
    """The keywords of a record whose text changes from ``old_text`` to ``new_text``
    without the caller giving new ones (pure):

    - keywords drawn from the old text (every token of the keyword is a token of the old
      text, :func:`gateway.memory.tokenize.tokenize`) described that text: they go;
    - the others are the caller's extra search terms: they stay, in order;
    - when any went, the new text's own terms replace them (unique tokens, CJK single
      characters left out as their bigrams carry the word, at most
      :data:`MAX_TEXT_KEYWORDS`), as memorization derives them for a new record.

    >>> recomputed_keywords("moved to Lisbon", ["lisbon", "relocation"], "moved to Porto")
    ['relocation', 'moved', 'porto']
    """
    old_terms = set(tokenize(old_text))
    extras, derived = [], False
    for keyword in old_keywords:
        terms = tokenize(keyword)
        if terms and all(t in old_terms for t in terms):
            derived = True
        else:
            extras.append(keyword)
    if not derived:
        return extras
    fresh = []
    for term in tokenize(new_text):
        if term in fresh or term in extras or (len(term) == 1 and CJK_RE.match(term)):
            continue
        fresh.append(term)
        if len(fresh) == MAX_TEXT_KEYWORDS:
            break
    return [*extras, *fresh]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class _Plan:
    """One search's checked options and the partitions it reads (none: no hits)."""

    top_k: int
    threshold: float
    flt: SearchFilter
    parts: builtins.list[Partition]


class TenantMemoryStore:
    """See module docstring. Built by :func:`gateway.memory.factory.open_memory`."""

    def __init__(self, repo: RecordRepository, embedder: Embedder, config: MemoryConfig):
        self._repo = repo
        self._embedder = embedder
        self._config = config
        self.backend_name = repo.backend.name
        self.dimensions = embedder.dimensions

    @property
    def embedder(self) -> Embedder:
        """The store's embedder (Redis vector cache in front of the model), shared with
        plugins through :meth:`gateway.chain.sdk.Services.embed`."""
        return self._embedder

    async def add(self, tenant, memories):
        single = isinstance(memories, NewMemory)
        batch = [memories] if single else builtins.list(memories)
        for memory in batch:
            check_new_memory(tenant, memory, self._config.max_text_chars)
        vectors = await embed_memories(self._embedder, batch)
        records = await self.add_embedded(tenant, batch, vectors)
        return records[0] if single else records

    async def add_embedded(
        self, tenant: Tenant, memories: Sequence[NewMemory], vectors: np.ndarray
    ) -> builtins.list[MemoryRecord]:
        if len(vectors) != len(memories):
            raise UnprocessableInput(f"{len(memories)} memories but {len(vectors)} vectors", param="vectors")
        rows = [check_vector(v, self.dimensions) for v in vectors]
        now = _now()
        ids = sorted(new_memory_id() for _ in memories)  # batch order = id order
        records = []
        for memory, record_id in zip(memories, ids, strict=True):
            check_new_memory(tenant, memory, self._config.max_text_chars)
            records.append(build_record(tenant, memory, record_id, now))
        with redis_boundary():
            await self._repo.write([(r, v, None) for r, v in zip(records, rows, strict=True)])
        return records

    async def get(self, tenant: Tenant, memory_id: str) -> MemoryRecord:
        check_memory_id(memory_id)
        with redis_boundary():
            found = await self._repo.fetch(tenant.user_id, [memory_id])
        record = found.get(memory_id)
        if record is None or not visible_to(record, tenant):
            raise NotFound(f"memory {memory_id} not found", param="id")
        return record

    async def get_many(self, tenant: Tenant, memory_ids: Sequence[str]) -> builtins.list[MemoryRecord]:
        wanted = builtins.list(dict.fromkeys(check_memory_id(memory_id) for memory_id in memory_ids))
        if not wanted:
            return []
        with redis_boundary():
            found = await self._repo.fetch(tenant.user_id, wanted)
        return [record for memory_id in wanted
                if (record := found.get(memory_id)) is not None and visible_to(record, tenant)]

    async def update(self, tenant: Tenant, memory_id: str, patch: MemoryPatch) -> MemoryRecord:
        old = await self.get(tenant, memory_id)
        changes = patch.model_dump(exclude_none=True)
        if not changes:
            return old
        vector = None
        new_text = "text" in changes and changes["text"] != old.text
        if new_text:
            check_text(changes["text"], self._config.max_text_chars)
            if "keywords" not in changes:
                changes["keywords"] = recomputed_keywords(old.text, old.keywords, changes["text"])
            if "metadata" not in changes and STATEMENTS in old.metadata:  # the spans were the old text's
                changes["metadata"] = {k: v for k, v in old.metadata.items() if k != STATEMENTS}
        try:
            new = MemoryRecord.model_validate({**old.model_dump(), **changes, "updated_at": _now()})
        except ValidationError as exc:  # e.g. a record stored before the list limits
            first = exc.errors()[0]
            raise UnprocessableInput(f"the changed record is invalid: {first['msg']}",
                                     param=".".join(str(p) for p in first["loc"]) or None) from None
        if new_text:
            vector = (await embed_memories(self._embedder, [new]))[0]
        with redis_boundary():
            await self._repo.write([(new, vector, old)])
        return new

    async def delete(self, tenant: Tenant, memory_id: str) -> None:
        record = await self.get(tenant, memory_id)
        with redis_boundary():
            await self._repo.remove([record])

    async def warm(self) -> None:
        """Exercise every model the search path uses, once: a Latin and a CJK text
        (:data:`WARM_TEXTS`) embedded by the model itself (past the Redis vector cache, which would answer a text embedded before
        without running the model) and, with ``memory.calibrate``, the calibration
        (:func:`~gateway.memory.calibration.calibration_for`, ~200 short texts the first
        time). The embedder runs off the event loop (each provider's own threads).

        Raises:
            gateway.runtime.errors.MemoryUnavailable: the model or Redis failed.
        """
        model = getattr(self._embedder, "inner", self._embedder)  # the CachedEmbedder's model
        await model.embed_many(list(WARM_TEXTS))
        if self._config.calibrate:
            await calibration_for(self._embedder)

    async def list(
        self, tenant: Tenant, scope: str | None = None, types: Iterable[str] | None = None,
        cursor: str | None = None, limit: int = 50,
    ) -> MemoryPage:
        check_range(limit, 1, MAX_PAGE, "limit")
        if cursor is not None:
            check_memory_id(cursor)
        flt = SearchFilter.build(scopes=None if scope is None else [scope], types=types, include_retired=True)
        parts = visible_partitions(tenant, flt.scopes)
        items: builtins.list[MemoryRecord] = []
        with redis_boundary():
            while len(items) < limit:
                ids = await self._repo.page_ids(parts, cursor, limit)
                if not ids:
                    return MemoryPage(items=items, next_cursor=None)
                found = await self._repo.fetch(tenant.user_id, ids)
                for doc_id in ids:
                    cursor = doc_id
                    record = found.get(doc_id)
                    if record and visible_to(record, tenant) and flt.matches(record):
                        items.append(record)
                        if len(items) == limit:
                            break
        return MemoryPage(items=items, next_cursor=cursor)

    async def count(self, tenant: Tenant) -> int:
        with redis_boundary():
            return await self._repo.count(visible_partitions(tenant))

    async def search(
        self, tenant: Tenant, query: str, top_k: int = 5, threshold: float = 0.0,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
        occurred_after: datetime | None = None, occurred_before: datetime | None = None,
        include_retired: bool = False,
    ) -> builtins.list[ScoredMemory]:
        check_text(query, self._config.max_text_chars, "query")
        vector = await embed_query(self._embedder, query)
        return await self.search_by_vector(
            tenant, vector, top_k, threshold, scopes, types, occurred_after, occurred_before,
            include_retired, query_text=query,
        )

    async def search_many(
        self, tenant: Tenant, query: str, searches: Sequence[dict[str, typing.Any]],
    ) -> builtins.list[builtins.list[ScoredMemory]]:
        """One :meth:`search` per entry of ``searches`` (each a dict of :meth:`search`'s
        keyword arguments: ``top_k``, ``threshold``, ``scopes``, ``types``...) for one
        ``query``, embedded once; the searches share their round trips (every ranking in
        one, then every candidate fetch in one: :meth:`_search_vector`). Same errors as
        :meth:`search`."""
        check_text(query, self._config.max_text_chars, "query")
        vector = await embed_query(self._embedder, query)
        return await self._search_vector(tenant, vector, query, searches)

    async def search_by_vector(
        self, tenant: Tenant, vector, top_k: int = 5, threshold: float = 0.0,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
        occurred_after: datetime | None = None, occurred_before: datetime | None = None,
        include_retired: bool = False, query_text: str | None = None,
    ) -> builtins.list[ScoredMemory]:
        (hits,) = await self._search_vector(tenant, vector, query_text, [{
            "top_k": top_k, "threshold": threshold, "scopes": scopes, "types": types,
            "occurred_after": occurred_after, "occurred_before": occurred_before,
            "include_retired": include_retired,
        }])
        return hits

    def _plan(
        self, tenant: Tenant, top_k: int = 5, threshold: float = 0.0,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
        occurred_after: datetime | None = None, occurred_before: datetime | None = None,
        include_retired: bool = False,
    ) -> _Plan:
        """One search's checked options (400/422 as :meth:`search`)."""
        check_range(top_k, 1, self._config.max_top_k, "top_k")
        check_range(threshold, 0.0, 1.0, "threshold")
        flt = SearchFilter.build(scopes, types, occurred_after, occurred_before, include_retired)
        return _Plan(top_k, threshold, flt, visible_partitions(tenant, flt.scopes))

    async def _search_vector(
        self, tenant: Tenant, vector, query_text: str | None, searches: Sequence[dict[str, typing.Any]],
    ) -> builtins.list[builtins.list[ScoredMemory]]:
        """The hits of each search of ``searches`` (:meth:`_plan`'s keyword arguments) for
        one query vector: every search's rankings, and with a backend that can (its
        ``rank_and_read``) their candidates, in one round trip (:meth:`_rank_all`), then
        the candidates not read yet in one more (:meth:`_collect_all`)."""
        query = check_vector(vector, self.dimensions)
        plans = [self._plan(tenant, **options) for options in searches]
        live = [plan for plan in plans if plan.parts]
        if not live:
            return [[] for _ in plans]
        calibration = await calibration_for(self._embedder) if self._config.calibrate else None
        relevance = None if calibration is None else calibration.fit_for(query_text or "").relevance
        with redis_boundary():
            ranked, prefetched = await self._rank_all(tenant, live, query, query_text)
            found = iter(await self._collect_all(tenant, live, ranked, query, QuerySignals.of(query_text, _now()),
                                                 prefetched, relevance))
        return [next(found) if plan.parts else [] for plan in plans]

    async def _collect_all(self, tenant, plans, ranked, query, signals, prefetched=None, relevance=None):
        """Every candidate of every search, each record read once (candidates whose cosine
        is known to miss the search's ``threshold`` are dropped unread, keyword-only ones
        get their cosine from the backend's stored vector), keep those visible to
        ``tenant`` that pass the search's filter and ``threshold``, and return each
        search's best ``top_k`` by :func:`ranking.rerank`. What ``prefetched``
        (:class:`~gateway.memory.backend.Prefetched`) holds is not read again; the rest is
        read in one round trip. The base score of :func:`ranking.rerank` is
        :func:`ranking.convex_scores` of the kept candidates when the ranking gave BM25
        scores (convex fusion), else the RRF score or the cosine. ``relevance``: the
        calibration's cosine -> relevance, set on each hit when given."""
        backend = self._repo.backend
        orders = [[d for d in order if cosines.get(d, plan.threshold) >= plan.threshold]
                  for plan, (order, cosines, _, _) in zip(plans, ranked, strict=True)]
        wanted = builtins.list(dict.fromkeys(d for order in orders for d in order))
        if not wanted:
            return [[] for _ in plans]
        read = {} if prefetched is None else prefetched.records
        stored = {} if prefetched is None else prefetched.vectors
        records = {d: record_from_packed(read[d]) for d in wanted if read.get(d)}
        missing = [d for d in wanted if d not in read]
        needs = [[d for d in order if d not in cosines] for order, (_, cosines, _, _) in zip(orders, ranked, strict=True)]
        unread = {i for i, need in enumerate(needs) if any(d not in stored for d in need)}
        readers: dict[int, typing.Any] = {}
        if missing or unread:
            def build(pipe: typing.Any) -> None:
                readers.clear()
                if missing:
                    readers[-1] = (len(pipe), self._repo.queue_fetch(pipe, tenant.user_id, missing))
                for i in sorted(unread):
                    at = len(pipe)
                    read_stored = backend.queue_similarities(pipe, plans[i].parts, needs[i], query)
                    readers[i] = (at, len(pipe), read_stored)

            replies = await scripts.execute(self._repo.client, build)
            if missing:
                at, read_records = readers[-1]
                records.update(read_records(replies[at]))
        out: builtins.list[builtins.list[ScoredMemory]] = []
        derived: dict[str, typing.Any] = {}  # what rerank derives from each record, shared by the searches
        for i, (plan, order, (_, cosines, fused, keyword_scores)) in enumerate(zip(plans, orders, ranked, strict=True)):
            if not order:
                out.append([])
                continue
            if i in readers:
                at, end, read_stored = readers[i]
                cosines.update(read_stored(replies[at:end]))
            elif needs[i]:
                cosines.update(prefetched.similarities(needs[i], [stored[d] for d in needs[i]], query))
            kept = kept_candidates(order, records, cosines, tenant, plan.flt, plan.threshold, fused)
            eligible = {d: row[0] for d, row in kept.items()}
            if keyword_scores is None:
                base = {d: row[2] for d, row in kept.items()}
            else:  # ties: the vector ranking's order, then the keyword ranking's (as weighted_rrf)
                base = convex_scores({d: row[1] for d, row in kept.items()},
                                     {d: keyword_scores[d] for d in kept if d in keyword_scores},
                                     self._config.hybrid_alpha)
            ranked_ids = rerank(list(kept), base, eligible, signals, self._config.ranking, derived)
            hits = []
            for d, score in ranked_ids[:plan.top_k]:
                record, cosine, _ = kept[d]
                if relevance is None:
                    hits.append(ScoredMemory.model_construct(record=record, score=clamp01(score), similarity=cosine))
                else:
                    hits.append(ScoredMemory.model_construct(record=record, score=clamp01(score), similarity=cosine,
                                                             relevance=relevance(cosine)))
            out.append(hits)
        return out

    async def _rank_all(self, tenant: Tenant, plans: Sequence[_Plan], query: np.ndarray, text: str | None):
        """Each search's ranking (:meth:`_fuse`) and what was read with it (None or the
        backend's :class:`~gateway.memory.backend.Prefetched`): with a backend that ranks
        and reads together (``rank_and_read``), one command; else with several searches
        and a backend that queues its ranking (``queue_rank``), all in one round trip."""
        backend, alpha = self._repo.backend, self._config.hybrid_alpha
        text = text if bool(text) and alpha < 1.0 else None
        counts = [max(plan.top_k * self._config.candidate_factor, MIN_CANDIDATES) for plan in plans]
        rank_and_read = getattr(backend, "rank_and_read", None)
        queue_rank = getattr(backend, "queue_rank", None)
        prefetched = None
        if rank_and_read is not None:
            prefetched = await rank_and_read(tenant.user_id, [(plan.parts, count, plan.flt, plan.threshold)
                                                              for plan, count in zip(plans, counts, strict=True)],
                                             query, text)
            rankings = prefetched.rankings
        elif len(plans) == 1 or queue_rank is None:
            rankings = await asyncio.gather(*(backend.rank(plan.parts, query, text, count, plan.flt)
                                              for plan, count in zip(plans, counts, strict=True)))
        else:
            finishers: builtins.list[typing.Any] = []

            def build(pipe: typing.Any) -> None:
                finishers[:] = [queue_rank(pipe, plan.parts, query, text, count, plan.flt)
                                for plan, count in zip(plans, counts, strict=True)]

            replies = await scripts.execute(self._repo.client, build)
            rankings = [await finish(reply) for finish, reply in zip(finishers, replies, strict=True)]
        return [self._fuse(vector_hits, keyword_hits) for vector_hits, keyword_hits in rankings], prefetched

    def _fuse(self, vector_hits, keyword_hits):
        """Candidate ids in ranking order, the cosines the vector ranking gave, the RRF
        scores (``memory.fusion`` rrf) and the keyword ranking's BM25 scores (convex: the
        fusion waits for every candidate's cosine, :meth:`_collect_all`; the order is
        then the vector ranking's followed by the keyword-only ids). Both None when only
        the vector ranking ran or the keyword ranking found nothing."""
        alpha = self._config.hybrid_alpha
        vector_ids = [doc_id for doc_id, _ in vector_hits]
        if not keyword_hits:
            return vector_ids, dict(vector_hits), None, None
        keyword_ids = [doc_id for doc_id, _ in keyword_hits]
        if self._config.fusion == "convex":
            return list(dict.fromkeys([*vector_ids, *keyword_ids])), dict(vector_hits), None, dict(keyword_hits)
        fused = fused_scores(vector_ids, keyword_ids, alpha, self._config.rrf_k)
        return weighted_rrf(vector_ids, keyword_ids, alpha, self._config.rrf_k, fused), dict(vector_hits), fused, None

    async def supersede(self, tenant: Tenant, old_id: str, new: NewMemory) -> MemoryRecord:
        old = await self.get(tenant, old_id)
        check_new_memory(tenant, new, self._config.max_text_chars)
        vector = (await embed_memories(self._embedder, [new]))[0]
        now = _now()
        record = build_record(tenant, new, new_memory_id(), now).model_copy(update={"supersedes": old.id})
        retired = old.model_copy(update={
            "retired": True, "retired_at": now, "retired_reason": f"superseded by {record.id}",
            "superseded_by": record.id, "updated_at": now,
        })
        with redis_boundary():
            await self._repo.write([(retired, None, old), (record, vector, None)])
        return record

    async def retire(self, tenant: Tenant, memory_id: str, reason: str) -> MemoryRecord:
        old = await self.get(tenant, memory_id)
        now = _now()
        update = {"retired": True, "retired_at": now, "retired_reason": reason[:500], "updated_at": now}
        record = old.model_copy(update=update)
        with redis_boundary():
            await self._repo.write([(record, None, old)])
        return record

    async def forget_user(self, user_id: str) -> int:
        with redis_boundary():
            return await maintenance.forget_user(self._repo, user_id)

    async def export_user(self, user_id: str) -> AsyncIterator[MemoryRecord]:
        with redis_boundary():
            async for record in maintenance.export_user(self._repo, user_id):
                yield record

    async def import_records(self, records: Iterable[MemoryRecord]) -> int:
        with redis_boundary():
            return await maintenance.import_records(self._repo, self._embedder, self._config, records)

    async def import_embedded(self, groups: Sequence[Sequence[tuple[MemoryRecord, np.ndarray]]]) -> int:
        """:meth:`import_records` for records the caller embedded with :attr:`embedder`
        (:func:`~gateway.memory.embeddings.base.embed_memories`), in groups each written
        whole or not at all, every group in one round trip
        (:func:`maintenance.import_embedded`)."""
        checked = [[(record, check_vector(vector, self.dimensions)) for record, vector in group] for group in groups]
        with redis_boundary():
            return await maintenance.import_embedded(self._repo, self._config, checked)

    async def reembed(self) -> int:
        with redis_boundary():
            return await maintenance.reembed(self._repo, self._embedder, self._config.embedding.batch_size)

