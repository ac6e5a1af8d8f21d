"""Micro-batching in front of an embedder.

Concurrent callers (recall queries, memorization jobs) each call ``embed_many``; their
texts wait in one bounded FIFO and a single consumer task sends them to the inner
embedder in micro-batches: at most ``batch_max`` texts per call (whole requests; a
request larger than ``batch_max`` is cut into pieces of :data:`BULK_PIECE` texts, each
queued only once the one before it is embedded, so a bulk caller, e.g. a conversation
ingest of hundreds of turns, holds the model for one small batch at a time and other
callers' texts go first), one forward pass per call, which
the inner embedder runs in its worker thread, off the event loop. One batch runs at a
time (the local models have one inference thread); texts that arrive meanwhile form the
next batch, so under load batches fill by themselves. When the model is idle the first
request waits at most ``batch_wait_ms`` for company (0: not at all). :attr:`BatchingEmbedder.idle`
says whether a request now would start a pass at once (nothing waits, no pass runs), and
:meth:`BatchingEmbedder.submit_if_idle` queues texts only then (a caller that may not
need the vectors, e.g. the embedding cache while it reads, uses the model only when nobody
else wants it).

- Every caller gets the rows of its own texts, in its order.
- An error of the inner call is raised to every caller of that batch.
- More than ``queue_max`` texts waiting: :class:`EmbeddingOverloaded` at once (a
  :class:`~gateway.runtime.errors.MemoryUnavailable`, 503: recall fails open, a memorization job
  retries with backoff).
- A caller cancelled while waiting is dropped from its batch (not sent to the model if
  the batch has not started).

The consumer task belongs to the event loop of the first call (the gateway's loop).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gateway.memory.embeddings.base import Embedder
from gateway.runtime.errors import MemoryUnavailable

__all__ = ['BULK_PIECE', 'BatchingEmbedder', 'EmbeddingOverloaded']

#: Texts per piece of a bulk caller (more than ``batch_max`` texts): another caller waits
#: for at most one such piece (2 memory texts of up to 256 tokens: ~50 ms on one core
#: with the local MiniLM), where a whole ingest took seconds. Pieces go alone, after
#: the other waiting requests (:meth:`BatchingEmbedder._take`).
BULK_PIECE = 2


class EmbeddingOverloaded(MemoryUnavailable):
    """More texts wait for the embedding model than ``memory.embedding.queue_max`` (503)."""

    code = "embedding_overloaded"


@dataclass(slots=True)
class _Request:
    texts: list[str]
    future: asyncio.Future[np.ndarray]
    arrived: float = field(default=0.0)
    bulk: bool = False  # a piece of a caller with more than batch_max texts


class BatchingEmbedder:
    """An :class:`~gateway.memory.embeddings.base.Embedder` coalescing concurrent calls
    to ``inner`` (see module docstring).

    Args:
        inner: the embedder doing the forward pass (its ``embed_many`` gets each batch).
        batch_max: most texts per inner call (>= 1).
        batch_wait_ms: longest wait for more texts while idle, milliseconds (>= 0).
        queue_max: most texts waiting (>= 1).
    """

    def __init__(self, inner: Embedder, batch_max: int = 32, batch_wait_ms: float = 0.0, queue_max: int = 1024):
        if batch_max < 1 or queue_max < 1 or batch_wait_ms < 0:
            raise ValueError("batch_max and queue_max must be >= 1, batch_wait_ms >= 0")
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self.batch_max = batch_max
        self.queue_max = queue_max
        self._wait_s = batch_wait_ms / 1000.0
        self._queue: deque[_Request] = deque()
        self._queued_texts = 0
        self._wakeup: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._running = False  # a batch is in the inner embedder
        #: Inner calls made and texts sent (for tests and benchmarks).
        self.batches = 0
        self.texts_embedded = 0

    @property
    def idle(self) -> bool:
        """True when no text waits and no batch is being embedded: a request now starts a
        forward pass at once, on a model nobody else is using."""
        return not self._closed and not self._running and self._queued_texts == 0

    @property
    def queued_texts(self) -> int:
        """Texts waiting for a forward pass (cancelled callers included until skipped)."""
        return self._queued_texts

    def _start(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._loop is not None and not self._loop.is_closed() and self._task is not None and not self._task.done():
                raise RuntimeError("BatchingEmbedder is already serving another running event loop")
            self._loop = loop
            self._wakeup = asyncio.Event()
            self._task = None
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="memgate-embed-batcher")
        return loop

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """See :class:`~gateway.memory.embeddings.base.Embedder`.

        Raises:
            EmbeddingOverloaded: ``queue_max`` texts already wait.
            MemoryUnavailable: the batcher is closed, or the inner embedder failed.
            Exception: whatever the inner ``embed_many`` raised for this batch.
        """
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if self._closed:
            raise MemoryUnavailable("the embedder is closed")
        if self._queued_texts and self._queued_texts + len(texts) > self.queue_max:
            raise EmbeddingOverloaded(
                f"embedding queue full: {self._queued_texts} texts wait "
                f"(memory.embedding.queue_max={self.queue_max})"
            )
        if len(texts) > self.batch_max:  # one piece at a time: others' texts go in between
            piece = min(self.batch_max, BULK_PIECE)
            return np.concatenate([await self._queued(texts[at:at + piece], bulk=True)
                                   for at in range(0, len(texts), piece)])
        return await self._queued(texts)

    def submit_if_idle(self, texts: Sequence[str]) -> asyncio.Future[np.ndarray] | None:
        """When :attr:`idle` and ``texts`` (at least one) fit one batch: ``texts`` queued
        now, so a pass starts on them at once, and the future of their rows (what
        :meth:`embed_many` would return); else None, nothing queued. Cancelling the future
        drops the texts if their pass has not started (module docstring). Same errors as
        :meth:`embed_many`, set on the future."""
        if not self.idle or not texts or len(texts) > self.batch_max:
            return None
        return self._enqueue(texts)

    def _enqueue(self, texts: Sequence[str], bulk: bool = False) -> asyncio.Future[np.ndarray]:
        loop = self._start()
        request = _Request(list(texts), loop.create_future(), loop.time(), bulk)
        self._queue.append(request)
        self._queued_texts += len(request.texts)
        assert self._wakeup is not None
        self._wakeup.set()
        return request.future

    async def _queued(self, texts: Sequence[str], bulk: bool = False) -> np.ndarray:
        if self._closed:
            raise MemoryUnavailable("the embedder is closed")
        return await self._enqueue(texts, bulk)

    async def _gather(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wait until ``batch_max`` texts wait or the oldest has waited ``batch_wait_ms``."""
        assert self._wakeup is not None
        deadline = self._queue[0].arrived + self._wait_s
        while self._queued_texts < self.batch_max:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self._wakeup.clear()
            try:
                async with asyncio.timeout(remaining):
                    await self._wakeup.wait()
            except TimeoutError:
                return

    def _take(self) -> list[_Request]:
        """The next batch: the waiting requests that are not bulk pieces, whole, in order,
        up to ``batch_max`` texts (a larger one alone); when only bulk pieces wait, the
        oldest piece alone (a short query is never padded into a pass of long bulk texts,
        and never waits behind more than the piece already running)."""
        batch: list[_Request] = []
        size = 0
        kept: deque[_Request] = deque()
        piece: _Request | None = None
        while self._queue:
            head = self._queue.popleft()
            if head.future.done():  # cancelled while waiting
                self._queued_texts -= len(head.texts)
                continue
            if head.bulk or (batch and size + len(head.texts) > self.batch_max):
                if head.bulk and piece is None:
                    piece = head
                else:
                    kept.append(head)
                continue
            batch.append(head)
            size += len(head.texts)
        if not batch and piece is not None:
            batch, piece = [piece], None
        if piece is not None:
            kept.appendleft(piece)  # the oldest piece stays first among the pieces
        self._queue = kept
        self._queued_texts -= sum(len(r.texts) for r in batch)
        return batch

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._wakeup is not None
        while True:
            if not self._queue:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            if self._wait_s > 0:
                await self._gather(loop)
            batch = self._take()
            if not batch:
                continue
            texts = [text for request in batch for text in request.texts]
            self._running = True
            try:
                vectors = await self.inner.embed_many(texts)
            except asyncio.CancelledError:
                self._fail(batch, MemoryUnavailable("the embedder was closed during the batch"))
                raise
            except Exception as exc:
                self._fail(batch, exc)
                continue
            finally:
                self._running = False
            self.batches += 1
            self.texts_embedded += len(texts)
            start = 0
            for request in batch:
                end = start + len(request.texts)
                if not request.future.done():
                    request.future.set_result(vectors[start:end])
                start = end

    @staticmethod
    def _fail(batch: list[_Request], exc: BaseException) -> None:
        for request in batch:
            if not request.future.done():
                request.future.set_exception(exc)

    async def aclose(self) -> None:
        """Stop the consumer, fail waiting callers with MemoryUnavailable, close ``inner``."""
        self._closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, RuntimeError):
                pass
        waiting = list(self._queue)
        self._queue.clear()
        self._queued_texts = 0
        self._fail(waiting, MemoryUnavailable("the embedder is closed"))
        await self.inner.aclose()
