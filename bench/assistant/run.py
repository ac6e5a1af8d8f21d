"""``python -m bench assistant``: everyday assistant chats through the real gateway.

1. A gateway with the checkout's ``gateway.yaml`` (default chain, default memorization,
   embedded Redis in a temporary data dir; :func:`gateway_config`) runs in-process on a
   loopback port (:class:`tests.support.loopback.LoopbackServer`), in front of the test
   suite's upstream double (:class:`tests.support.upstream_double.UpstreamDouble` playing a
   :class:`~tests.support.upstream_double.ConversationScript`: each chat request gets the
   dataset's next assistant reply of its ``metadata.conversation_id``).
2. One key per user (friend ``assistant``, as the yaml's dev key) is minted through the
   admin API (``POST /v1/admin/keys`` with the yaml's admin key).
3. Replay, in rounds: round *n* sends session *n* of every user (users concurrently,
   turns of a user in order, each session a new conversation, the whole history resent
   each turn as chat apps do) through the real ``openai`` SDK (``/v1/chat/completions``);
   after each round memorization is drained (:func:`wait_drained`), as days would pass
   between two conversations.
4. Probes: after the yaml's ``personalization.cache_ttl_s`` has passed since the last
   replayed request (its per-user cache would otherwise still hold what it read during
   the replay), each probe is asked alone in a new conversation with the header
   ``x-memgate-memorize: off`` (a probe must not become a memory the next probe sees);
   the request the upstream received is read (:mod:`bench.assistant.prompt`) and scored
   (:mod:`bench.assistant.metrics`). Then each user's memories are listed
   (``GET /v1/admin/memories``) for what was stored.

Figures per group (all, per language, per split, per split and language): fact recall,
junk share, stale rate, duplicate lines and what was stored per kind (with the false
supersedes: current facts only a superseded memory held); definitions in
:mod:`bench.assistant.metrics`. ``x-memgate-degraded`` on a probe's reply is counted
(``degraded_probes``): a recall that timed out on a loaded machine shows there, not as a
silent miss.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.assistant.dataset import KINDS, User
from bench.assistant.metrics import (
    ProbeResult,
    TurnMatcher,
    memory_rows,
    pool_stored,
    score_probe,
    stored_summary,
    summarize,
)
from bench.assistant.model_tap import ModelTap
from bench.assistant.prompt import read_request
from tests.support.loopback import LoopbackServer
from tests.support.upstream_double import ConversationScript, UpstreamDouble

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = ROOT / "gateway.yaml"
FRIEND = "assistant"
MODEL = "gpt-4o-mini"
#: Memorization jobs end with one of these outcomes (``retried`` jobs come back).
FINAL_OUTCOMES = ("done", "duplicate", "stale", "dead")
_JOBS = re.compile(r'^memgate_memorize_jobs_total\{[^}]*outcome="([a-z_]+)"[^}]*\}\s+([0-9.eE+-]+)', re.MULTILINE)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExtractModel:
    """``--mode extract``: the memory model the ``memorize`` plugin calls (any
    OpenAI-compatible chat endpoint, e.g. ``python -m llama_cpp.server`` on loopback).
    ``url`` is the base URL (``.../v1``); calls go through a :class:`ModelTap` that records
    them. A small local model answers in seconds to minutes per call on this machine, so
    the memory-model timeout, the job budget (three calls and one repair) and the drain
    timeout are raised with it."""

    url: str
    name: str
    max_tokens: int = 512
    timeout_s: float = 300.0
    max_facts: int = 5
    structured_outputs: bool = True

    def memorize(self, tapped_url: str) -> dict[str, Any]:
        """Keys set in the ``memorize`` plugin's config."""
        return {"mode": "extract", "max_facts": self.max_facts,
                "model": {"model": self.name, "base_url": tapped_url, "api_key": "none",
                          "timeout_s": self.timeout_s, "max_tokens": self.max_tokens,
                          "structured_outputs": self.structured_outputs},
                "worker": {"job_timeout_s": self.timeout_s * 5}}


