"""``python -m bench context``: relevance-scored context selection on a real group chat.

Data: ``../shared/data/irc/irc-dev.json`` (Ubuntu IRC disentanglement, Kummerfeld et al.,
ACL 2019, CC BY 4.0; format in its README; ``python -m bench irc-convert`` makes the same
file from the corpus's other splits). For each annotated message with a gold parent
(other than itself), the previous ``--pool`` non-system messages and the reply itself go
as one Chat Completions request, the way a group bot sends a channel: each message
``{"role": "user", "name": speaker, "content": text}`` plus, per ``--send``:

- ``ids+ts``: ``"memgate": {"id": <line>, "ts": <time>}`` (a Discord/Slack/QQ bot: every
  message with its platform id and time, no reply links);
- ``ts``: ``"memgate": {"ts": <time>}``;
- ``none``: no extension (speaker and text only: position decay, no time window).

The request is planned in-process (:func:`plugins.context_selection.plan_request`, the
plugin's own code on the plugin's defaults unless ``--set``) or, with ``--http``, also
sent through the real gateway on loopback (``context_selection`` on for the key, memory
off) to a recording upstream double: the kept messages are read back from what the
upstream received (matched in order; the two ways must agree, ``http_mismatches``).
Reported per way of sending, averaged over the replies:

- parent recall@20: share of replies whose gold parents are all kept (a parent that is a
  system line or outside the pool counts as missed);
- thread recall: share of the reply's thread (the connected group of gold links) among
  the previous 100 non-system messages that is kept;
- precision: share of the kept messages that are in the reply's thread (replies with
  nothing kept are left out of this mean, and counted in ``empty``);
- tokens sent (cl100k, each message counted as a chat message with its ``name``) vs the
  last-20 and last-50 baselines;
- build time p50/p99 (ms): :func:`plan_request` per reply (extension parsing included),
  wall clock and the thread's CPU time (``cpu``: what the machine's other load does not
  inflate).

``--loco``: leave-one-channel-out tuning over a grid of settings (``--grid``): for each
channel, the setting that does best on the other channels (``objective``) is chosen and
its figures on the left-out channel are reported. ``--scale``: build time at growing
candidate counts (the chat's channels concatenated, ``max_candidates`` raised to match).
"""

from __future__ import annotations

import itertools
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from gateway.runtime.tokens import FALLBACK_ENCODING, TokenCounter
from plugins.context_scoring import Params, Turn, select_context
from plugins.context_selection import _turn, plan_request

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "irc" / "irc-dev.json"
THREAD_HORIZON = 100
WAYS = ("ids+ts", "ts", "none")
MAX_CANDIDATES = 500


@dataclass
class Scores:
    """Sums over replies, turned into means by :meth:`summary`."""

    replies: int = 0
    parent_hits: int = 0
    thread_recall: float = 0.0
    thread_n: int = 0
    precision: float = 0.0
    precision_n: int = 0
    empty: int = 0
    kept: int = 0
    tokens: int = 0

    def add(self, kept: Sequence[int], parents: Sequence[int], thread: set[int], horizon: Sequence[int],
            tokens: int) -> None:
        self.replies += 1
        chosen = set(kept)
        self.parent_hits += all(p in chosen for p in parents)
        in_horizon = thread.intersection(horizon)
        if in_horizon:
            self.thread_recall += len(in_horizon & chosen) / len(in_horizon)
            self.thread_n += 1
        if chosen:
            self.precision += len(chosen & thread) / len(chosen)
            self.precision_n += 1
        else:
            self.empty += 1
        self.kept += len(chosen)
        self.tokens += tokens

    def merge(self, other: Scores) -> Scores:
        return Scores(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))

    @property
    def parent(self) -> float:
        return self.parent_hits / max(self.replies, 1)

    @property
    def thread(self) -> float:
        return self.thread_recall / max(self.thread_n, 1)

    @property
    def prec(self) -> float:
        return self.precision / max(self.precision_n, 1)

    def summary(self) -> dict[str, Any]:
        return {
            "replies": self.replies,
            "parent_recall_at_20": round(self.parent, 3),
            "thread_recall": round(self.thread, 3),
            "precision": round(self.prec, 3),
            "mean_kept": round(self.kept / max(self.replies, 1), 2),
            "empty": self.empty,
            "tokens_sent": self.tokens,
        }


