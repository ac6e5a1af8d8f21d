"""``python -m bench locomo PATH --api``: LoCoMo evidence recall through the memory REST
API, both ways a developer feeds it (issue 11, item 6).

A real gateway is started in-process on loopback (memory only: no upstream is called)
with the ``memorize`` plugin in verbatim mode storing both speakers' turns. Each
conversation gets its own key (tenant) per way:

- ``turns``: every turn stored alone with ``POST /v1/memories`` (``text`` =
  ``"Speaker: text"``, an image caption appended as ``[image: ...]``, ``occurred_at`` =
  the session date, ``metadata.dia_id``), the way the issue's 58.0 baseline was measured;
- ``ingest``: each session posted as one conversation chunk (``POST /v1/memories`` with
  ``messages``: speaker A as ``user``, B as ``assistant``, ``name`` = the speaker,
  ``occurred_at`` = the session date, ``metadata.dia_id``), memorized by the same code as
  chat turns (:mod:`gateway.memorization.ingest`).

Then every question with evidence is asked with ``POST /v1/memories/search`` (top_k = the
largest k) and the hits map back to dia ids through ``metadata.dia_id`` (turns) or
``metadata.source_messages`` (ingest). Malformed evidence ids are dropped (counted),
questions without evidence skipped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench.backends import resolve_backends
from bench.locomo.chat import turn_line
from bench.locomo.dataset import CATEGORIES, Conversation, load_locomo
from bench.locomo.metrics import RecallTable
from tests.support.loopback import LoopbackServer

FRIEND = "locomo"
WAYS = ("turns", "ingest")


def turn_bodies(conversation: Conversation) -> list[dict[str, Any]]:
    """``POST /v1/memories`` bodies, one per turn with text."""
    return [
        {"scope": "event", "type": "episodic", "text": turn_line(t), "occurred_at": t.at.isoformat(),
         "source": "import", "metadata": {"dia_id": t.dia_id}}
        for t in conversation.turns if t.text or t.image_caption
    ]


def chunk_bodies(conversation: Conversation) -> list[dict[str, Any]]:
    """``POST /v1/memories`` conversation chunks, one per session."""
    first = conversation.speakers[0]
    chunks = []
    for session in conversation.sessions():
        messages = [
            {"role": "user" if t.speaker == first else "assistant", "name": t.speaker,
             "content": t.text + (f" [image: {t.image_caption}]" if t.image_caption else ""),
             "occurred_at": t.at.isoformat(), "metadata": {"dia_id": t.dia_id}}
            for t in session if t.text or t.image_caption
        ]
        if messages:
            chunks.append({"session_id": f"session-{session[0].session}", "messages": messages})
    return chunks


def dropped_evidence(conversations: list[Conversation]) -> tuple[int, int, list[str]]:
    """Evidence turns verbatim mode does not store (the default formation), counted on the
    ``ingest`` way's chunks with the product's own planner
    (:func:`gateway.memorization.verbatim.verbatim_plan`, both roles, the defaults):
    ``(dropped, evidence turns, dropped texts)``. A turn kept inside another memory (a
    confirmation stored with its question) counts as kept."""
    from gateway.memorization.config import MemorizeConfig
    from gateway.memorization.ingest import NewConversation, conversation_job
    from gateway.memorization.verbatim import verbatim_plan

    now = datetime.now(UTC)
    dropped: list[str] = []
    total = 0
    for c in conversations:
        evidence = {d for q in c.questions for d in q.evidence}
        texts = {t.dia_id: t.text for t in c.turns}
        kept: set[str] = set()
        for chunk in chunk_bodies(c):
            job = conversation_job(NewConversation.model_validate(chunk), user_id="u", friend_id=FRIEND, epoch=0,
                                   now=now, max_chars=32_000)
            plan = verbatim_plan(job, [t.text for t in job.turns], ("user", "assistant"),
                                 skip_small_talk=True, profile=True,
                                 formation=MemorizeConfig(verbatim_roles=("user", "assistant")).formation)
            kept.update(d for op in plan.ops if op.memory for d in dia_ids({"metadata": op.memory.metadata}))
        present = evidence & set(texts)
        total += len(present)
        dropped += [f"{d}: {texts[d]!r}" for d in sorted(present - kept)]
    return len(dropped), total, dropped


def dia_ids(record: dict[str, Any]) -> list[str]:
    """The dia ids a memory came from."""
    meta = record.get("metadata") or {}
    if "dia_id" in meta:
        return [meta["dia_id"]]
    return [m["dia_id"] for m in meta.get("source_messages", []) if isinstance(m, dict) and "dia_id" in m]


def gateway_config(keys: dict[tuple[str, str], str], redis_url: str, embedder: str, backend: str = "auto") -> Any:
    """The memory-only gateway of the API benchmarks: one key per ``(way, sample id)``,
    fresh key prefixes, ``memorize`` in verbatim mode storing both speakers' turns (no
    in-serve worker: conversation ingest memorizes inline)."""
    from gateway.config import parse_config

    return parse_config({
        "server": {"host": "127.0.0.1", "port": 0},
        "upstream": {"base_url": "http://127.0.0.1:9/v1", "api_key": "unused"},
        "clients": [{"key": key, "user_id": f"locomo-{way}-{sample}", "friend_id": FRIEND}
                    for (way, sample), key in keys.items()],
        "memory": {"redis_url": redis_url, "key_prefix": "la" + uuid.uuid4().hex[:8],
                   "embedding": {"provider": embedder}, "backend": backend},
        "plugins": [{"name": "memorize", "config": {
            "mode": "verbatim", "verbatim_roles": ["user", "assistant"], "worker": {"in_serve": 0},
            "queue": {"key_prefix": "lq" + uuid.uuid4().hex[:8]}}}],
    })


async def measure(client: httpx.AsyncClient, way: str, conversation: Conversation, ks: tuple[int, ...],
                  table: RecallTable) -> tuple[float, float, int]:
    """Store one conversation one way and ask its questions; (store s, query s, questions)."""
    started = time.perf_counter()
    bodies = turn_bodies(conversation) if way == "turns" else chunk_bodies(conversation)
    for body in bodies:
        response = await client.post("/v1/memories", json=body)
        response.raise_for_status()
    stored = time.perf_counter() - started
    started, asked = time.perf_counter(), 0
    for q in conversation.questions:
        if not q.evidence:
            continue
        response = await client.post("/v1/memories/search", json={"query": q.question, "top_k": max(ks)})
        response.raise_for_status()
        ranked = [d for hit in response.json()["data"] for d in dia_ids(hit["record"])]
        table.add(CATEGORIES.get(q.category, str(q.category)), q.evidence, ranked, conversation.sample_id)
        asked += 1
    return stored, time.perf_counter() - started, asked


async def run_async(path: str, ks: tuple[int, ...], redis_url: str | None, embedder: str,
                    backend: str = "auto") -> list[dict[str, Any]]:
    from gateway.app import create_app
    from plugins import builtin_plugins

    conversations = load_locomo(path)
    server = None
    if redis_url is None:
        from gateway.runtime.redis_server import EmbeddedRedis

        server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="memgate-locomo-api-")), appendonly=False)
        redis_url = await asyncio.to_thread(server.start)
    keys = {(way, c.sample_id): f"sk-locomo-{uuid.uuid4().hex}" for way in WAYS for c in conversations}
    config = gateway_config(keys, redis_url, embedder, backend)
    gateway = LoopbackServer(create_app(config, registry=builtin_plugins())).start()
    results = []
    try:
        for way in WAYS:
            table = RecallTable(ks)
            store_s = query_s = 0.0
            questions = 0
            for c in conversations:
                headers = {"authorization": f"Bearer {keys[(way, c.sample_id)]}"}
                async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=600) as client:
                    s, q, n = await measure(client, way, c, ks, table)
                store_s, query_s, questions = store_s + s, query_s + q, questions + n
            results.append({"way": way, "backend": backend, "questions": questions, "rows": table.rows(), "conversations": table.group_rows(), "table": table.format(),
                            "store_seconds": round(store_s, 2), "query_ms_mean": round(1000 * query_s / max(questions, 1), 2),
                            "malformed_evidence_ids": sum(q.malformed for c in conversations for q in c.questions)})
    finally:
        gateway.stop()
        if server is not None:
            await asyncio.to_thread(server.stop)
    return results


def run_locomo_via_api(path: str, ks: tuple[int, ...], json_out: str | None = None, redis_url: str | None = None,
                       embedder: str = "auto", backend: str = "auto") -> int:
    """Print one table per way and backend (``--backend``, :mod:`bench.backends`), and
    write them as JSON."""
    logging.getLogger("httpx").setLevel(logging.WARNING)
    n, total, texts = dropped_evidence(load_locomo(path))
    print(f"evidence turns verbatim mode does not store (small talk): {n} of {total}")
    for t in texts[:20]:
        print("  " + t)
    results = [r for b in resolve_backends(redis_url, backend) for r in asyncio.run(run_async(path, ks, redis_url, embedder, b))]
    for r in results:
        print(f"\n== {r['way']} via POST /v1/memories ({r['backend']} backend): {r['questions']} questions "
              f"({r['malformed_evidence_ids']} malformed evidence ids dropped); stored in {r['store_seconds']} s, "
              f"search {r['query_ms_mean']} ms mean")
        print(r["table"])
    if json_out:
        Path(json_out).write_text(json.dumps(results, indent=2))
    return 0
