"""``python -m bench locomo PATH --via-chat``: the whole memorization loop on LoCoMo
(issue 5, item 8).

For each conversation of a LoCoMo-format file (:func:`bench.locomo.dataset.load_locomo`)
a real gateway, started in-process on loopback, receives the dialogue session by session
through ``/v1/chat/completions``: speaker A is the user (consecutive A turns form one
user message, ``"Name: text"`` lines, an image caption appended as ``[image: ...]``), and
the upstream is the test suite's model double
(:class:`tests.support.upstream_double.UpstreamDouble` playing a
:class:`~tests.support.upstream_double.ConversationScript`), which answers each request
with B's next turns. Each session is a conversation
(``metadata.conversation_id``), the history resent every time as chat apps do. The
``memorize`` plugin runs in verbatim mode (user and assistant turns). When the queue
is drained, each question with evidence is asked in a fresh conversation with another
key of the same tenant that has ``auto_recall`` + ``hybrid_injection`` on (every hit
injected: thresholds 0, ``limit`` = max k <= 50, no tool) and memorization off. The
upstream records the prompt it received; the memories found in it, in order, map back
to dia ids through each memory's ``turn_hash`` (recomputed here from what was sent), and
evidence recall@k is reported by category (:mod:`bench.locomo.metrics`). The same
questions asked directly of the store (``store.search``) are reported alongside.

Malformed evidence ids are dropped (counted), questions without evidence skipped. Turn
times are the replay's wall clock, not the session dates (the gateway stamps messages
on arrival), so this measures retrieval, not temporal reasoning.
"""

from __future__ import annotations

import asyncio
import json
import logging
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.backends import resolve_backends
from bench.locomo.dataset import CATEGORIES, Conversation, Turn, load_locomo
from bench.locomo.metrics import RecallTable
from gateway.memorization.dedupe import hashed_turns
from tests.support.loopback import LoopbackServer
from tests.support.upstream_double import ConversationScript, UpstreamDouble

FRIEND = "locomo"


def turn_line(turn: Turn) -> str:
    caption = f" [image: {turn.image_caption}]" if turn.image_caption else ""
    return f"{turn.speaker}: {turn.text}{caption}"


def exchanges(session: list[Turn], user_speaker: str) -> tuple[list[Turn], list[tuple[list[Turn], list[Turn]]]]:
    """Leading turns of the other speaker, then ``(user turns, reply turns)`` groups."""
    leading: list[Turn] = []
    groups: list[tuple[list[Turn], list[Turn]]] = []
    for turn in session:
        if turn.speaker == user_speaker:
            if not groups or groups[-1][1]:
                groups.append(([], []))
            groups[-1][0].append(turn)
        elif groups:
            groups[-1][1].append(turn)
        else:
            leading.append(turn)
    return leading, groups


def _text(turns: list[Turn]) -> str:
    return "\n".join(turn_line(t) for t in turns)


async def replay(client: httpx.AsyncClient, url: str, key: str, script: ConversationScript,
                 conversation: Conversation) -> dict[str, list[str]]:
    """Send every session; returns ``turn_hash -> dia ids`` of everything sent."""
    hashes: dict[str, list[str]] = {}
    for number, session in enumerate(conversation.sessions()):
        conv_id = f"{conversation.sample_id}-s{number}"
        leading, groups = exchanges(session, conversation.speakers[0])
        history: list[dict[str, Any]] = [{"role": "assistant", "content": _text(leading)}] if leading else []
        ids: list[list[str]] = [[t.dia_id for t in leading]] if leading else []
        script.script(conv_id, [_text(reply) or "ok" for _, reply in groups])
        for user_turns, reply_turns in groups:
            history.append({"role": "user", "content": _text(user_turns)})
            ids.append([t.dia_id for t in user_turns])
            response = await client.post(url, headers={"authorization": f"Bearer {key}"}, json={
                "model": "gpt-4o-mini", "messages": history, "metadata": {"conversation_id": conv_id}})
            response.raise_for_status()
            history.append({"role": "assistant", "content": response.json()["choices"][0]["message"]["content"]})
            ids.append([t.dia_id for t in reply_turns])
        pairs = [(m["role"], m["content"]) for m in history]
        for digest, dia in zip(hashed_turns(conv_id, pairs), ids, strict=False):
            hashes[digest] = dia
    return hashes


def ranked_dia_ids(prompt: str, records: list[Any], hashes: dict[str, list[str]]) -> list[str]:
    """Dia ids of the memories whose text appears in ``prompt``, in order of appearance."""
    found = []
    for record in records:
        position = prompt.find(record.text)
        if position >= 0 and record.metadata.get("turn_hash") in hashes:
            found.append((position, hashes[record.metadata["turn_hash"]]))
    return [d for _, ids in sorted(found, key=lambda x: x[0]) for d in ids]


