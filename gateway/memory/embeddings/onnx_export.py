"""Build the ``onnx`` provider's model from local sentence-transformers weights (needs
torch, transformers, onnx and onnxruntime; run once at the first start, see
:mod:`gateway.memory.embeddings.derived`).

1. The transformer plus masked mean pooling (the model's ``1_Pooling``: mean of token
   vectors over the attention mask) is exported with ``torch.onnx.export`` (TorchScript
   exporter, opset 17, dynamic batch and sequence axes): input ``input_ids``,
   ``attention_mask``, ``token_type_ids`` (int64, ``(batch, seq)``), output ``embedding``
   (float32, ``(batch, dims)``, not normalized).
2. ``onnxruntime.quantization.quantize_dynamic``: int8 weights, per output channel,
   ``MatMul`` nodes with a constant weight only (the 36 linear layers; the token-embedding
   table, LayerNorms and the attention's activation x activation products stay float).
   Per-tensor scales lost accuracy (mean cosine to float 0.969, worst 0.83 on LoCoMo
   questions, against 0.994 / 0.965 per channel).
3. ``tokenizer.json`` and the sequence limit (``sentence_bert_config.json``
   ``max_seq_length``, 256 for all-MiniLM-L6-v2) are copied next to it.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

__all__ = ['MARKER', 'RECIPE', 'export', 'max_seq_length']

#: Bumped whenever the steps above change (part of the cache directory name).
RECIPE = "onnx-int8-pc-v1"
MARKER = "model.int8.onnx"


def max_seq_length(model_dir: Path) -> int:
    """sentence-transformers' ``max_seq_length`` (``sentence_bert_config.json``), else 256."""
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        value = json.loads(config.read_text()).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    return 256


def export(model_dir: Path, out_dir: Path) -> None:
    """Write ``model.int8.onnx``, ``tokenizer.json`` and ``embedder.json`` into ``out_dir``.

    Raises:
        ImportError: torch / transformers / onnx missing (they are needed once, here).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel

    class MeanPooled(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.ones(2, 8, dtype=torch.long)
    float_path = out_dir / "model.float.onnx"
    # the TorchScript exporter warns as it traces (torch >= 2.9: DeprecationWarning that it
    # is legacy, chosen here on purpose with dynamo=False; TracerWarning, UserWarning on
    # the traced model); a warning turned into an error (pytest's filterwarnings) must
    # not stop the first start that derives the model
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            MeanPooled(model), (sample, sample, torch.zeros_like(sample)), str(float_path),
            input_names=names, output_names=["embedding"], opset_version=17, dynamo=False,
            dynamic_axes={**{n: {0: "batch", 1: "seq"} for n in names}, "embedding": {0: "batch"}},
        )
    quantize_dynamic(
        str(float_path), str(out_dir / MARKER), per_channel=True,
        op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8,
    )
    float_path.unlink()
    shutil.copy(model_dir / "tokenizer.json", out_dir / "tokenizer.json")
    dims = int(model.config.hidden_size)
    (out_dir / "embedder.json").write_text(json.dumps({
        "recipe": RECIPE, "dimensions": dims, "max_seq_length": max_seq_length(model_dir),
        "torch": torch.__version__,
    }))
