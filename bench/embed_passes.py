"""How an ONNX embedder cuts a call into forward passes, and what a text costs:
``python -m bench.embed_passes [--reps 3] [--calls 10]``.

For each part of the script-routed embedder (int8 MiniLM for Latin texts, int8 e5 for CJK
ones; one inference thread, in the calling thread) and three kinds of calls of 32 texts:

- ``views``: memorization views made from ``bench/assistant/data``'s read splits (dev, heldout,
  heldout2 .. heldout5, updates, heldout11, heldout13, asks: the files of
  :func:`bench.assistant.dataset.read_paths`, picked by name, no blind split opened; per user turn, as
  :func:`gateway.memory.records.embedded_views` and the near-duplicate search embed them:
  the end of the message before it (300 characters) and the turn; the turn and the reply's
  start (100 characters); the turn), shuffled with a fixed seed;
- ``bench``: ``python -m bench memorize``'s views (16 jobs: 16 messages, 16 message +
  reply start);
- ``queries``: 32 recall-like questions (~20 tokens; e5's ``query: `` mark on the CJK ones),

the process CPU per text (ms) of ``encode`` under each pass rule: ``none`` (at most
``batch_size`` texts, longest <= 2 x shortest + 8), ``tokens384`` (also texts x longest <=
384) and ``attention`` (also texts x longest**2 <= :data:`~gateway.memory.embeddings.base.PASS_ATTENTION`,
the embedders' rule). Rules alternate within each repetition; the median is printed. The
vectors differ slightly between rules (dynamic int8 quantization scales a pass's
activations together), not the texts embedded.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import click

import gateway.memory.embeddings.e5_onnx as e5_onnx
import gateway.memory.embeddings.onnx_local as onnx_local
from bench.assistant.dataset import read_paths
from gateway.memory.embeddings.base import length_passes

Rule = Callable[[Sequence[int], int], list[list[int]]]


def _linear(cap: int) -> Rule:
    def passes(lengths: Sequence[int], batch_size: int, max_attention: int = 0) -> list[list[int]]:
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        out: list[list[int]] = []
        start = 0
        while start < len(order):
            shortest, end = lengths[order[start]], start + 1
            while end < len(order) and end - start < batch_size and lengths[order[end]] <= 2 * shortest + 8 \
                    and (end - start + 1) * lengths[order[end]] <= cap:
                end += 1
            out.append(order[start:end])
            start = end
        return out
    return passes


RULES: dict[str, Rule] = {
    "none": lambda lengths, batch_size: length_passes(lengths, batch_size, max_attention=10**12),
    "tokens384": _linear(384),
    "attention": length_passes,
}


def views(lang: str) -> list[str]:
    out: list[str] = []
    for path in read_paths(lang=lang):
        before = ""
        for session in json.loads(Path(path).read_text())["sessions"]:
            for turn in session["turns"]:
                said, reply = turn["user"], turn["assistant"]
                out += [f"{before[-300:].strip()}\n{said}" if before else said, f"{said}\n{reply[:100].strip()}", said]
                before = reply
    return out


async def run(reps: int, calls: int) -> None:
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import load_provider
    from gateway.memory.embeddings.script_routed import ScriptRoutedEmbedder

    embedder = await load_provider(EmbeddingConfig(provider="script"))
    assert isinstance(embedder, ScriptRoutedEmbedder)
    reply = "\n" + ("Sure, noted. " * 10)[:100].strip()
    parts = (("latin", "en", "I walked my dog Rex to lake number {i} and we met Anna.",
              "What did I tell you about my plans for the weekend trip with {i} friends and family?"),
             ("cjk", "zh", "我每周{i}去湖边遛狗，在那儿碰到了老同学。", "query: 我跟你说过周末{i}有什么打算吗？"))
    try:
        for (name, lang, message, question), part in zip(parts, embedder.parts, strict=True):
            runtime = cast(Any, part)._runtime  # the ONNX part's session and tokenizer
            real = views(lang)
            random.Random(1).shuffle(real)
            sets = {
                "views": [real[at:at + 32] for at in range(0, 32 * calls, 32)],
                "bench": [[message.replace("{i}", str(j)) + tail for tail in ("", reply) for j in range(k, k + 16)]
                          for k in range(0, 16 * calls, 16)],
                "queries": [[question.replace("{i}", str(j)) for j in range(k, k + 32)] for k in range(0, 32 * calls, 32)],
            }
            runtime.encode(sets["views"][0])
            for label, texts in sets.items():
                cpu: dict[str, list[float]] = {rule: [] for rule in RULES}
                for _ in range(reps):
                    for rule, cut in RULES.items():
                        onnx_local.length_passes = e5_onnx.length_passes = cut  # type: ignore[assignment]
                        started = time.process_time()
                        for call in texts:
                            runtime.encode(call)
                        cpu[rule].append((time.process_time() - started) / sum(map(len, texts)) * 1000)
                print(f"{name:5} {label:7} " + "  ".join(f"{rule} {statistics.median(v):.2f}" for rule, v in cpu.items())
                      + " ms CPU per text", flush=True)
    finally:
        onnx_local.length_passes = e5_onnx.length_passes = length_passes
        await embedder.aclose()


@click.command()
@click.option("--reps", type=int, default=3, show_default=True, help="Repetitions (rules alternate in each).")
@click.option("--calls", type=int, default=10, show_default=True, help="Calls of 32 texts per set.")
def main(reps: int, calls: int) -> None:
    """Per-text CPU of the ONNX embedders under each pass rule (module docstring)."""
    asyncio.run(run(reps, calls))


if __name__ == "__main__":
    main()
