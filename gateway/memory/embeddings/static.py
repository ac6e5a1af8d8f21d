"""Static embedder (``memory.embedding.provider: model2vec``): a token-vector table
distilled from the local sentence-transformers weights, run by ``model2vec.StaticModel``
(numpy + tokenizers; no torch, no attention): a text's vector is the normalized mean of
its tokens' vectors. ~100x faster than the transformer, English only (the vocabulary is
the model's uncased WordPiece; word order and context are lost).

A text whose every token is ``[UNK]`` (``[UNK]``'s row is zero, as every special
token's) has no vector in this model: Chinese messages made only of characters outside
the 244 the vocabulary holds (35 of the 544 in ``bench/assistant``'s data) and emoji-only
messages. The store refuses a zero vector, so such a text gets a unit vector drawn from a
generator seeded by the BLAKE2b digest of its text (:func:`unknown_text_vector`): the same
text always the same vector, any two texts nearly orthogonal (|cosine| ~ 1/sqrt(384) ~
0.05, under every relevance floor), so the vector ranking ignores it and the keyword
ranking still finds it; the memory is stored and searched, not refused.

Distillation (first start, needs torch; cached like the onnx model, see
:mod:`gateway.memory.embeddings.derived`) follows Model2Vec's ``distill_from_model``
(model2vec 0.10, ``distill/distillation.py`` and ``distill/inference.py``), written here
because its ``distill`` extra pins ``transformers<5.4``:

1. every vocabulary token except the bracketed specials (``[PAD]``, ``[unused0]``...) is
   encoded alone as ``[CLS] token [SEP]`` by the transformer, mean-pooled over the three
   positions (batches of 256);
2. PCA to the same 384 dimensions (centre + rotate, no reduction; Model2Vec's
   ``_pca_fit_transform`` via the covariance eigendecomposition);
3. each row weighted by SIF ``1e-4 / (1e-4 + p(rank))`` with Zipf probabilities from the
   token's rank in the vocabulary (Model2Vec's ``compute_weights``); specials get zero rows.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings.base import ThreadedEmbedder, normalize_rows
from gateway.memory.embeddings.derived import cache_root, derived_dir
from gateway.memory.embeddings.local import model_path

__all__ = ['MARKER', 'RECIPE', 'SIF_COEFFICIENT', 'StaticEmbedder', 'build_or_find', 'distill', 'unknown_text_vector']

#: Bumped whenever the steps above change (cache directory and model identity).
RECIPE = "model2vec-384-v1"
MARKER = "vectors.npy"
SIF_COEFFICIENT = 1e-4
_SPECIAL = re.compile(r"^\[[^\]]*\]$")


def distill(model_dir: Path, out_dir: Path) -> None:
    """Write ``vectors.npy`` (float32, ``(vocab, 384)``) and ``tokenizer.json``.

    Raises:
        ImportError: torch / transformers missing (needed once, here).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    vocab = tokenizer.get_vocab()
    size = max(vocab.values()) + 1
    kept = sorted(i for token, i in vocab.items() if not _SPECIAL.match(token))
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    pooled = np.zeros((len(kept), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(kept), 256):
            ids = torch.tensor([[cls_id, i, sep_id] for i in kept[start:start + 256]], dtype=torch.long)
            hidden = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                           token_type_ids=torch.zeros_like(ids)).last_hidden_state
            pooled[start:start + len(ids)] = hidden.mean(1).float().numpy()
    centred = pooled - pooled.mean(axis=0)
    _eigvals, eigvecs = np.linalg.eigh((centred.T @ centred) / (len(centred) - 1))
    components = eigvecs[:, ::-1]
    scores = centred @ components
    signs = np.sign(scores[np.argmax(np.abs(scores), axis=0), range(scores.shape[1])])
    scores *= signs
    inv_rank = 1 / np.arange(2, len(kept) + 2)
    proba = inv_rank / inv_rank.sum()
    scores *= (SIF_COEFFICIENT / (SIF_COEFFICIENT + proba))[:, None]
    vectors = np.zeros((size, scores.shape[1]), dtype=np.float32)
    vectors[kept] = scores
    np.save(out_dir / MARKER, vectors)
    (out_dir / "tokenizer.json").write_text((model_dir / "tokenizer.json").read_text())
    (out_dir / "embedder.json").write_text(json.dumps({"recipe": RECIPE, "dimensions": int(scores.shape[1])}))


def build_or_find(model_name: str, cache: Path | None) -> Path:
    """Directory of the distilled model for ``model_name`` (distilled on first use)."""
    return derived_dir(model_path(model_name), RECIPE, cache_root(cache), distill, MARKER)


def _load(model_name: str, cache: Path | None) -> Any:
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    directory = build_or_find(model_name, cache)
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return StaticModel(vectors=np.load(directory / MARKER), tokenizer=tokenizer, normalize=True,
                       config={"model_type": "model2vec", "normalize": True, "pooling": "mean"})


class StaticEmbedder(ThreadedEmbedder):
    """See module docstring. Build with :meth:`load`; close with :meth:`aclose`.

    Encoding is ~0.1 ms per query, so it runs in one worker thread like the other local
    providers only to keep batches of long memorization texts off the event loop (no
    bound on the calls waiting for it).
    """

    def __init__(self, model_name: str, static: Any, executor: ThreadPoolExecutor, config: EmbeddingConfig):
        super().__init__(f"{model_name}+{RECIPE}", static.dim, executor, config)
        self._static = static

    @classmethod
    async def load(cls, config: EmbeddingConfig) -> StaticEmbedder:
        """Find (or distill, first start only, ~1 min on one core with torch) and load.

        Raises:
            ValueError: unknown model name.
            ImportError: model2vec missing, or torch missing when distilling is needed.
        """
        return await cls.started(functools.partial(_load, config.model_name, config.model_cache_dir),
                                 lambda static, executor: cls(config.model_name, static, executor, config))

    def encode_sync(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors, computed in the calling thread (benchmarks, tests); a text with no
        known token gets :func:`unknown_text_vector` (module docstring)."""
        texts = list(texts)
        vectors = normalize_rows(self._static.encode(texts, use_multiprocessing=False))
        for i in np.flatnonzero(~vectors.any(axis=1)):
            vectors[i] = unknown_text_vector(texts[i], vectors.shape[1])
        return vectors


def unknown_text_vector(text: str, dimensions: int) -> np.ndarray:
    """A unit float32 vector of ``dimensions`` for ``text``, drawn from a standard normal
    generator seeded by the 8-byte BLAKE2b digest of its UTF-8 bytes: deterministic across
    processes, and nearly orthogonal to any other text's (module docstring)."""
    seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
    vector = np.random.default_rng(seed).standard_normal(dimensions).astype(np.float32)
    return vector / np.linalg.norm(vector)