def gateway_config(upstream_url: str, data_dir: Path, admin_key: str, config_path: Path = DEFAULT_CONFIG,
                   redis_url: str | None = None, memorize: dict[str, Any] | None = None) -> Any:
    """``config_path`` as ``memgate serve`` would load it with these environment values
    only (nothing else of the caller's environment leaks in): the upstream is the
    double, the admin key ``admin_key``, ``memory.data_dir`` the given dir. With
    ``redis_url`` (an already running Redis, e.g. the test suite's) the memory and
    memorize queue key prefixes are fresh so runs never meet. ``memorize``: keys set in
    the ``memorize`` plugin's config (one level of nesting merged, e.g. ``worker``)."""
    from gateway.config import parse_config, resolve_paths
    from gateway.runtime.config import ConfigError, interpolate_tree

    environ = {"MEMGATE_UPSTREAM_URL": upstream_url + "/v1", "OPENAI_API_KEY": "sk-upstream-double",
               "MEMGATE_ADMIN_KEY": admin_key, "MEMGATE_KEY": "sk-dev-" + secrets.token_hex(8),
               "MEMGATE_REDIS_URL": redis_url or "", "MEMGATE_PORT": "0"}
    data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ConfigError(f"{config_path}: the top level must be a mapping")
    data = interpolate_tree(data, environ)
    data.setdefault("memory", {})["data_dir"] = str(data_dir)
    for entry in data.get("plugins") or []:
        if memorize and entry.get("name") == "memorize":
            config = entry.get("config") or {}
            for key, value in memorize.items():
                config[key] = {**(config.get(key) or {}), **value} if isinstance(value, dict) else value
            entry["config"] = config
    if redis_url:
        tag = secrets.token_hex(4)
        data["memory"]["key_prefix"] = "ab" + tag
        for entry in data.get("plugins") or []:
            if entry.get("name") == "memorize":
                config = entry.setdefault("config", {}) or {}
                entry["config"] = config
                config.setdefault("queue", {})["key_prefix"] = "abq" + tag
    return resolve_paths(parse_config(data), config_path.absolute().parent)


def personalization_ttl(config: Any) -> float:
    """``cache_ttl_s`` of the enabled ``personalization`` plugin, 0 when there is none."""
    for entry in config.plugins:
        if entry.name == "personalization" and entry.enabled:
            from plugins.personalization import PersonalizationConfig

            return float(PersonalizationConfig.model_validate(entry.config or {}).cache_ttl_s)
    return 0.0


