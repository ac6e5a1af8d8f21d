"""``search`` backend: RedisVL ``AsyncSearchIndex`` on the Redis Query Engine (FT.*).

The index covers the record hashes of every user (prefix ``<prefix>:{``; only hashes
are indexed and records are the only hashes there). Its schema is data,
:func:`index_schema`, versioned by :data:`SCHEMA_VERSION`; the version is part of the
recorded store settings (``index_version``), so a schema change is detected at start-up
and fixed by ``memgate memories reembed`` (which recreates the index).

Tenancy: queries always carry ``@tu:{<escaped user>} @tp:{<partitions>}``, built with
RedisVL's ``Tag`` filter (which escapes); the values are our percent-encoded ids anyway,
TAG fields are case-sensitive (``Alice`` and ``alice`` are different users), and the
TAG separator ``,`` cannot occur in them. Vector ranking: KNN over an HNSW COSINE field
(distance ``1 - cos``); keyword ranking: BM25STD over the TEXT field, queried with our
own tokens (:func:`tokenize.tokenize`) so no user text reaches the query syntax.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import redis.asyncio as aredis
from redis.asyncio.client import Pipeline
from redisvl.index import AsyncSearchIndex
from redisvl.query import TextQuery, VectorQuery
from redisvl.query.filter import FilterExpression, Num, Tag

from gateway.memory.filters import SearchFilter
from gateway.memory.keys import KeySpace, Partition, escape_key_part
from gateway.memory.ranking import clamp01, cosine_from_distance
from gateway.memory.records import MemoryRecord
from gateway.memory.scripts import Writes
from gateway.memory.tokenize import tokenize

__all__ = ['SCHEMA_VERSION', 'VECTOR_FIELD', 'SearchBackend', 'index_schema', 'tenant_filter']

SCHEMA_VERSION = 1
VECTOR_FIELD = "embedding"


def index_schema(keys: KeySpace, dimensions: int) -> dict[str, Any]:
    """RedisVL schema dict of the record index (fields from :mod:`gateway.memory.codec`)."""
    tag = {"case_sensitive": True}
    return {
        "index": {"name": f"{keys.prefix}:idx:v{SCHEMA_VERSION}", "prefix": keys.index_prefix, "storage_type": "hash"},
        "fields": [
            {"name": "tu", "type": "tag", "attrs": tag},
            {"name": "tp", "type": "tag", "attrs": tag},
            {"name": "type", "type": "tag", "attrs": tag},
            {"name": "text", "type": "text"},
            {"name": "occurred_ts", "type": "numeric"},
            {"name": "created_ts", "type": "numeric"},
            {"name": "live", "type": "numeric"},
            {
                "name": VECTOR_FIELD, "type": "vector",
                "attrs": {"algorithm": "hnsw", "dims": dimensions, "distance_metric": "cosine", "datatype": "float32"},
            },
        ],
    }


def tenant_filter(keys: KeySpace, parts: Sequence[Partition], flt: SearchFilter) -> FilterExpression:
    """Filter of one query: the user, the visible partitions and ``flt`` (pure)."""
    expression = Tag("tu") == escape_key_part(parts[0].user_id)
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

    def _make_index(self, dimensions: int) -> AsyncSearchIndex:
        schema = index_schema(self._keys, dimensions)
        return AsyncSearchIndex.from_dict(schema, redis_client=self._client, owns_client=False)

    async def prepare(self, dimensions: int) -> None:
        """Create the index unless it exists (existing record hashes get indexed)."""
        self._index = self._make_index(dimensions)
        await self._index.create(overwrite=False)

    @property
    def index(self) -> AsyncSearchIndex:
        if self._index is None:
            raise RuntimeError("SearchBackend.prepare() was not awaited")
        return self._index

    def queue_put(
        self, pipe: Writes, record: MemoryRecord, vector: np.ndarray | None, old: MemoryRecord | None
    ) -> None:
        if vector is not None:
            blob = np.asarray(vector, dtype=np.float32).tobytes()
            pipe.hset(self._keys.record(record.user_id, record.id), mapping={VECTOR_FIELD: blob})

    def queue_remove(self, pipe: Writes, record: MemoryRecord) -> None:
        """Nothing: deleting the hash removes it from the index."""

    async def vector_search(
        self, parts: Sequence[Partition], vector: np.ndarray, count: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        query = VectorQuery(
            vector=np.asarray(vector, dtype=np.float32).tolist(), vector_field_name=VECTOR_FIELD,
            return_fields=["tu"], filter_expression=tenant_filter(self._keys, parts, flt),
            num_results=count, ef_runtime=max(count, 10),
        )
        rows = await self.index.query(query)
        return [(_record_id(row["id"]), cosine_from_distance(float(row["vector_distance"]))) for row in rows]

    async def keyword_search(
        self, parts: Sequence[Partition], text: str, count: int, flt: SearchFilter
    ) -> list[str]:
        terms = " ".join(dict.fromkeys(tokenize(text)))
        if not terms:
            return []
        query = TextQuery(
            terms, text_field_name="text", text_scorer="BM25STD", return_fields=["tu"],
            filter_expression=tenant_filter(self._keys, parts, flt), num_results=count, stopwords=None,
        )
        return [_record_id(row["id"]) for row in await self.index.query(query)]

    async def rank(
        self, parts: Sequence[Partition], vector: np.ndarray, text: str | None, count: int, flt: SearchFilter
    ) -> tuple[list[tuple[str, float]], list[str]]:
        """The two FT queries one after the other (RedisVL runs each on its own)."""
        hits = await self.vector_search(parts, vector, count, flt)
        keyword_ids = await self.keyword_search(parts, text, count, flt) if text is not None else []
        return hits, keyword_ids

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
        """Drop the index (documents kept) and create it with ``dimensions``."""
        self._index = self._make_index(dimensions)
        await self._index.create(overwrite=True, drop=False)

    async def rebuild_partition(
        self, part: Partition, items: Sequence[tuple[MemoryRecord, np.ndarray]]
    ) -> None:
        pipe = self._client.pipeline(transaction=False)
        for record, vector in items:
            self.queue_put(pipe, record, vector, None)
        await pipe.execute()
