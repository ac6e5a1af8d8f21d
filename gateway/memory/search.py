"""``search`` backend: RedisVL ``AsyncSearchIndex`` on the Redis Query Engine (FT.*).

Index layout: one index per key prefix (``memory.key_prefix``), ``<prefix>:idx:v<N>``,
over the record hashes of every user (key prefix ``<prefix>:{``, ``FILTER exists(@tu)`` so
the other hashes under a user's hash tag, settings and world books, are not indexed).
Not one index per tenant: every index costs fixed memory and ``FT._LIST`` time, so 10M
users would mean 10M indexes. The layout fits a Redis Cluster, where the OSS module
indexes each shard's local keys only: the same index created on each primary, and a
tenant's query sent to the primary of its hash slot (all of a user's records share one);
this module does not do that routing yet (one server).
Its schema is data, :func:`index_schema`, versioned by :data:`SCHEMA_VERSION`; the
version is part of the recorded store settings (``index_version``), so a schema change is
detected at start-up and fixed by ``memgate memories reembed`` (which drops the old
index and creates the new one).

Tenancy: every record hash carries ``tu``, the escaped user id, written by
:func:`gateway.memory.codec.record_to_hash` on every write; every query is built here
from the partitions asked for and starts with ``@tu:{<escaped user>}
@tp:{<partitions>}`` (:func:`tenant_filter`, RedisVL's ``Tag`` filter, which escapes);
there is no query without it and a query over two users' partitions is refused. The
values are percent-encoded ids (:func:`gateway.memory.keys.escape_key_part`: only
``[A-Za-z0-9_.-%]``, never the TAG separator ``,``, a ``*`` or a brace) and TAG fields are
case-sensitive (``Alice`` and ``alice`` are different users).

Vector ranking: KNN over an HNSW COSINE field (distance ``1 - cos``). Keyword ranking:
BM25STD per query term, summed (:meth:`SearchBackend.keyword_search` says why), over
:data:`KEYWORD_FIELD`, the record's own tokens
(:func:`gateway.memory.tokenize.index_terms` of ``context``, ``text`` and ``keywords``,
the terms the vectorset backend's keyword index keeps: English words Snowball-stemmed by
our tokenizer) with no stemming and no stop words of the module's, queried with the same
terms, so both backends rank the same terms (CJK characters and bigrams included) and no user text reaches the query syntax. Fusion is
done by the store (:mod:`gateway.memory.tenant_store`), not by ``FT.HYBRID``.
"""

from __future__ import annotations

import asyncio
import heapq
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import redis.asyncio as aredis
import redis.exceptions
from redis.asyncio.client import Pipeline
from redis.commands.search.index_definition import IndexDefinition, IndexType
from redisvl.index import AsyncSearchIndex
from redisvl.query import VectorQuery
from redisvl.query.filter import FilterExpression, Num, Tag
from redisvl.utils.token_escaper import TokenEscaper

from gateway.memory.filters import SearchFilter
from gateway.memory.keys import KeySpace, Partition, escape_key_part
from gateway.memory.keyword_index import POSTINGS_PER_TERM, query_terms
from gateway.memory.ranking import clamp01, cosine_from_distance
from gateway.memory.records import MemoryRecord, indexed_text
from gateway.memory.scripts import Writes
from gateway.memory.tokenize import index_terms

__all__ = [
    'KEYWORD_FIELD', 'RECORD_FILTER', 'SCHEMA_VERSION', 'VECTOR_FIELD', 'SearchBackend', 'index_name',
    'index_schema', 'keyword_field', 'tenant_filter', 'tenant_tag',
]

#: 2: keywords from our own tokens (``kw``), ``FILTER exists(@tu)``, no module stop words.
SCHEMA_VERSION = 2
VECTOR_FIELD = "embedding"
KEYWORD_FIELD = "kw"
_ESCAPER = TokenEscaper()
#: FT.CREATE ``FILTER``: only record hashes (the codec always writes ``tu``) are indexed.
RECORD_FILTER = "exists(@tu)"


def index_name(keys: KeySpace, version: int = SCHEMA_VERSION) -> str:
    """``<prefix>:idx:v<version>``: the one index of a key prefix (module docstring)."""
    return f"{keys.prefix}:idx:v{version}"


def index_schema(keys: KeySpace, dimensions: int) -> dict[str, Any]:
    """RedisVL schema dict of the record index (fields from :mod:`gateway.memory.codec`,
    plus :data:`KEYWORD_FIELD` and :data:`VECTOR_FIELD` written by this backend)."""
    tag = {"case_sensitive": True}
    return {
        "index": {"name": index_name(keys), "prefix": keys.index_prefix, "storage_type": "hash"},
        "fields": [
            {"name": "tu", "type": "tag", "attrs": tag},
            {"name": "tp", "type": "tag", "attrs": tag},
            {"name": "type", "type": "tag", "attrs": tag},
            {"name": KEYWORD_FIELD, "type": "text", "attrs": {"no_stem": True}},
            {"name": "occurred_ts", "type": "numeric"},
            {"name": "created_ts", "type": "numeric"},
            {"name": "live", "type": "numeric"},
            {
                "name": VECTOR_FIELD, "type": "vector",
                "attrs": {"algorithm": "hnsw", "dims": dimensions, "distance_metric": "cosine", "datatype": "float32"},
            },
        ],
    }


