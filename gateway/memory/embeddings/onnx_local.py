"""ONNX Runtime embedder (``memory.embedding.provider: onnx``): the local
sentence-transformers weights exported to ONNX and int8-quantized (dynamic, per channel,
weight matrices only; :mod:`gateway.memory.embeddings.onnx_export`), run by onnxruntime
with the ``tokenizers`` package and the model's own ``tokenizer.json``. No torch at run
time: torch is imported only by the one-time export when the derived model is not cached
yet (:mod:`gateway.memory.embeddings.derived`).

Same thread model as the ``local`` provider: one dedicated worker thread loads the
session and runs every inference, ``intra_op_num_threads = memory.embedding.threads``
(1 by default), at most ``queue_size`` jobs wait for it.

Vectors: masked mean pooling of the last hidden state, then L2 normalization, as the
sentence-transformers pipeline (Transformer -> Pooling(mean) -> Normalize); texts are
truncated to the model's ``max_seq_length`` (256 tokens). Cosine to the float model:
mean 0.994 over LoCoMo questions, lowest ~0.965 on two-word greetings (README).

Model identity recorded with the store: ``<model>+onnx-int8-pc-v1``, distinct from the
sentence-transformers model's, so an existing store is never silently mixed (see README,
"Embeddings").
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings.base import ThreadedEmbedder, length_passes, normalize_rows, texts_per_pass
from gateway.memory.embeddings.derived import cache_root, derived_dir
from gateway.memory.embeddings.local import model_path
from gateway.memory.embeddings.onnx_export import MARKER, RECIPE

__all__ = ['OnnxEmbedder', 'build_or_find', 'model_identity']


def model_identity(model_name: str) -> str:
    """What the store records for the onnx int8 model derived from ``model_name``."""
    return f"{model_name}+{RECIPE}"


def build_or_find(model_name: str, cache: Path | None) -> Path:
    """Directory of the exported int8 model for ``model_name`` (exported on first use).

    Raises:
        ValueError: unknown model name (see :func:`~gateway.memory.embeddings.local.model_path`).
    """
    import gateway.memory.embeddings.onnx_export as onnx_export

    return derived_dir(model_path(model_name), RECIPE, cache_root(cache), onnx_export.export, MARKER)


class _Runtime:
    """The onnxruntime session and tokenizer (used only from the worker thread)."""

    def __init__(self, directory: Path, threads: int, batch_size: int):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        meta = json.loads((directory / "embedder.json").read_text())
        self.dimensions = int(meta["dimensions"])
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(int(meta["max_seq_length"]))
        self.tokenizer.no_padding()  # padded per pass in :meth:`encode`
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.session = ort.InferenceSession(
            str(directory / MARKER), options, providers=["CPUExecutionProvider"]
        )
        self.batch_size = batch_size

    def _pass(self, encodings: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return self.session.run(None, feeds)[0]

    def encode(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dims)`` unit rows, linear in the number of tokens.

        One forward pass pads every text to the longest, so texts are sorted by token
        count and cut into passes of at most ``batch_size`` texts (the provider runs
        :data:`~gateway.memory.embeddings.base.TEXTS_PER_PASS`, one; benchmarks more) whose longest is at most
        twice the shortest plus 8 tokens (a short recall query batched with long
        memorization texts is not padded to 256 tokens) and whose size x longest² stays
        within :data:`~gateway.memory.embeddings.base.PASS_ATTENTION`
        (:func:`~gateway.memory.embeddings.base.length_passes`).
        """
        encodings = self.tokenizer.encode_batch(texts)
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for chunk in length_passes([len(e.ids) for e in encodings], self.batch_size):
            out[chunk] = self._pass([encodings[i] for i in chunk])
        return normalize_rows(out)


def _load(model_name: str, cache: Path | None, threads: int, batch_size: int) -> _Runtime:
    return _Runtime(build_or_find(model_name, cache), threads, batch_size)


class OnnxEmbedder(ThreadedEmbedder):
    """See module docstring. Build with :meth:`load`; close with :meth:`aclose`."""

    def __init__(self, model_name: str, runtime: _Runtime, executor: ThreadPoolExecutor, config: EmbeddingConfig):
        super().__init__(model_identity(model_name), runtime.dimensions, executor, config, config.queue_size)
        self._runtime = runtime

    @classmethod
    async def load(cls, config: EmbeddingConfig) -> OnnxEmbedder:
        """Find (or export, ~5 s with torch, first start only) and load the model in the
        worker thread, off the event loop.

        Raises:
            ValueError: unknown model name.
            ImportError: onnxruntime missing, or torch missing when an export is needed.
        """
        load = functools.partial(_load, config.model_name, config.model_cache_dir, config.threads, texts_per_pass(config))
        return await cls.started(load, lambda runtime, executor: cls(config.model_name, runtime, executor, config))

    def encode_sync(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors, computed in the calling thread (benchmarks, tests)."""
        return self._runtime.encode(list(texts))
