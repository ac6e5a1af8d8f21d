"""Test doubles for the memory tests. Only the 1,000-tenant scale test uses the fake
embedder; every contract test uses the real local model."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from gateway.memory.embeddings.base import Embedder, normalize_rows


class HashEmbedder:
    """Deterministic pseudo-random unit vectors from sha256(text): cheap, no model."""

    def __init__(self, model: str = "fake-hash", dimensions: int = 32):
        self.model = model
        self.dimensions = dimensions

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            rows.append(np.random.default_rng(seed).standard_normal(self.dimensions))
        return normalize_rows(np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dimensions))

    async def aclose(self) -> None:
        pass


class CountingEmbedder:
    """Wraps a real embedder and counts the texts that reach it (cache tests)."""

    def __init__(self, inner: Embedder):
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self.texts: list[str] = []

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return await self.inner.embed_many(texts)

    async def aclose(self) -> None:
        """The session owns the inner model."""
