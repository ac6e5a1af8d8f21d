"""What differs between the two index backends (``search`` and ``vectorset``).

Both keep records in the same hashes, listing zsets and friend sets
(:mod:`gateway.memory.repository`); a backend adds the vector index (a vector set per
partition, or the ``embedding`` field of a RediSearch index) and the keyword ranking.
Write methods only *queue* commands on the caller's :class:`~gateway.memory.scripts.Batch`
(one atomic script call, as MULTI/EXEC) or, when rebuilding, a pipeline, so a record hash
and its index entries are written together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from redis.asyncio.client import Pipeline

from gateway.memory.filters import SearchFilter
from gateway.memory.keys import Partition
from gateway.memory.records import MemoryRecord
from gateway.memory.scripts import Writes

__all__ = ['IndexBackend', 'Prefetched']


@dataclass(frozen=True, slots=True)
class Prefetched:
    """Several searches ranked in one command with their candidates read (a backend's
    optional ``search``): each search's :meth:`IndexBackend.rank` result (``rankings``),
    the record hash of each id the command read (``records``: the ``HGETALL`` reply packed
    by :data:`~gateway.memory.codec.PACK_FUNCTION`, empty for a missing record) and each id's stored vector as the backend replied it
    (``vectors``; None when absent) and the function that turns ids and their stored
    vectors, in order, into each found vector's cosine in [0, 1] with a query vector
    (``similarities``, as :meth:`IndexBackend.queue_similarities`' reader does). Ids in
    neither map were not read."""

    rankings: list[tuple[list[tuple[str, float]], list[tuple[str, float]]]]
    records: dict[str, bytes]
    vectors: dict[str, object]
    similarities: Callable[[Sequence[str], Sequence[object], np.ndarray], dict[str, float]]


class IndexBackend(Protocol):
    """Vector and keyword index over the record hashes."""

    name: str
    #: Recorded in the store meta; a change asks for a re-embed (e.g. "vectorset-q8").
    index_version: str

    async def prepare(self, dimensions: int) -> None:
        """Create what the backend needs (idempotent); check its recorded schema.

        Raises:
            gateway.memory.meta.StoreMismatch: the stored index was built differently.
        """
        ...

    def queue_put(
        self, pipe: Writes, record: MemoryRecord, vector: np.ndarray | None, old: MemoryRecord | None
    ) -> None:
        """Index ``record`` (after its hash is queued). ``vector=None``: the text did not
        change, keep the stored vector. ``old``: the version being replaced, if any."""
        ...

    def queue_remove(self, pipe: Writes, record: MemoryRecord) -> None:
        """Remove ``record``'s index entries (its hash is deleted by the caller)."""
        ...

    async def vector_search(
        self, parts: Sequence[Partition], vector: np.ndarray, count: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        """Up to ``count`` ``(record id, cosine in [0, 1])`` over ``parts``, best first."""
        ...

    async def keyword_search(
        self, parts: Sequence[Partition], text: str, count: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        """Up to ``count`` ``(record id, BM25 score > 0)`` over ``parts`` ranked by BM25
        of ``text``, best first (the scores feed :func:`ranking.convex_scores`)."""
        ...

    async def rank(
        self, parts: Sequence[Partition], vector: np.ndarray, text: str | None, count: int, flt: SearchFilter
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """Both rankings, in as few round trips as the backend can: ``vector_search`` and,
        when ``text`` is given, ``keyword_search`` (else ``[]``)."""
        ...

    def queue_similarities(
        self, pipe: Pipeline, parts: Sequence[Partition], ids: Sequence[str], vector: np.ndarray
    ) -> Callable[[Sequence[object]], dict[str, float]]:
        """Queue on ``pipe`` the reads of the stored vectors of ``ids`` (records of
        ``parts``); returns the function that turns those replies, in order, into the
        cosine in [0, 1] of each found vector with ``vector`` (ids not found left out).
        Lets the caller read them in the same round trip as the records."""
        ...

    async def reset_index(self, dimensions: int) -> None:
        """Re-embed support, called once first: make the index accept ``dimensions``."""
        ...

    async def rebuild_partition(
        self, part: Partition, items: Sequence[tuple[MemoryRecord, np.ndarray]]
    ) -> None:
        """Re-embed support: replace the vectors of ``part`` with ``items`` (every record
        of the partition with its new vector)."""
        ...
