"""``python -m bench locomo-sweep PATH``: LoCoMo evidence recall through the memory API for
several ranking settings over one stored copy (issue 11, item 2 and 4: measured defaults).

Stores the conversations both ways once, as ``--api`` does (:mod:`bench.locomo.api`), then
for each variant replaces the running store's memory config (``fusion``, ``hybrid_alpha``,
``candidate_factor``, ``memory.ranking.*``) and asks every question again with
``POST /v1/memories/search``. Settings that change what is stored (tokenizer, what a
memory's text is) need a run of ``--api`` each instead.
"""

from __future__ import annotations

import asyncio
import json
import logging
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import httpx

from bench.locomo.api import WAYS, chunk_bodies, dia_ids, gateway_config, turn_bodies
from bench.locomo.dataset import CATEGORIES, load_locomo
from bench.locomo.metrics import RecallTable
from tests.support.loopback import LoopbackServer

#: name -> overrides of the memory config (``ranking`` entries go into memory.ranking).
#: "none" turns every added signal off (the fused ranking alone, as before issue 11 item 2).
OFF = {"recency_weight": 0.0, "importance_weight": 0.0, "emotion_weight": 0.0, "period_weight": 0.0,
       "dated_weight": 0.0, "neighbour_weight": 0.0, "session_weight": 0.0, "speaker_weight": 0.0,
       "diversity_weight": 0.0}
VARIANTS: dict[str, dict[str, Any]] = {
    "none": {"ranking": OFF},
    "defaults": {},
    "recency 0.02": {"ranking": {**OFF, "recency_weight": 0.02}},
    "recency 0.1": {"ranking": {**OFF, "recency_weight": 0.1}},
    "emotion 0.03": {"ranking": {**OFF, "emotion_weight": 0.03}},
    "emotion 0.1": {"ranking": {**OFF, "emotion_weight": 0.1}},
    "period 0.3": {"ranking": {**OFF, "period_weight": 0.3}},
    "dated 0.05": {"ranking": {**OFF, "dated_weight": 0.05}},
    "dated 0.15": {"ranking": {**OFF, "dated_weight": 0.15}},
    "neighbour 0.1": {"ranking": {**OFF, "neighbour_weight": 0.1}},
    "neighbour 0.3": {"ranking": {**OFF, "neighbour_weight": 0.3}},
    "neighbour 0.3 w2": {"ranking": {**OFF, "neighbour_weight": 0.3, "neighbour_window": 2}},
    "session 0.1": {"ranking": {**OFF, "session_weight": 0.1}},
    "session 0.3": {"ranking": {**OFF, "session_weight": 0.3}},
    "speaker 0.05": {"ranking": {**OFF, "speaker_weight": 0.05}},
    "speaker 0.15": {"ranking": {**OFF, "speaker_weight": 0.15}},
    "diversity 0.03": {"ranking": {**OFF, "diversity_weight": 0.03}},
    "diversity 0.1": {"ranking": {**OFF, "diversity_weight": 0.1}},
    "alpha 0.2": {"hybrid_alpha": 0.2, "ranking": OFF},
    "alpha 0.4": {"hybrid_alpha": 0.4, "ranking": OFF},
    "alpha 0.1": {"hybrid_alpha": 0.1, "ranking": OFF},
    "neighbour 0.5 w2": {"ranking": {**OFF, "neighbour_weight": 0.5, "neighbour_window": 2}},
    "combo": {"hybrid_alpha": 0.2, "ranking": {**OFF, "period_weight": 0.3, "dated_weight": 0.15,
                                                "neighbour_weight": 0.3, "neighbour_window": 2}},
    "rrf k 20": {"rrf_k": 20},
    "rrf k 120": {"rrf_k": 120},
    "a0.05": {"hybrid_alpha": 0.05, "ranking": OFF},
    "a0.1 combo": {"hybrid_alpha": 0.1, "ranking": {**OFF, "period_weight": 0.3, "dated_weight": 0.15,
                                                     "neighbour_weight": 0.3, "neighbour_window": 2}},
    "a0.1 combo x8": {"hybrid_alpha": 0.1, "candidate_factor": 8, "ranking": {
        **OFF, "period_weight": 0.3, "dated_weight": 0.15, "neighbour_weight": 0.3, "neighbour_window": 2}},
    "a0.1 combo n0.5": {"hybrid_alpha": 0.1, "ranking": {**OFF, "period_weight": 0.3, "dated_weight": 0.15,
                                                          "neighbour_weight": 0.5, "neighbour_window": 2}},
    "a0.1 combo d0.3": {"hybrid_alpha": 0.1, "ranking": {**OFF, "period_weight": 0.3, "dated_weight": 0.3,
                                                          "neighbour_weight": 0.3, "neighbour_window": 2}},
    "a0.1 combo spk": {"hybrid_alpha": 0.1, "ranking": {**OFF, "period_weight": 0.3, "dated_weight": 0.15,
                                                         "neighbour_weight": 0.3, "neighbour_window": 2,
                                                         "speaker_weight": 0.05}},
    "a0.1 combo div": {"hybrid_alpha": 0.1, "ranking": {**OFF, "period_weight": 0.3, "dated_weight": 0.15,
                                                         "neighbour_weight": 0.3, "neighbour_window": 2,
                                                         "diversity_weight": 0.03}},
    "combo+speaker": {"hybrid_alpha": 0.2, "ranking": {**OFF, "period_weight": 0.3, "dated_weight": 0.15,
                                                        "neighbour_weight": 0.3, "neighbour_window": 2,
                                                        "speaker_weight": 0.1}},
    "combo+diversity": {"hybrid_alpha": 0.2, "ranking": {**OFF, "period_weight": 0.3, "dated_weight": 0.15,
                                                          "neighbour_weight": 0.3, "neighbour_window": 2,
                                                          "diversity_weight": 0.05}},
    "candidates x8": {"candidate_factor": 8, "ranking": OFF},
}
#: the variants above were measured when RRF at alpha 0.1 was the default: they keep it
for _name, _overrides in VARIANTS.items():
    if _name != "defaults":
        _overrides.setdefault("fusion", "rrf")
        _overrides.setdefault("hybrid_alpha", 0.1)