def objective(s: Scores) -> float:
    """What tuning maximizes: thread recall + parent recall, with a steep penalty below
    the targets (parent recall 0.95, precision 0.50) and for empty contexts."""
    return (s.thread + s.parent - 5 * max(0.0, 0.95 - s.parent) - 5 * max(0.0, 0.50 - s.prec)
            - s.empty / max(s.replies, 1))


def _components(messages: Sequence[dict[str, Any]]) -> dict[int, int]:
    """Message id -> id of its gold thread (union-find over every reply link)."""
    parent: dict[int, int] = {m["id"]: m["id"] for m in messages}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for m in messages:
        for p in m["parents"]:
            if p in parent:
                parent[find(m["id"])] = find(p)
    return {i: find(i) for i in parent}


def _iso(ts: str) -> str:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).isoformat()


def request_message(m: dict[str, Any], way: str) -> dict[str, Any]:
    """One chat message as a group bot sends it, ``way`` of sending (module docstring)."""
    out: dict[str, Any] = {"role": "user", "name": m["speaker"], "content": m["text"]}
    if way == "ids+ts":
        out["memgate"] = {"id": str(m["id"]), "ts": _iso(m["ts"])}
    elif way == "ts":
        out["memgate"] = {"ts": _iso(m["ts"])}
    return out


@dataclass
class Case:
    """One annotated reply: its channel, its window of messages (the reply last)."""

    channel: str
    window: list[dict[str, Any]]
    parents: list[int]
    thread: set[int]
    horizon: list[int]


def cases(channels: Sequence[dict[str, Any]], pool: int, limit: int | None = None) -> list[Case]:
    out: list[Case] = []
    for channel in channels:
        messages = channel["messages"]
        thread_of = _components(messages)
        chat = [m for m in messages if not m["system"]]
        for t, message in enumerate(chat):
            parents = [p for p in message["parents"] if p != message["id"]]
            if not message["annotated"] or not parents:
                continue
            if limit is not None and len(out) >= limit:
                return out
            thread = {m["id"] for m in chat[:t] if thread_of[m["id"]] == thread_of[message["id"]]}
            horizon = [m["id"] for m in chat[max(0, t - THREAD_HORIZON):t]]
            out.append(Case(channel["id"], chat[max(0, t - pool):t + 1], parents, thread, horizon))
    return out


def _params(overrides: Sequence[str]) -> Params:
    """``Params`` with ``key=value`` overrides (``threshold=0.35``, ``weights.time_decay=0.3``)."""
    return _apply(Params(), {k: float(v) for k, _, v in (item.partition("=") for item in overrides)})


def plugin_config(params: Params) -> dict[str, Any]:
    """The ``context_selection`` plugin config that gives ``params``."""
    w = params.weights
    return {
        "weights": {"reply_chain": w.reply_chain, "user_continuity": w.user_continuity, "time_decay": w.time_decay,
                    "mention_relation": w.mention_relation, "keyword_overlap": w.keyword_overlap},
        "relevance_threshold": params.threshold, "max_context_messages": params.max_messages,
        "time_window_s": params.window_s, "time_half_life_s": params.half_life_s,
        "position_half_life": params.half_life_turns, "max_candidates": MAX_CANDIDATES,
        "build_budget_ms": 60_000.0,
    }


_TURNS: dict[tuple[int, str], list[Turn]] = {}


