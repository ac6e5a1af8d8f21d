"""The embedder contract shared by the local model, the OpenAI-compatible client and the
Redis cache in front of either."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ['Embedder', 'embed_one', 'normalize_rows']


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
            gateway.errors.MemoryUnavailable: the model or the embeddings API is unreachable.
        """
        ...

    async def aclose(self) -> None:
        """Release threads, HTTP clients."""
        ...


async def embed_one(embedder: Embedder, text: str) -> np.ndarray:
    """Shape ``(dimensions,)``: the vector of one text."""
    return (await embedder.embed_many([text]))[0]


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """A float32 copy of ``matrix`` (n, d) with rows scaled to unit L2 norm (zero rows stay 0)."""
    out = np.asarray(matrix, dtype=np.float32).reshape(len(matrix), -1).copy()
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out