class Run:
    """One benchmark run against a started gateway (module docstring)."""

    def __init__(self, gateway_url: str, admin_key: str, script: ConversationScript, users: Sequence[User],
                 concurrency: int = 4, drain_timeout_s: float = 180.0, probe_friend: str = FRIEND) -> None:
        self.url = gateway_url
        self.admin = {"authorization": f"Bearer {admin_key}"}
        self.script = script
        self.users = list(users)
        self.concurrency = concurrency
        self.drain_timeout_s = drain_timeout_s
        self.probe_friend = probe_friend
        self.keys: dict[tuple[str, str], str] = {}
        self.sent = 0  # chat requests that may enqueue a memorization job
        self.degraded_replay: Counter[str] = Counter()  # x-memgate-degraded entries of replayed requests
        self.last_replay = 0.0
        self.tag = secrets.token_hex(3)

    async def mint_keys(self, http: httpx.AsyncClient) -> None:
        friends = {FRIEND, self.probe_friend}
        for user in self.users:
            for friend in friends:
                response = await http.post("/v1/admin/keys", headers=self.admin,
                                           json={"user_id": user.user, "friend_id": friend})
                response.raise_for_status()
                self.keys[(user.user, friend)] = response.json()["key"]

    def client(self, user: User, friend: str = FRIEND) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(base_url=self.url + "/v1", api_key=self.keys[(user.user, friend)], max_retries=0, timeout=120)

    async def replay_session(self, user: User, number: int) -> None:
        if number >= len(user.sessions):
            return
        session = user.sessions[number]
        conv = f"{user.user}-{session.id}-{self.tag}"
        self.script.script(conv, [t.assistant for t in session.turns])
        history: list[dict[str, Any]] = []
        async with self.client(user) as client:
            for turn in session.turns:
                history.append({"role": "user", "content": turn.user})
                raw = await client.chat.completions.with_raw_response.create(
                    model=MODEL, messages=history, metadata={"conversation_id": conv})
                self.sent += 1
                self.last_replay = time.monotonic()
                for entry in (raw.headers.get("x-memgate-degraded") or "").split(","):
                    if entry.strip():
                        self.degraded_replay[entry.strip()] += 1
                reply = raw.parse().choices[0].message.content or ""
                history.append({"role": "assistant", "content": reply})

    async def replay(self, http: httpx.AsyncClient) -> dict[str, float]:
        """Every round (module docstring); seconds spent replaying and draining."""
        rounds = max(len(u.sessions) for u in self.users)
        spent = {"replay_s": 0.0, "drain_s": 0.0}
        gate = asyncio.Semaphore(self.concurrency)

        async def one(user: User, number: int) -> None:
            async with gate:
                await self.replay_session(user, number)

        for number in range(rounds):
            started = time.monotonic()
            await asyncio.gather(*(one(u, number) for u in self.users))
            spent["replay_s"] += time.monotonic() - started
            started = time.monotonic()
            await self.wait_drained(http)
            spent["drain_s"] += time.monotonic() - started
        return {k: round(v, 2) for k, v in spent.items()}

    async def jobs_finished(self, http: httpx.AsyncClient) -> int:
        """Memorization jobs that reached a final outcome (``/metrics``)."""
        text = (await http.get("/metrics")).text
        return int(sum(float(v) for outcome, v in _JOBS.findall(text) if outcome in FINAL_OUTCOMES))

    async def job_outcomes(self, http: httpx.AsyncClient) -> dict[str, int]:
        """Memorization jobs per final outcome (``/metrics``)."""
        text = (await http.get("/metrics")).text
        out: Counter[str] = Counter()
        for outcome, value in _JOBS.findall(text):
            if outcome in FINAL_OUTCOMES:
                out[outcome] += int(float(value))
        return dict(out)

    async def wait_drained(self, http: httpx.AsyncClient) -> None:
        """Until as many jobs finished as requests were replayed and every queue is empty
        (nothing waiting, in flight, retrying or buffered), polled every 50 ms.

        Raises:
            TimeoutError: not so after ``drain_timeout_s``.
        """
        deadline = time.monotonic() + self.drain_timeout_s
        while True:
            queues = (await http.get("/v1/admin/queue", headers=self.admin)).json()["data"]
            idle = all(q["length"] == 0 and q["retrying"] == 0 and q["buffered"] == 0 for q in queues)
            if idle and await self.jobs_finished(http) >= self.sent:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"memorization not drained after {self.drain_timeout_s} s: {queues}")
            await asyncio.sleep(0.05)

    async def ask(self, user: User, probe_id: str) -> ProbeResult:
        probe = next(p for p in user.probes if p.id == probe_id)
        qid = f"{user.user}-{probe.id}-{self.tag}"
        sent = [{"role": "user", "content": probe.ask}]
        async with self.client(user, self.probe_friend) as client:
            raw = await client.chat.completions.with_raw_response.create(
                model=MODEL, messages=sent, metadata={"conversation_id": qid, "question_id": qid},
                extra_headers={"x-memgate-memorize": "off"})
        injected = read_request(self.script.received[qid], sent)
        return score_probe(user, probe.id, injected, TurnMatcher(user), raw.headers.get("x-memgate-degraded"))

    async def memories(self, http: httpx.AsyncClient, user: User) -> list[dict[str, Any]]:
        out, cursor = [], None
        while True:
            params: dict[str, Any] = {"user_id": user.user, "friend_id": FRIEND, "limit": 500}
            if cursor:
                params["cursor"] = cursor
            response = await http.get("/v1/admin/memories", headers=self.admin, params=params)
            response.raise_for_status()
            page = response.json()
            out += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                return out