def select_turns(case: Case, way: str, params: Params) -> list[int]:
    """Kept message ids of :func:`select_context` on the case's turns as
    :func:`plan_request` reads them (cached per case and way: for tuning grids; the same
    selection as :func:`select_in_process`, whose requests are all user messages)."""
    key = (id(case), way)
    turns = _TURNS.get(key)
    if turns is None:
        turns = _TURNS[key] = [_turn(request_message(m, way), i, ()) for i, m in enumerate(case.window)]
    return [case.window[i]["id"] for i in select_context(turns, len(turns) - 1, params).kept]


def select_in_process(case: Case, way: str, params: Params) -> tuple[list[int], float, float]:
    """(kept message ids, build seconds, build CPU seconds of this thread) of
    :func:`plan_request` on the case's request."""
    messages = [request_message(m, way) for m in case.window]
    began, cpu = time.perf_counter(), time.thread_time()
    plan = plan_request(messages, params, (), None, MAX_CANDIDATES)
    elapsed, cpu = time.perf_counter() - began, time.thread_time() - cpu
    return [case.window[i]["id"] for i in plan.kept], elapsed, cpu


def _aligned(window: Sequence[dict[str, Any]], sent: Sequence[dict[str, Any]]) -> list[int]:
    """Ids of the window's earlier messages found, in order, among the ``sent`` messages
    (the reply is the last of both); matched from the end, so of two identical messages
    the later one is taken."""
    kept: list[int] = []
    j = len(sent) - 2
    for i in range(len(window) - 2, -1, -1):
        if j < 0:
            break
        m = window[i]
        if sent[j].get("name") == m["speaker"] and sent[j].get("content") == m["text"]:
            kept.append(m["id"])
            j -= 1
    return kept[::-1]


class HttpPath:
    """The real gateway on loopback with ``context_selection`` on for one key, in front of
    the recording upstream double (``tests/support``); :meth:`select` sends one case."""

    KEY = "sk-bench-context-0123456789"

    def __init__(self, params: Params) -> None:
        from gateway.app import create_app
        from gateway.config import parse_config
        from plugins import builtin_plugins
        from tests.support.loopback import LoopbackServer
        from tests.support.upstream_double import UpstreamDouble

        self.upstream = UpstreamDouble()
        self.upstream_server = LoopbackServer(self.upstream, lifespan="off").start()
        config = parse_config({
            "server": {"host": "127.0.0.1", "port": 0},
            "upstream": {"base_url": self.upstream_server.url + "/v1", "api_key": "sk-upstream"},
            "clients": [{"key": self.KEY, "user_id": "groupbot", "key_id": "bench",
                         "plugins": {"context_selection": {"enabled": True}}}],
            "plugins": [{"name": "context_selection", "enabled": False, "config": plugin_config(params)}],
        })
        self.gateway = LoopbackServer(create_app(config, registry=builtin_plugins())).start()

    def select(self, client: Any, case: Case, way: str) -> list[int]:
        messages = [request_message(m, way) for m in case.window]
        before = len(self.upstream.requests)
        response = client.post("/v1/chat/completions", json={"model": "gpt-4o-mini", "messages": messages})
        response.raise_for_status()
        if response.headers.get("x-memgate-degraded"):
            raise RuntimeError(f"degraded: {response.headers['x-memgate-degraded']}")
        sent = self.upstream.requests[before].json["messages"]
        if any("memgate" in m for m in sent):
            raise RuntimeError("the extension field reached the upstream")
        return _aligned(case.window, sent)

    def close(self) -> None:
        self.gateway.stop()
        self.upstream_server.stop()


def evaluate(all_cases: Sequence[Case], way: str, params: Params, tokens: dict[tuple[str, int], int],
             http: HttpPath | None = None) -> dict[str, Any]:
    """Scores per channel and in total for one way of sending (module docstring)."""
    import httpx

    per: dict[str, Scores] = {}
    times: list[float] = []
    cpu_times: list[float] = []
    mismatches = 0
    client = httpx.Client(base_url=http.gateway.url, timeout=60,
                          headers={"authorization": f"Bearer {HttpPath.KEY}"}) if http is not None else None
    try:
        for case in all_cases:
            kept, elapsed, cpu = select_in_process(case, way, params)
            times.append(elapsed)
            cpu_times.append(cpu)
            if http is not None:
                through = http.select(client, case, way)
                mismatches += through != kept
                kept = through
            cost = sum(tokens.get((case.channel, i), 0) for i in kept)
            per.setdefault(case.channel, Scores()).add(kept, case.parents, case.thread, case.horizon, cost)
    finally:
        if client is not None:
            client.close()
    total = _sum(per.values())
    out = {"total": total, "per_channel": per, "build_ms": {**percentiles(times), "cpu": percentiles(cpu_times)}}
    if http is not None:
        out["http_mismatches"] = mismatches
    return out


