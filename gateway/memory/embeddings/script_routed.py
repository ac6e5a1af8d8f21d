"""One vector space per script (``memory.embedding.provider: script``; ``language: mixed``
picks it for a new store): a Latin-script text is embedded by the ``latin`` part
(all-MiniLM-L6-v2, int8 ONNX: the ``onnx`` provider), a text with a CJK character by the
``cjk`` part (multilingual-e5-small, int8 ONNX: the ``e5onnx`` provider).

Routing rule (:func:`routes_to_cjk`, defined with the identity helpers in
:mod:`gateway.memory.embeddings.base`, which marks search texts by it): a text goes to ``cjk`` when its first 2,000
characters hold a CJK character (:data:`gateway.runtime.text.CJK_RE`: Han, kana,
hangul), the rule :meth:`gateway.memory.calibration.Calibration.fit_for` uses to pick
the ``zh`` curve; a leading ``query: `` (the E5 search-text mark) is not looked at, so a
marked search text routes as the text it marks.

Vectors: ``dimensions = latin.dimensions + cjk.dimensions`` (384 + 384 = 768). The row of
a Latin text is ``[latin vector, 0 ...]``, of a CJK text ``[0 ..., cjk vector]``; both
parts make unit rows, so every row has unit norm. The cosine of two Latin texts is
exactly MiniLM's, of two CJK texts exactly e5's, and of a Latin and a CJK text 0 (they
can still meet through BM25 in hybrid search). One ``embed_many`` call is split into
one sub-batch per part, run concurrently (each part has its own worker thread), and
reassembled in order.

Search texts: :func:`gateway.memory.embeddings.base.query_text` marks a search text
``query: `` by the identity of the part it routes to (:func:`query_part`), so a CJK
search text gets E5's mark and a Latin one none, through every wrapper (batcher, cache,
lazy loader).

Identity recorded with the store: ``script(<latin identity>|<cjk identity>)``
(:func:`identity`); :func:`parts_of` reads the two back, so code that sees only
``Embedder.model`` (the clause classifier) can find each part and its slice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gateway.memory.embeddings.base import SCRIPT_ROUTE_CHARS as ROUTE_CHARS
from gateway.memory.embeddings.base import Embedder, route, routes_to_cjk
from gateway.memory.embeddings.base import script_identity as identity
from gateway.memory.embeddings.base import script_parts as parts_of

__all__ = ['ROUTE_CHARS', 'Part', 'ScriptRoutedEmbedder', 'identity', 'part_slices', 'parts_of', 'route', 'routes_to_cjk']


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a composite as seen from its identity alone: the part's ``model``
    identity and its columns ``start:stop`` in the composite's vectors."""

    model: str
    start: int
    stop: int


def part_slices(model: str, dimensions: int, latin_dims: int | None, cjk_dims: int | None) -> tuple[Part, Part]:
    """The two parts of the composite ``model`` with ``dimensions`` columns: ``latin``
    takes the first ``latin_dims``, ``cjk`` the last ``cjk_dims``; a None size is what the
    other leaves.

    Raises:
        ValueError: ``model`` is not a composite's identity, both sizes are None, or the
            sizes do not add up to ``dimensions``.
    """
    names = parts_of(model)
    if names is None:
        raise ValueError(f"{model!r} is not a script-routed embedder's identity")
    if latin_dims is None:
        if cjk_dims is None:
            raise ValueError(f"the part sizes of {model!r} are unknown")
        latin_dims = dimensions - cjk_dims
    if cjk_dims is None:
        cjk_dims = dimensions - latin_dims
    if latin_dims <= 0 or cjk_dims <= 0 or latin_dims + cjk_dims != dimensions:
        raise ValueError(f"{model!r}: parts of {latin_dims} and {cjk_dims} dims do not make {dimensions}")
    return Part(names[0], 0, latin_dims), Part(names[1], latin_dims, dimensions)


class ScriptRoutedEmbedder:
    """See module docstring. Owns its two parts (closed by :meth:`aclose`).

    Attributes:
        parts: ``(latin, cjk)``, the loaded part embedders.
        slices: their columns, ``(slice(0, latin dims), slice(latin dims, dimensions))``.
    """

    def __init__(self, latin: Embedder, cjk: Embedder) -> None:
        self.parts: tuple[Embedder, Embedder] = (latin, cjk)
        self.model = identity(latin.model, cjk.model)
        self.dimensions = int(latin.dimensions) + int(cjk.dimensions)
        self.slices = (slice(0, latin.dimensions), slice(latin.dimensions, self.dimensions))

    def _split(self, texts: Sequence[str]) -> tuple[list[int], list[int]]:
        rows: tuple[list[int], list[int]] = ([], [])
        for i, text in enumerate(texts):
            rows[route(text)].append(i)
        return rows

    def _assemble(self, rows: tuple[list[int], list[int]], used: list[int], vectors: Sequence[np.ndarray]) -> np.ndarray:
        out = np.zeros((len(rows[0]) + len(rows[1]), self.dimensions), dtype=np.float32)
        for n, part_vectors in zip(used, vectors, strict=True):
            out[rows[n], self.slices[n]] = np.asarray(part_vectors, dtype=np.float32)
        return out

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """Shape ``(len(texts), dimensions)``, unit rows, in order: each text embedded
        by the part it routes to (:func:`route`), one call per part that has texts, the
        two calls concurrent (one part's call, e.g. a search text's, awaited directly: no
        task for it).

        Raises:
            gateway.runtime.errors.MemoryUnavailable: a part failed.
        """
        rows = self._split(texts)
        used = [n for n in (0, 1) if rows[n]]
        if len(used) == 1:
            vectors = [await self.parts[used[0]].embed_many(texts)]
        else:
            vectors = list(await asyncio.gather(*(self.parts[n].embed_many([texts[i] for i in rows[n]]) for n in used)))
        return self._assemble(rows, used, vectors)

    def encode_sync(self, texts: Sequence[str]) -> np.ndarray:
        """As :meth:`embed_many`, the parts run one after the other in the calling thread
        (benchmarks; parts that are :class:`~gateway.memory.embeddings.base.ThreadedEmbedder`)."""
        rows = self._split(texts)
        used = [n for n in (0, 1) if rows[n]]
        parts: list[Any] = list(self.parts)  # encode_sync is no part of the Embedder protocol
        return self._assemble(rows, used, [parts[n].encode_sync([texts[i] for i in rows[n]]) for n in used])

    async def aclose(self) -> None:
        """Close both parts."""
        for part in self.parts:
            await part.aclose()