VARIANTS |= {
    # memory.fusion (issue 11 item 2): convex combination of normalised scores vs RRF,
    # with the memory.ranking defaults on top ("none": every added signal off)
    "rrf 0.1": {"fusion": "rrf", "hybrid_alpha": 0.1},
    "convex 0.2": {"fusion": "convex", "hybrid_alpha": 0.2},
    "convex 0.3": {"fusion": "convex", "hybrid_alpha": 0.3},
    "convex 0.4": {"fusion": "convex", "hybrid_alpha": 0.4},
    "convex 0.5": {"fusion": "convex", "hybrid_alpha": 0.5},
    "convex 0.6": {"fusion": "convex", "hybrid_alpha": 0.6},
    "convex 0.7": {"fusion": "convex", "hybrid_alpha": 0.7},
    "convex 0.3 none": {"fusion": "convex", "hybrid_alpha": 0.3, "ranking": OFF},
    "convex 0.5 none": {"fusion": "convex", "hybrid_alpha": 0.5, "ranking": OFF},
    "rrf 0.1 none": {"fusion": "rrf", "hybrid_alpha": 0.1, "ranking": OFF},
}
#: the memory.ranking weights again on the convex fusion (its scores spread differently)
_DEFAULT_SIGNALS = {"period_weight": 0.3, "dated_weight": 0.15, "neighbour_weight": 0.3, "neighbour_window": 2,
                    "recency_weight": 0.01, "importance_weight": 0.05, "emotion_weight": 0.03}
for _alpha in (0.3, 0.4):
    for _signal, _values in {"neighbour_weight": (0.1, 0.2, 0.5), "period_weight": (0.15, 0.5),
                             "dated_weight": (0.05, 0.3), "neighbour_window": (1, 3),
                             "session_weight": (0.1,), "speaker_weight": (0.05,)}.items():
        for _value in _values:
            VARIANTS[f"convex {_alpha} {_signal.split('_')[0]} {_value}"] = {
                "fusion": "convex", "hybrid_alpha": _alpha, "ranking": {**_DEFAULT_SIGNALS, _signal: _value}}
    for _neighbour in (0.5, 0.7):
        for _session in (0.0, 0.1, 0.2):
            VARIANTS[f"convex {_alpha} n{_neighbour} s{_session}"] = {
                "fusion": "convex", "hybrid_alpha": _alpha,
                "ranking": {**_DEFAULT_SIGNALS, "neighbour_weight": _neighbour, "session_weight": _session}}
#: one weight at a time over the current defaults (leave-one-conversation-out checks: the
#: per-conversation lines show whether a gain holds on both dev conversations)
for _signal, _values in {"hybrid_alpha": (0.2, 0.3, 0.4, 0.5), "neighbour_weight": (0.0, 0.3, 0.5, 0.7),
                         "session_weight": (0.0, 0.1, 0.15, 0.2, 0.3)}.items():
    for _value in _values:
        VARIANTS[f"now {_signal.split('_')[0]} {_value}"] = (
            {_signal: _value} if _signal == "hybrid_alpha" else {"ranking": {_signal: _value}})


def apply(base: Any, overrides: dict[str, Any]) -> Any:
    """``base`` (a MemoryConfig) with ``overrides``; ``ranking`` entries update memory.ranking."""
    update = {k: v for k, v in overrides.items() if k != "ranking"}
    if "ranking" in overrides:
        update["ranking"] = base.ranking.model_copy(update=overrides["ranking"])
    return base.model_copy(update=update)