def percentiles(seconds: Sequence[float]) -> dict[str, float]:
    """p50 and p99 of ``seconds``, in ms."""
    ordered = sorted(seconds)
    return {"p50": round(statistics.median(ordered) * 1000, 3),
            "p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3)}


def baselines(all_cases: Sequence[Case], tokens: dict[tuple[str, int], int]) -> dict[str, dict[str, Any]]:
    out = {}
    for n in (20, 50):
        s = Scores()
        for case in all_cases:
            recent = [m["id"] for m in case.window[:-1][-n:]]
            s.add(recent, case.parents, case.thread, case.horizon, sum(tokens[(case.channel, i)] for i in recent))
        out[f"last_{n}"] = s.summary()
    return out


def _tokens(channels: Sequence[dict[str, Any]]) -> dict[tuple[str, int], int]:
    counter = TokenCounter({"*": FALLBACK_ENCODING})
    encoding = counter.encoding("gpt-4o")
    return {(c["id"], m["id"]): counter.message(encoding, {"role": "user", "name": m["speaker"], "content": m["text"]})
            for c in channels for m in c["messages"] if not m["system"]}


def run(data: Path, pool: int, params: Params, ways: Sequence[str], http: bool, limit: int | None = None,
        per_channel: bool = True) -> dict[str, Any]:
    channels = json.loads(data.read_text())
    all_cases = cases(channels, pool, limit)
    keyed = _tokens(channels)
    result: dict[str, Any] = {"data": str(data), "pool": pool, "replies": len(all_cases)}
    server = HttpPath(params) if http else None
    try:
        for way in ways:
            row: dict[str, Any] = {}
            for path in (("in_process", None), ("http", server)) if server is not None else (("in_process", None),):
                name, through = path
                scored = evaluate(all_cases, way, params, keyed, through)
                row[name] = {**scored["total"].summary(), "build_ms": scored["build_ms"]}
                if "http_mismatches" in scored:
                    row[name]["http_mismatches"] = scored["http_mismatches"]
                if per_channel:
                    row[name]["per_channel"] = {k: v.summary() for k, v in scored["per_channel"].items()}
            result[way] = row
    finally:
        if server is not None:
            server.close()
    result.update(baselines(all_cases, keyed))
    return result


def loco(data: Path, pool: int, way: str, grid: dict[str, list[float]], base: Params) -> dict[str, Any]:
    """Leave-one-channel-out over the channels of ``data`` (module docstring)."""
    channels = json.loads(data.read_text())
    all_cases = cases(channels, pool)
    keys = sorted(grid)
    settings = [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]
    table: list[tuple[dict[str, float], dict[str, Scores]]] = []
    for setting in settings:
        params = _apply(base, setting)
        per: dict[str, Scores] = {}
        for case in all_cases:
            per.setdefault(case.channel, Scores()).add(select_turns(case, way, params), case.parents, case.thread,
                                                       case.horizon, 0)
        table.append((setting, per))
    names = sorted({c.channel for c in all_cases})
    out: dict[str, Any] = {"way": way, "settings": len(settings), "left_out": {}}
    left_total = Scores()
    for held in names:
        def left_out_score(r: Any, held: str = held) -> Any:
            return objective(_sum(s for name, s in r[1].items() if name != held))

        best_setting, best_row = max(table, key=left_out_score)
        left = best_row[held]
        left_total = left_total.merge(left)
        out["left_out"][held] = {"chosen": best_setting, **left.summary()}
    best_all = max(table, key=lambda r: objective(_sum(r[1].values())))
    out["left_out_total"] = left_total.summary()
    out["tuned_on_all"] = {"chosen": best_all[0], **_sum(best_all[1].values()).summary()}
    return out


def _sum(rows: Any) -> Scores:
    total = Scores()
    for s in rows:
        total = total.merge(s)
    return total


def _apply(base: Params, setting: dict[str, float]) -> Params:
    params = base
    for key, value in setting.items():
        if key.startswith("weights."):
            weights: dict[str, Any] = {key[8:]: value}
            params = replace(params, weights=replace(params.weights, **weights))
        else:
            fields: dict[str, Any] = {key: int(value) if key == "max_messages" else value}
            params = replace(params, **fields)
    return params


def scale(data: Path, sizes: Sequence[int], way: str, params: Params, targets: int) -> dict[str, Any]:
    """Build time of :func:`plan_request` at each candidate count: ``targets`` replies
    taken from the end of the channels concatenated, each with the ``size`` messages
    before it."""
    channels = json.loads(data.read_text())
    chat = [m for c in channels for m in c["messages"] if not m["system"]]
    out: dict[str, Any] = {}
    for size in sizes:
        times, cpu_times = [], []
        for t in range(len(chat) - targets, len(chat)):
            window = chat[max(0, t - size):t + 1]
            messages = [request_message(m, way) for m in window]
            began, cpu = time.perf_counter(), time.thread_time()
            plan_request(messages, params, (), None, size)
            times.append(time.perf_counter() - began)
            cpu_times.append(time.thread_time() - cpu)
        out[str(size)] = {"wall_ms": percentiles(times), "cpu_ms": percentiles(cpu_times)}
    first = out[str(sizes[0])]["cpu_ms"]["p50"]
    for size in sizes:
        out[str(size)]["cpu_p50_per_candidate_vs_first"] = round(
            out[str(size)]["cpu_ms"]["p50"] / first / (size / sizes[0]), 2)
    return out


@click.command("context")
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=DEFAULT_DATA,
              show_default=True, help="IRC disentanglement JSON (format in its README).")