async def ask(client: httpx.AsyncClient, url: str, key: str, script: ConversationScript, store: Any,
              conversation: Conversation, hashes: dict[str, list[str]], ks: tuple[int, ...],
              injected: RecallTable | None, direct: RecallTable) -> int:
    from gateway.memory.records import Tenant

    tenant = Tenant(f"locomo-{conversation.sample_id}", FRIEND)
    records = [r for r in await _all(store, tenant)]
    asked = 0
    for i, q in enumerate(conversation.questions):
        if not q.evidence:
            continue
        category = CATEGORIES.get(q.category, str(q.category))
        hits = await store.search(tenant, q.question, top_k=max(ks))
        direct.add(category, q.evidence, [d for h in hits for d in hashes.get(h.record.metadata.get("turn_hash"), [])],
                   conversation.sample_id)
        if injected is not None:
            qid = f"{conversation.sample_id}-q{i}"
            response = await client.post(url, headers={"authorization": f"Bearer {key}", "x-memgate-memorize": "off"}, json={
                "model": "gpt-4o-mini", "messages": [{"role": "user", "content": q.question}],
                "metadata": {"question_id": qid, "conversation_id": qid}})
            response.raise_for_status()
            body = script.received.get(qid, {})
            prompt = "\n".join(str(m.get("content")) for m in body.get("messages", []))
            injected.add(category, q.evidence, ranked_dia_ids(prompt, records, hashes), conversation.sample_id)
        asked += 1
    return asked


async def _all(store: Any, tenant: Any) -> list[Any]:
    out, cursor = [], None
    while True:
        page = await store.list(tenant, cursor=cursor, limit=1000)
        out += page.items
        if not page.next_cursor:
            return out
        cursor = page.next_cursor


def recall_registry() -> dict[str, type] | None:
    """The recall plugins, or None when they are not installed (then only the direct
    store search is measured)."""
    try:
        from plugins.auto_recall import AutoRecall
        from plugins.hybrid_injection import HybridInjection
    except ImportError:
        return None
    return {"auto_recall": AutoRecall, "hybrid_injection": HybridInjection}


def gateway_config(upstream_url: str, redis_url: str, conversations: list[Conversation], ks: tuple[int, ...],
                   with_recall: bool, queue_prefix: str, memory_prefix: str,
                   backend: str = "auto", language: str = "en") -> tuple[Any, dict[str, tuple[str, str]]]:
    from gateway.config import parse_config

    off = {"enabled": False}
    clients, keys = [], {}
    for c in conversations:
        replay_key, ask_key = f"sk-locomo-{uuid.uuid4().hex}", f"sk-locomo-{uuid.uuid4().hex}"
        user = f"locomo-{c.sample_id}"
        clients.append({"key": replay_key, "user_id": user, "friend_id": FRIEND,
                        "plugins": {"auto_recall": off, "hybrid_injection": off} if with_recall else {}})
        clients.append({"key": ask_key, "user_id": user, "friend_id": FRIEND, "plugins": {"memorize": off}})
        keys[c.sample_id] = (replay_key, ask_key)
    limit = min(50, max(ks))
    plugins: list[dict[str, Any]] = []
    if with_recall:
        plugins += [{"name": "auto_recall", "budget_ms": 10000, "config": {"limit": limit, "threshold": 0.0, "high_relevance_threshold": 0.0}},
                    {"name": "hybrid_injection", "budget_ms": 10000, "config": {"offer_tool": False}}]
    plugins.append({"name": "memorize", "config": {"mode": "verbatim", "verbatim_roles": ["user", "assistant"],
                                                   "queue": {"key_prefix": queue_prefix}, "worker": {"in_serve": 0}}})
    config = parse_config({
        "server": {"host": "127.0.0.1", "port": 0}, "upstream": {"base_url": upstream_url + "/v1", "api_key": "sk-script"},
        "clients": clients, "memory": {"redis_url": redis_url, "key_prefix": memory_prefix, "backend": backend,
                                       "embedding": {"provider": "auto", "language": language}},
        "plugins": plugins, "chain": {"request_deadline_ms": 20000},
    })
    return config, keys