async def run_async(users: Sequence[User], config_path: Path = DEFAULT_CONFIG, redis_url: str | None = None,
                    concurrency: int = 4, probe_friend: str = FRIEND,
                    double: UpstreamDouble | None = None, extract: ExtractModel | None = None,
                    drain_timeout_s: float = 180.0) -> dict[str, Any]:
    """The whole run (module docstring); the result as :func:`report` reads it.
    ``double``: the upstream double to use (a test reads what it received); ``extract``:
    run ``memorize`` in extract mode with that model (its calls recorded, ``model_calls``)."""
    from gateway.app import create_app

    started = time.monotonic()
    double, script = double or UpstreamDouble(), ConversationScript()
    double.default = script
    upstream = LoopbackServer(double, lifespan="off").start()
    tap = ModelTap(extract.url, timeout_s=extract.timeout_s * 2) if extract else None
    tapped = LoopbackServer(tap, lifespan="off").start() if tap else None
    admin_key = "sk-bench-admin-" + secrets.token_hex(12)
    with tempfile.TemporaryDirectory(prefix="memgate-assistant-") as tmp:
        memorize = extract.memorize(tapped.url + "/v1") if extract and tapped else None
        config = gateway_config(upstream.url, Path(tmp) / "data", admin_key, config_path, redis_url, memorize)
        gateway = LoopbackServer(create_app(config)).start(timeout=300)
        try:
            run = Run(gateway.url, admin_key, script, users, concurrency, drain_timeout_s, probe_friend)
            async with httpx.AsyncClient(base_url=gateway.url, timeout=120) as http:
                await run.mint_keys(http)
                timing = await run.replay(http)
                wait = personalization_ttl(config) - (time.monotonic() - run.last_replay)
                if wait > 0:
                    await asyncio.sleep(wait)  # the cache's TTL, not synchronisation (module docstring)
                started_probes = time.monotonic()
                probes = [await run.ask(u, p.id) for u in users for p in u.probes]
                timing["probes_s"] = round(time.monotonic() - started_probes, 2)
                listed = {u.user: await run.memories(http, u) for u in users}
                stored = {u.user: stored_summary(u, listed[u.user]) for u in users}
                jobs = await run.job_outcomes(http)
                dead = (await http.get("/v1/admin/queue/dead", headers=run.admin, params={"limit": 500})).json()
        finally:
            gateway.stop()
            upstream.stop()
            if tapped:
                tapped.stop()
    timing["total_s"] = round(time.monotonic() - started, 2)
    busy = timing["replay_s"] + timing["drain_s"]
    timing["jobs_per_s"] = round(sum(jobs.values()) / busy, 3) if busy else 0.0
    return {"config": str(config_path), "probe_friend": probe_friend, "replayed_requests": run.sent,
            "mode": "extract" if extract else "config", "model": vars(extract) if extract else None,
            "job_outcomes": jobs, "dead_letters": [d.get("error", "")[:300] for d in dead.get("data", [])],
            "model_calls": tap.rows() if tap else [],
            "degraded_replay": dict(run.degraded_replay), "timing": timing,
            "groups": groups(users, probes, stored),
            "probes": [vars(p) for p in probes], "stored": stored,
            "memories": {u.user: memory_rows(u, listed[u.user]) for u in users}}