@click.option("--pool", default=200, show_default=True, help="Earlier messages sent per reply.")
@click.option("--limit", type=int, default=None, help="Stop after this many replies.")
@click.option("--send", "ways", multiple=True, type=click.Choice(WAYS), help="Ways of sending (default: all three).")
@click.option("--http", is_flag=True, help="Also through the real gateway on loopback (recording upstream).")
@click.option("--set", "overrides", multiple=True, help="Parameter override, e.g. threshold=0.35 or weights.time_decay=0.3.")
@click.option("--no-per-channel", is_flag=True, help="Totals only.")
@click.option("--loco", "loco_grid", default=None,
              help='Leave-one-channel-out tuning over a JSON grid, e.g. \'{"threshold": [0.25, 0.3]}\'.')
@click.option("--scale", "scale_sizes", default=None, help="Build time at these candidate counts, e.g. 200,500,1000,2000.")
def command(data: Path, pool: int, limit: int | None, ways: tuple[str, ...], http: bool, overrides: tuple[str, ...],
            no_per_channel: bool, loco_grid: str | None, scale_sizes: str | None) -> None:
    """Parent/thread recall, precision, tokens and build time of context selection on IRC."""
    params = _params(overrides)
    if loco_grid is not None:
        for way in ways or ("ids+ts",):
            click.echo(json.dumps(loco(data, pool, way, json.loads(loco_grid), params), indent=2))
        return
    if scale_sizes is not None:
        sizes = [int(s) for s in scale_sizes.split(",")]
        click.echo(json.dumps(scale(data, sizes, (ways or ("ids+ts",))[0], params, limit or 200), indent=2))
        return
    click.echo(json.dumps(run(data, pool, params, ways or WAYS, http, limit, not no_per_channel), indent=2))