async def ask(client: httpx.AsyncClient, conversation: Any, ks: tuple[int, ...], table: RecallTable) -> None:
    for q in conversation.questions:
        if not q.evidence:
            continue
        response = await client.post("/v1/memories/search", json={"query": q.question, "top_k": max(ks)})
        response.raise_for_status()
        ranked = [d for hit in response.json()["data"] for d in dia_ids(hit["record"])]
        table.add(CATEGORIES.get(q.category, str(q.category)), q.evidence, ranked, conversation.sample_id)


async def run_async(path: str, ks: tuple[int, ...], names: list[str], embedder: str,
                    variants: dict[str, dict[str, Any]] | None = None,
                    on_variant: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Store both ways once, then ask every question per variant name (``variants``:
    name -> memory config overrides, default :data:`VARIANTS`; ``on_variant(name)`` is
    called before each one's questions, :mod:`bench.locomo.probes` sets its probe there)."""
    variants = VARIANTS if variants is None else variants
    from gateway.app import create_app
    from gateway.runtime.redis_server import EmbeddedRedis
    from plugins import builtin_plugins

    conversations = load_locomo(path)
    server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="memgate-locomo-sweep-")), appendonly=False)
    redis_url = await asyncio.to_thread(server.start)
    keys = {(way, c.sample_id): f"sk-locomo-{uuid.uuid4().hex}" for way in WAYS for c in conversations}
    config = gateway_config(keys, redis_url, embedder)
    app = create_app(config, registry=builtin_plugins())
    gateway = LoopbackServer(app).start()
    results = []
    try:
        clients = {k: httpx.AsyncClient(base_url=gateway.url, headers={"authorization": f"Bearer {v}"}, timeout=600)
                   for k, v in keys.items()}
        for (way, sample), client in clients.items():
            conversation = next(c for c in conversations if c.sample_id == sample)
            for body in (turn_bodies(conversation) if way == "turns" else chunk_bodies(conversation)):
                (await client.post("/v1/memories", json=body)).raise_for_status()
        store = app.state.gateway.store
        base = store._config
        for name in names:
            store._config = apply(base, variants[name])
            if on_variant is not None:
                on_variant(name)
            row: dict[str, Any] = {"variant": name}
            for way in WAYS:
                table = RecallTable(ks)
                for c in conversations:
                    await ask(clients[(way, c.sample_id)], c, ks, table)
                rows = {r["category"]: r for r in table.rows()}
                row[way] = {cat: {k: round(100 * v, 1) for k, v in r.items() if k.startswith("recall@")}
                            for cat, r in rows.items()}
                row[way]["conversations"] = {g["group"]: {k: None if v is None else round(100 * v, 1)
                                                          for k, v in g.items() if "recall@" in k}
                                             for g in table.group_rows()}
            results.append(row)
            t, i = row["turns"], row["ingest"]
            print(f"{name:<22} turns R@5/10/25 {t['all']['recall@5']:5.1f} {t['all']['recall@10']:5.1f} "
                  f"{t['all']['recall@25']:5.1f} mh {t['multi-hop']['recall@10']:5.1f} | ingest "
                  f"{i['all']['recall@5']:5.1f} {i['all']['recall@10']:5.1f} {i['all']['recall@25']:5.1f} "
                  f"mh {i['multi-hop']['recall@10']:5.1f} tmp {i['temporal']['recall@10']:5.1f}", flush=True)
            for way in WAYS:
                print(f"{'':<22}   {way:<6} R@10 (multi-hop) per conversation: " + "  ".join(
                    f"{g} {v['recall@10']:5.1f} ({v['multi-hop recall@10'] or 0.0:5.1f})"
                    for g, v in row[way]["conversations"].items()), flush=True)
        for client in clients.values():
            await client.aclose()
    finally:
        gateway.stop()
        await asyncio.to_thread(server.stop)
    return results


@click.command("locomo-sweep")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--variant", "variants", multiple=True, help=f"Variant(s) (repeatable; default all): {', '.join(VARIANTS)}.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None, help="Write results as JSON.")
@click.option("--embedder", type=click.Choice(["local", "onnx", "model2vec"]), default="local", show_default=True)
def command(path: str, variants: tuple[str, ...], json_out: str | None, embedder: str) -> None:
    """LoCoMo evidence recall@5/10/25 through the memory API for each ranking variant."""
    logging.getLogger("httpx").setLevel(logging.WARNING)
    names = list(variants) or list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise click.BadParameter(f"unknown variant(s) {unknown}", param_hint="'--variant'")
    results = asyncio.run(run_async(path, (5, 10, 25), names, embedder))
    if json_out:
        Path(json_out).write_text(json.dumps(results, indent=2))