def groups(users: Sequence[User], probes: Sequence[ProbeResult], stored: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Figures for ``all``, each language, each split and each split/language pair present."""
    keys: dict[str, Any] = {"all": lambda u: True}
    for lang in sorted({u.lang for u in users}):
        keys[lang] = lambda u, lang=lang: u.lang == lang
    splits = sorted({u.split for u in users})
    if len(splits) > 1:
        for split in splits:
            keys[split] = lambda u, split=split: u.split == split
            for lang in sorted({u.lang for u in users}):
                keys[f"{split}/{lang}"] = lambda u, split=split, lang=lang: u.split == split and u.lang == lang
    out = {}
    for name, member in keys.items():
        chosen = {u.user for u in users if member(u)}
        if chosen:
            out[name] = {**summarize([p for p in probes if p.user in chosen]),
                         "stored": pool_stored([stored[u] for u in sorted(chosen)])}
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def report(result: dict[str, Any]) -> str:
    """Markdown tables of a run's groups."""
    lines = [
        "| group | users | probes | fact recall | probes with memory | memory lines | junk share | stale rate "
        "(instead) | duplicate lines | same-fact lines | degraded |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for name, g in result["groups"].items():
        lines.append(
            f"| {name} | {g['users']} | {g['probes']} | {_pct(g['fact_recall'])} ({g['recalled']}) | "
            f"{g['probes_with_memory']} | {g['memory_lines']} | {_pct(g['junk_share'])} ({g['junk_lines']}) | "
            f"{_pct(g['stale_rate'])} ({_pct(g['stale_instead'])}) of {g['stale_probes']} | {g['duplicate_lines']} | "
            f"{g['same_fact_lines']} | {g['degraded_probes']} |")
    lines += ["", "| group | turns with a live memory, by kind (formed/turns) | facts stored | superseded still live "
              "| false supersedes | memories (retired) | fact memories in profile |", "|---|---|---:|---:|---:|---:|---:|"]
    for name, g in result["groups"].items():
        s = g["stored"]
        kinds = ", ".join(f"{k} {s['turns_with_memory'].get(k, 0)}/{s['turns'][k]}" for k in KINDS if k in s["turns"])
        lines.append(f"| {name} | {kinds} | {s['facts_stored']}/{s['facts']} | {s['superseded_live']}/{s['superseded_facts']} "
                     f"| {s['false_superseded']} | {s['memories']} ({s['retired']}) | {s['fact_memories_profile']}/{s['fact_memories']} |")
    t = result["timing"]
    degraded = ", ".join(f"{k} x{n}" for k, n in result["degraded_replay"].items()) or "none"
    lines += ["", f"{result['replayed_requests']} chat requests replayed (x-memgate-degraded: {degraded}); "
              f"replay {t['replay_s']} s, drain {t['drain_s']} s, probes {t['probes_s']} s, total {t['total_s']} s; "
              f"config {result['config']}, probes as friend {result['probe_friend']!r}",
              f"memorization jobs: {result.get('job_outcomes', {})}, {t.get('jobs_per_s')} jobs/s over replay + drain"]
    if result.get("model"):
        lines.append(model_report(result))
    return "\n".join(lines)


def model_report(result: dict[str, Any]) -> str:
    """Memory-model calls per step: count, repairs, non-200 answers, answers that are not
    JSON, seconds per call; then the dead letters' errors, counted."""
    calls = result["model_calls"]
    model = result["model"]
    lines = ["", f"memory model {model['name']!r} at {model['url']} (max_tokens {model['max_tokens']}, "
             f"max_facts {model['max_facts']}); response_format asked: "
             f"{dict(Counter(c['response_format'] for c in calls))}",
             "| step | calls | repairs | non-200 | not JSON | s/call (mean) | s/call (max) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for step in sorted({c["step"] for c in calls}):
        mine = [c for c in calls if c["step"] == step]
        seconds = [c["seconds"] for c in mine]
        lines.append(f"| {step} | {len(mine)} | {sum(c['repair'] for c in mine)} | "
                     f"{sum(c['status'] != 200 for c in mine)} | {sum(not _is_json(c['content']) for c in mine)} | "
                     f"{sum(seconds) / len(seconds):.1f} | {max(seconds):.1f} |")
    errors = Counter(re.sub(r"[0-9]+", "N", e)[:120] for e in result["dead_letters"])
    lines += [f"dead letters: {len(result['dead_letters'])}"] + [f"  {n} x {e}" for e, n in errors.most_common(5)]
    return "\n".join(lines)


def _is_json(content: Any) -> bool:
    try:
        json.loads(content) if isinstance(content, str) else None
    except ValueError:
        return False
    return isinstance(content, str)


def main(users: Sequence[User], json_out: str | None = None, config_path: Path = DEFAULT_CONFIG,
         redis_url: str | None = None, concurrency: int = 4, probe_friend: str = FRIEND,
         extract: ExtractModel | None = None, drain_timeout_s: float = 180.0) -> dict[str, Any]:
    """Run, print the tables, write the JSON."""
    for name in ("httpx", "httpx2", "openai", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    result = asyncio.run(run_async(users, config_path, redis_url, concurrency, probe_friend,
                                   extract=extract, drain_timeout_s=drain_timeout_s))
    print(report(result))
    if json_out:
        Path(json_out).write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    return result