def keyword_field(record: MemoryRecord) -> str:
    """The :data:`KEYWORD_FIELD` value of ``record``: its index terms (stemmed tokens,
    :func:`gateway.memory.tokenize.index_terms`, the terms queries are made of), repeats
    kept (BM25 term frequency), separated by spaces (pure)."""
    tokens = index_terms(indexed_text(record))
    for keyword in record.keywords:
        tokens.extend(index_terms(keyword))
    return " ".join(tokens)


def tenant_tag(parts: Sequence[Partition]) -> str:
    """The ``tu`` value every query over ``parts`` is confined to: their one user, escaped.

    Raises:
        ValueError: ``parts`` is empty or spans several users (a query is one tenant's).
    """
    users = {p.user_id for p in parts}
    if len(users) != 1:
        raise ValueError(f"a search covers the partitions of exactly one user, not {len(users)}")
    return escape_key_part(users.pop())


def tenant_filter(keys: KeySpace, parts: Sequence[Partition], flt: SearchFilter) -> FilterExpression:
    """Filter of one query: the user, the visible partitions and ``flt`` (pure).

    Raises:
        ValueError: as :func:`tenant_tag`.
    """
    expression = Tag("tu") == tenant_tag(parts)
    expression &= Tag("tp") == [keys.partition_tag(p) for p in parts]
    if not flt.include_retired:
        expression &= Num("live") == 1
    if flt.types:
        expression &= Tag("type") == sorted(t.value for t in flt.types)
    if flt.occurred_after is not None:
        expression &= Num("occurred_ts") >= flt.occurred_after.timestamp()
    if flt.occurred_before is not None:
        expression &= Num("occurred_ts") < flt.occurred_before.timestamp()
    return expression


def _scored_keys(reply: Any) -> list[tuple[bytes | str, float]]:
    """``(key, score)`` pairs of an ``FT.SEARCH ... WITHSCORES NOCONTENT`` reply, RESP2
    (``[total, key, score, ...]``) or RESP3 (a map with ``results``)."""
    if isinstance(reply, dict):
        rows = reply.get(b"results") or reply.get("results") or []
        return [(row.get(b"id", row.get("id")), float(row.get(b"score", row.get("score")))) for row in rows]
    return [(reply[i], float(reply[i + 1])) for i in range(1, len(reply) - 1, 2)]


def _record_id(key: str | bytes) -> str:
    """Record id from a record hash key (``...:m:<id>``); replies may be bytes."""
    text = key.decode() if isinstance(key, bytes) else key
    return text.rsplit(":", 1)[-1]


