"""``python -m bench context``: relevance-scored context selection on a real group chat.

Data: ``../shared/data/irc/irc-dev.json`` (Ubuntu IRC disentanglement, Kummerfeld et al.,
ACL 2019, CC BY 4.0; format in its README). For each annotated message with a gold parent
(other than itself), the selector (:func:`plugins.context_scoring.select_context`, the
plugin's defaults unless overridden) sees the previous ``--pool`` non-system messages
(speaker, text, time) and keeps up to 20. Reported, averaged over those messages:

- parent recall@20: share of replies whose gold parents are all kept (a parent that is a
  system line or outside the pool counts as missed);
- thread recall: share of the reply's thread (the connected group of gold links) among
  the previous 100 non-system messages that is kept;
- precision: share of the kept messages that are in the reply's thread (replies with
  nothing kept are left out of this mean, and counted in ``empty``);
- tokens sent (cl100k, each message counted as a chat message with its ``name``) vs the
  last-20 and last-50 baselines;
- build time p50/p99 (ms): building the turns and selecting, per reply.

Baselines are computed the same way: the last 20 / last 50 messages.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from plugins.context_scoring import Params, Turn, select_context
from plugins.tokens import FALLBACK_ENCODING, TokenCounter

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "irc" / "irc-dev.json"
THREAD_HORIZON = 100


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

    def summary(self) -> dict[str, Any]:
        return {
            "replies": self.replies,
            "parent_recall_at_20": round(self.parent_hits / max(self.replies, 1), 3),
            "thread_recall": round(self.thread_recall / max(self.thread_n, 1), 3),
            "precision": round(self.precision / max(self.precision_n, 1), 3),
            "mean_kept": round(self.kept / max(self.replies, 1), 2),
            "empty": self.empty,
            "tokens_sent": self.tokens,
        }


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


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def run(data: Path, pool: int, params: Params, limit: int | None = None) -> dict[str, Any]:
    channels = json.loads(data.read_text())
    counter = TokenCounter({"*": FALLBACK_ENCODING})
    encoding = counter.encoding("gpt-4o")
    totals = {name: Scores() for name in ("selected", "last_20", "last_50")}
    per_channel: dict[str, dict[str, Any]] = {}
    times: list[float] = []
    done = 0
    for channel in channels:
        messages = channel["messages"]
        thread_of = _components(messages)
        chat = [m for m in messages if not m["system"]]
        position = {m["id"]: i for i, m in enumerate(chat)}
        tokens = [counter.message(encoding, {"role": "user", "name": m["speaker"], "content": m["text"]}) for m in chat]
        epochs = [_epoch(m["ts"]) for m in chat]
        channel_scores = Scores()
        for t, message in enumerate(chat):
            parents = [p for p in message["parents"] if p != message["id"]]
            if not message["annotated"] or not parents:
                continue
            if limit is not None and done >= limit:
                break
            done += 1
            start = max(0, t - pool)
            window = chat[start:t + 1]
            began = time.perf_counter()
            turns = [Turn(m["speaker"], m["text"], ts=epochs[start + k]) for k, m in enumerate(window)]
            selection = select_context(turns, len(turns) - 1, params)
            times.append(time.perf_counter() - began)
            kept = [window[k]["id"] for k in selection.kept]
            thread = {m["id"] for m in chat[:t] if thread_of[m["id"]] == thread_of[message["id"]]}
            horizon = [m["id"] for m in chat[max(0, t - THREAD_HORIZON):t]]
            cost = sum(tokens[position[i]] for i in kept)
            totals["selected"].add(kept, parents, thread, horizon, cost)
            channel_scores.add(kept, parents, thread, horizon, cost)
            for name, n in (("last_20", 20), ("last_50", 50)):
                recent = [m["id"] for m in chat[max(0, t - n):t]]
                totals[name].add(recent, parents, thread, horizon, sum(tokens[position[i]] for i in recent))
        per_channel[channel["id"]] = channel_scores.summary()
    ordered = sorted(times)
    result = {name: s.summary() for name, s in totals.items()}
    sent = totals["selected"].tokens
    result["token_savings"] = {
        "vs_last_20": round(1 - sent / max(totals["last_20"].tokens, 1), 3),
        "vs_last_50": round(1 - sent / max(totals["last_50"].tokens, 1), 3),
    }
    result["build_ms"] = {
        "p50": round(statistics.median(ordered) * 1000, 3),
        "p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
        "pool": pool,
    }
    result["per_channel"] = per_channel
    return result


def _params(overrides: Sequence[str]) -> Params:
    """``Params`` with ``key=value`` overrides (``threshold=0.35``, ``weights.time_decay=0.3``)."""
    params = Params()
    for item in overrides:
        key, _, raw = item.partition("=")
        value = float(raw)
        if key.startswith("weights."):
            params = replace(params, weights=replace(params.weights, **{key[8:]: value}))
        else:
            cast: Callable[[float], Any] = int if key == "max_messages" else float
            params = replace(params, **{key: cast(value)})
    return params


@click.command("context")
@click.option("--data", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=DEFAULT_DATA,
              show_default=True, help="IRC disentanglement JSON (format in its README).")
@click.option("--pool", default=200, show_default=True, help="Earlier messages the selector sees per reply.")
@click.option("--limit", type=int, default=None, help="Stop after this many replies.")
@click.option("--set", "overrides", multiple=True, help="Parameter override, e.g. threshold=0.35 or weights.time_decay=0.3.")
def command(data: Path, pool: int, limit: int | None, overrides: tuple[str, ...]) -> None:
    """Parent/thread recall, precision, tokens and build time of context selection on IRC."""
    click.echo(json.dumps(run(data, pool, _params(overrides), limit), indent=2))
