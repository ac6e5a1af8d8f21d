"""One real local embedding model for every gateway a test session starts.

Gateways under test run on their own event loops (server threads), so the shared model is
wrapped per gateway: each wrapper runs inference on the model's single worker thread
without touching the model's loop-bound semaphore.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings.local import LocalEmbedder


class SharedLocalModel:
    """Loads all-MiniLM-L6-v2 once (first use), on a private event loop."""

    def __init__(self) -> None:
        self._model: LocalEmbedder | None = None

    def get(self) -> LocalEmbedder:
        if self._model is None:
            # a private loop in a private thread: callers may already run a loop
            with ThreadPoolExecutor(max_workers=1) as pool:
                self._model = pool.submit(asyncio.run, LocalEmbedder.load(EmbeddingConfig())).result()
        return self._model

    def for_gateway(self) -> LoopLocalEmbedder:
        return LoopLocalEmbedder(self.get())


class LoopLocalEmbedder:
    """The :class:`Embedder` protocol over a shared :class:`LocalEmbedder`."""

    def __init__(self, model: LocalEmbedder) -> None:
        self._model = model
        self.model = model.model
        self.dimensions = model.dimensions
        self.calls = 0

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        self.calls += 1
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._model._executor, self._model._encode, list(texts))

    async def aclose(self) -> None:
        """The shared model outlives each gateway."""