class SearchBackend:
    """See module docstring."""

    name = "search"
    index_version = f"search-{SCHEMA_VERSION}"

    def __init__(self, client: aredis.Redis, keys: KeySpace):
        self._client = client
        self._keys = keys
        self._index: AsyncSearchIndex | None = None

    async def _create(self, dimensions: int, replace: bool) -> None:
        """Create the index (``replace``: drop it first, documents kept). Created here
        rather than by RedisVL for ``FILTER`` and ``NOOFFSETS`` (no phrase queries are
        made); two processes creating it at once is fine."""
        index = AsyncSearchIndex.from_dict(index_schema(self._keys, dimensions), redis_client=self._client,
                                           owns_client=False)
        ft = self._client.ft(index.name)
        exists = await index.exists()
        if exists and replace:
            await ft.dropindex(delete_documents=False)
        if replace or not exists:
            definition = IndexDefinition(
                prefix=[self._keys.index_prefix], index_type=IndexType.HASH, filter=RECORD_FILTER
            )
            try:
                await ft.create_index(index.schema.redis_fields, definition=definition, stopwords=[],
                                      no_term_offsets=True)
            except redis.exceptions.ResponseError as exc:
                if "already exists" not in str(exc).lower():
                    raise
        self._index = index

    async def prepare(self, dimensions: int) -> None:
        """Create the index unless it exists (existing record hashes get indexed)."""
        await self._create(dimensions, replace=False)

    @property
    def index(self) -> AsyncSearchIndex:
        if self._index is None:
            raise RuntimeError("SearchBackend.prepare() was not awaited")
        return self._index

    def queue_put(
        self, pipe: Writes, record: MemoryRecord, vector: np.ndarray | None, old: MemoryRecord | None
    ) -> None:
        """The keyword field always (context or keywords may change without the text),
        the vector when given."""
        fields: dict[str, str | bytes] = {KEYWORD_FIELD: keyword_field(record)}
        if vector is not None:
            fields[VECTOR_FIELD] = np.asarray(vector, dtype=np.float32).tobytes()
        pipe.hset(self._keys.record(record.user_id, record.id), mapping=fields)

    def queue_remove(self, pipe: Writes, record: MemoryRecord) -> None:
        """Nothing: deleting the hash removes it from the index."""

    def _vector_query(
        self, parts: Sequence[Partition], vector: np.ndarray, count: int, flt: SearchFilter
    ) -> VectorQuery:
        return VectorQuery(
            vector=np.asarray(vector, dtype=np.float32).tolist(), vector_field_name=VECTOR_FIELD,
            return_fields=["tu"], filter_expression=tenant_filter(self._keys, parts, flt),
            num_results=count, ef_runtime=max(count, 10),
        )

    @staticmethod
    def _vector_hits(rows: list[dict[str, Any]]) -> list[tuple[str, float]]:
        return [(_record_id(row["id"]), cosine_from_distance(float(row["vector_distance"]))) for row in rows]

    async def vector_search(
        self, parts: Sequence[Partition], vector: np.ndarray, count: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        return self._vector_hits(await self.index.query(self._vector_query(parts, vector, count, flt)))

    async def keyword_search(
        self, parts: Sequence[Partition], text: str, count: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        """``(record id, BM25 score)`` by BM25 of the query's unique tokens (at most
        :data:`~gateway.memory.keyword_index.MAX_QUERY_TERMS`), best first, ties to the
        larger (newer) id, as the vectorset backend's index ranks them.

        One ``FT.SEARCH`` per term, all in one pipeline, each scored ``BM25STD`` and
        capped at :data:`~gateway.memory.keyword_index.POSTINGS_PER_TERM` records, and the
        per-term scores summed here: RediSearch 2.10 scores an OR of terms inside the
        tenant filter's intersection by its first matching term only (``EXPLAINSCORE``:
        a record holding four of five query terms scored by one), which put records
        matching a single rare term above those matching them all."""
        condition = str(tenant_filter(self._keys, parts, flt))
        terms = query_terms(text)
        if not terms:
            return []
        pipe = self._client.pipeline(transaction=False)
        for term in terms:
            pipe.execute_command(
                "FT.SEARCH", self.index.name, f"@{KEYWORD_FIELD}:({_ESCAPER.escape(term)}) {condition}",
                "SCORER", "BM25STD", "WITHSCORES", "NOCONTENT", "LIMIT", 0, POSTINGS_PER_TERM, "DIALECT", 2,
            )
        scores: dict[str, float] = {}
        for reply in await pipe.execute():
            for key, score in _scored_keys(reply):
                doc_id = _record_id(key)
                scores[doc_id] = scores.get(doc_id, 0.0) + score
        return [(d, scores[d]) for d in heapq.nlargest(count, scores, key=lambda d: (scores[d], d))]

    async def rank(
        self, parts: Sequence[Partition], vector: np.ndarray, text: str | None, count: int, flt: SearchFilter
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The vector query and the keyword pipeline at once, on two connections."""
        if text is None:
            return await self.vector_search(parts, vector, count, flt), []
        return await asyncio.gather(
            self.vector_search(parts, vector, count, flt), self.keyword_search(parts, text, count, flt)
        )

    def queue_similarities(
        self, pipe: Pipeline, parts: Sequence[Partition], ids: Sequence[str], vector: np.ndarray
    ) -> Callable[[Sequence[object]], dict[str, float]]:
        """The ``embedding`` field of each record hash (records are per user, not per
        partition)."""
        user_id = parts[0].user_id if parts else ""
        for doc_id in ids:
            pipe.hget(self._keys.record(user_id, doc_id), VECTOR_FIELD)
        query = np.asarray(vector, dtype=np.float32)

        def finish(replies: Sequence[object]) -> dict[str, float]:
            out = {}
            for doc_id, blob in zip(ids, replies, strict=True):
                if isinstance(blob, bytes) and len(blob) == 4 * len(query):
                    out[doc_id] = clamp01(float(np.frombuffer(blob, dtype=np.float32) @ query))
            return out

        return finish

    async def reset_index(self, dimensions: int) -> None:
        """Drop the index and those of older schema versions of this prefix (documents
        kept), then create the current one with ``dimensions``."""
        old = re.compile(re.escape(f"{self._keys.prefix}:idx:v") + r"\d+")
        for raw in await self._client.execute_command("FT._LIST"):
            name = raw.decode() if isinstance(raw, bytes) else str(raw)
            if old.fullmatch(name) and name != index_name(self._keys):
                await self._client.ft(name).dropindex(delete_documents=False)
        await self._create(dimensions, replace=True)

    async def rebuild_partition(
        self, part: Partition, items: Sequence[tuple[MemoryRecord, np.ndarray]]
    ) -> None:
        pipe = self._client.pipeline(transaction=False)
        for record, vector in items:
            self.queue_put(pipe, record, vector, None)
        await pipe.execute()
