"""A Redis cache in front of any embedder: key = model + dims + sha256(text), value =
the float32 vector bytes, TTL ``cache_ttl_s``. One MGET per batch; only the texts
missing from the cache reach the model, in one ``embed_many`` call. One exception, for a
search's latency: a single text (a query) not held in memory, asked while the model is
idle (the inner embedder's ``submit_if_idle``,
:class:`~gateway.memory.embeddings.batching.BatchingEmbedder`), is embedded while the MGET
is in flight instead of after it; on a cache hit that pass is cancelled or, already
running, its result dropped (the cached vector is returned, as before), so the model only
does that spare work while nothing else wants it. The write-back of new
vectors is not waited for (one round trip less before a search): one writer task per
cache (started on the first miss, in the running event loop) takes every batch queued
since its last round trip and SETs them in one pipeline; until a vector is written it is
served from memory, so a text embedded once is not embedded again meanwhile. A write-back
that fails is logged and dropped (the text is embedded again next time).
:meth:`CachedEmbedder.close` (the store calls it before its Redis client closes) lets the
writer finish what is queued, then cancels it; vectors embedded after that are not
written back. The keys spread over
a cluster's slots, so on Redis Cluster the MGET is ``mget_nonatomic`` (redis-py: one MGET
per slot, pipelined per node)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import redis.asyncio as aredis

from gateway.memory.embeddings.base import Embedder
from gateway.memory.keys import KeySpace
from gateway.memory.redis_errors import redis_boundary
from gateway.runtime.errors import MemoryUnavailable

__all__ = ['CLUSTER_CACHE_BUDGET_S', 'CachedEmbedder']

log = logging.getLogger(__name__)

#: Seconds a cache read or write-back may take on Redis Cluster before it is skipped: a
#: quarter of the recall plugins' 800 ms store limit, far above a healthy round trip
#: (~1 ms) and above embedding one query locally (~10 ms), so a cache that is slow or on
#: a dead node costs a query at most this (bench failover).
CLUSTER_CACHE_BUDGET_S = 0.2


class CachedEmbedder:
    """An :class:`Embedder` that asks ``inner`` only for texts not cached in Redis."""

    def __init__(self, inner: Embedder, client: aredis.Redis, keys: KeySpace, ttl_seconds: int):
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self._client = client
        self._keys = keys
        self._ttl = ttl_seconds
        #: Vectors queued or being written back, by cache key (module docstring).
        self._pending: dict[str, bytes] = {}
        #: Batches queued for the writer, oldest first.
        self._queue: list[dict[str, bytes]] = []
        self._writer: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._idle: asyncio.Event | None = None
        self._closed = False
        from gateway.memory.cluster import is_cluster

        self._cluster = is_cluster(client)

    @property
    def batch_max(self) -> int | None:
        """Most texts the model takes in one pass: the micro-batcher's, when ``inner`` has
        one (None otherwise)."""
        return getattr(self.inner, "batch_max", None)

    def _key(self, text: str) -> str:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return self._keys.embedding_cache(self.model, self.dimensions, digest)

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """See :class:`Embedder`. Raises MemoryUnavailable when Redis is down (the cache
        read fails); on Redis Cluster the cache is best effort instead: a read that fails
        or takes longer than :data:`CLUSTER_CACHE_BUDGET_S` (the cache key's node is down,
        e.g. during a failover) is skipped and the model embeds. The write-back of new
        vectors runs after this returns (module docstring)."""
        if not texts or self._ttl == 0:
            return await self.inner.embed_many(texts)
        keys = [self._key(t) for t in texts]
        cached: Any = [self._pending.get(k) for k in keys]
        wanted = [k for k, blob in zip(keys, cached, strict=True) if blob is None]
        early = self._embed_early(texts) if len(texts) == 1 and wanted else None
        try:
            if wanted:
                found: Any = [None] * len(wanted)
                try:
                    async with self._budget():
                        with redis_boundary():
                            found = await (self._client.mget_nonatomic(wanted) if self._cluster
                                           else self._client.mget(wanted))
                except (MemoryUnavailable, TimeoutError):
                    if not self._cluster:
                        raise
                    # on a cluster the cache keys live on other nodes than the tenant's data: a
                    # dead shard must not fail (or slow) every user's query
                replies = iter(found)
                cached = [blob if blob is not None else next(replies) for blob in cached]
            out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
            missing = [i for i, blob in enumerate(cached) if not self._fill(out, i, blob)]
            if missing:
                # the one text of an early pass is the one missing text when there is one
                fresh = await (early if early is not None else self.inner.embed_many([texts[i] for i in missing]))
                early = None
        finally:
            if early is not None:  # a hit, or the read failed: the pass is not wanted
                early.cancel()
        if missing:
            out[missing] = fresh
            if not self._closed:
                self._enqueue({keys[i]: row.astype(np.float32).tobytes() for i, row in zip(missing, fresh, strict=True)})
        return out

    def _embed_early(self, texts: Sequence[str]) -> asyncio.Future[np.ndarray] | None:
        """The inner embedding of ``texts`` queued now, while the cache is read, when the
        inner embedder is idle (its ``submit_if_idle``; module docstring); else None. The
        future's error, should nobody await it (a hit), is retrieved so it is not logged
        as lost."""
        submit = getattr(self.inner, "submit_if_idle", None)
        early = submit(texts) if submit is not None else None
        if early is not None:
            early.add_done_callback(lambda done: done.cancelled() or done.exception())
        return early

    def _enqueue(self, rows: dict[str, bytes]) -> None:
        """Queue ``rows`` for the writer, starting it in the running loop when there is
        none there (first miss; or the loop it ran in has ended)."""
        self._pending.update(rows)
        self._queue.append(rows)
        loop = asyncio.get_running_loop()
        if self._writer is None or self._writer.done() or self._writer.get_loop() is not loop:
            self._wake, self._idle = asyncio.Event(), asyncio.Event()
            self._writer = loop.create_task(self._write_forever(self._wake, self._idle))
        assert self._wake is not None and self._idle is not None
        self._idle.clear()
        self._wake.set()

    async def _write_forever(self, wake: asyncio.Event, idle: asyncio.Event) -> None:
        """The writer: every batch queued so far in one pipeline, then wait for more."""
        while True:
            while self._queue:
                rows: dict[str, bytes] = {}
                for batch in self._queue:
                    rows.update(batch)
                self._queue.clear()
                await self._write_back(rows)
            wake.clear()
            idle.set()
            await wake.wait()

    async def _write_back(self, rows: dict[str, bytes]) -> None:
        """SET each vector with the TTL (one pipeline); logged and dropped on failure."""
        try:
            async with self._budget():
                with redis_boundary():
                    pipe = self._client.pipeline(transaction=False)
                    for key, blob in rows.items():
                        pipe.set(key, blob, ex=self._ttl)
                    await pipe.execute()
        except Exception as exc:  # nobody awaits the writer: log, never raise
            log.warning("embedding cache write-back of %d vectors skipped: %r", len(rows), exc)
        finally:
            for key, blob in rows.items():
                if self._pending.get(key) is blob:
                    del self._pending[key]

    async def flush(self) -> None:
        """Wait until the writer has written (or dropped) every batch queued so far."""
        writer, idle = self._writer, self._idle
        if writer is None or writer.done() or idle is None or writer.get_loop() is not asyncio.get_running_loop():
            return
        await idle.wait()

    async def close(self) -> None:
        """Stop writing back: let the writer finish what is queued (:meth:`flush`), then
        cancel it. Idempotent; the cache still answers reads after it."""
        self._closed = True
        await self.flush()
        writer, self._writer = self._writer, None
        if writer is not None and not writer.done():
            writer.cancel()
            if writer.get_loop() is asyncio.get_running_loop():
                with contextlib.suppress(asyncio.CancelledError):
                    await writer
        self._queue.clear()
        self._pending.clear()

    def _budget(self) -> Any:
        """On a cluster, :data:`CLUSTER_CACHE_BUDGET_S` per cache round trip (the client
        retries a dead node for seconds, far past a recall's 800 ms); no limit otherwise
        (a no-op context: no timer object per query)."""
        return asyncio.timeout(CLUSTER_CACHE_BUDGET_S) if self._cluster else contextlib.nullcontext()

    def _fill(self, out: np.ndarray, row: int, blob: bytes | None) -> bool:
        if blob is None or len(blob) != 4 * self.dimensions:
            return False
        out[row] = np.frombuffer(blob, dtype=np.float32)
        return True

    async def aclose(self) -> None:
        """:meth:`close`, then close the inner embedder."""
        await self.close()
        await self.inner.aclose()