async def run_async(path: str, ks: tuple[int, ...], redis_url: str | None, workers: int,
                    backend: str = "auto", language: str = "en") -> dict[str, Any]:
    from gateway.app import create_app
    from gateway.memorization.runtime import queue_for, run_workers, wait_drained
    from gateway.memory.factory import open_store, redis_client
    from plugins.memorize import MemorizePlugin

    conversations = load_locomo(path)
    server = None
    if redis_url is None:
        from gateway.runtime.redis_server import EmbeddedRedis

        server = EmbeddedRedis(Path(tempfile.mkdtemp(prefix="memgate-locomo-chat-")))
        redis_url = await asyncio.to_thread(server.start)
    double, script = UpstreamDouble(), ConversationScript()
    double.default = script
    upstream_server = LoopbackServer(double, lifespan="off").start()
    recall = recall_registry()
    config, keys = gateway_config(upstream_server.url, redis_url, conversations, ks, recall is not None,
                                  "lq" + uuid.uuid4().hex[:8], "lm" + uuid.uuid4().hex[:8], backend, language)
    gateway = LoopbackServer(create_app(config, registry={**(recall or {}), "memorize": MemorizePlugin})).start()
    redis = redis_client(redis_url, config.memory)
    memorize = MemorizePlugin.Config.model_validate(next(p.config for p in config.plugins if p.name == "memorize"))
    injected = RecallTable(ks) if recall is not None else None
    direct = RecallTable(ks)
    url = gateway.url + "/v1/chat/completions"
    result: dict[str, Any] = {"path": str(path), "backend": backend, "language": language,
                              "conversations": len(conversations), "ks": list(ks)}
    try:
        async with open_store(redis, config.memory) as store, httpx.AsyncClient(timeout=60) as client:
            queue = queue_for(memorize, redis)
            started = time.perf_counter()
            async with run_workers(memorize, redis, store, n=workers):
                hashes: dict[str, dict[str, list[str]]] = {}
                for c in conversations:
                    hashes[c.sample_id] = await replay(client, url, keys[c.sample_id][0], script, c)
                replayed = time.perf_counter()
                await wait_drained(queue, timeout_s=3600, poll_s=0.1)
            done = time.perf_counter()
            result.update(replay_requests=len(double.chat_requests()), replay_seconds=round(replayed - started, 2),
                          drain_after_replay_seconds=round(done - replayed, 2),
                          memorization_seconds=round(done - started, 2), workers=workers)
            questions = 0
            for c in conversations:
                questions += await ask(client, url, keys[c.sample_id][1], script, store, c,
                                       hashes[c.sample_id], ks, injected, direct)
            result.update(questions=questions, malformed_evidence_ids=sum(q.malformed for c in conversations for q in c.questions),
                          direct_rows=direct.rows(), direct_conversations=direct.group_rows(),
                          direct_table=direct.format())
            if injected is not None:
                result.update(injected_rows=injected.rows(), injected_conversations=injected.group_rows(),
                              injected_table=injected.format())
            else:
                result["todo"] = "recall plugins not importable: only the direct store search was measured"
    finally:
        await redis.aclose()
        gateway.stop()
        upstream_server.stop()
        if server is not None:
            await asyncio.to_thread(server.stop)
    return result


def run_locomo_via_chat(path: str, ks: tuple[int, ...] = (5, 10, 25, 50), mode: str = "verbatim",
                        json_out: str | None = None, redis_url: str | None = None, workers: int = 1,
                        backend: str = "auto", language: str = "en") -> int:
    """Print the tables (and write JSON); ``mode`` must be ``verbatim`` (extract mode
    needs a real memory model: not run offline). ``backend``: as ``--backend``
    (:mod:`bench.backends`), one run per backend. ``language``: the gateway's
    ``memory.embedding.language`` (``provider: auto``)."""
    if mode != "verbatim":
        raise ValueError("via-chat LoCoMo runs in verbatim mode only (extract needs a real memory model)")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    results = [asyncio.run(run_async(path, ks, redis_url, workers, b, language)) for b in resolve_backends(redis_url, backend)]
    for result in results:
        print_result(result)
    if json_out:
        Path(json_out).write_text(json.dumps(results if len(results) > 1 else results[0], indent=2))
    return 0


def print_result(result: dict[str, Any]) -> None:
    """Print one backend's via-chat result (the tables :func:`run_async` returns)."""
    print(f"LoCoMo via chat ({result['backend']} backend): {result['conversations']} conversations, {result['replay_requests']} chat requests replayed; "
          f"memorization {result['memorization_seconds']} s (replay {result['replay_seconds']} s + drain "
          f"{result['drain_after_replay_seconds']} s, {result['workers']} worker(s)); {result['questions']} questions, "
          f"{result['malformed_evidence_ids']} malformed evidence ids dropped")
    if "injected_table" in result:
        print("\nevidence among the memories injected into the upstream request (auto_recall + hybrid_injection):")
        print(result["injected_table"])
    print("\nevidence among store.search hits for the question (direct):")
    print(result["direct_table"])
    if "todo" in result:
        print("\nTODO:", result["todo"])
