"""``context_selection``: relevance-scored context for long group chats (seed 004).

Group bots (Lark, QQ/Koishi, Discord, Slack) send the recent channel as ``messages``;
topics interleave and most of it is unrelated to the message being answered. This
request rewriter keeps only the earlier messages relevant to the last user message
(:mod:`plugins.context_scoring`: seed 004's ``RelevanceScorer`` weights, threshold and
limit), so the bot answers with less noise and fewer tokens. Off by default; enable it per
key (``clients[].plugins.context_selection.enabled: true``) for group bots.

What goes upstream:

- every ``system`` / ``developer`` message, in place and unchanged (the client's system
  prefix stays byte-identical);
- the earlier messages selected, in their original order; an assistant message with
  ``tool_calls`` and the ``tool`` messages answering it are one unit, kept or dropped
  together (providers reject a tool result without its call);
- the last user message and everything after it (the current turn);
- each message's optional ``memgate`` extension field removed, every other field as sent.

Signals a group bot can send, all optional, independent and OpenAI-compatible (the
gateway removes the extension before the request goes upstream, on every key: the core's
:func:`gateway.proxy.wire.without_extension`):

- the speaker is the message's ``name`` (else its role);
- mentions are parsed from the text (``@nick``, ``nick:`` / ``nick,`` at the start,
  CJK names and punctuation included: ``@小明``, ``小明：``); the bot's own names
  (``bot_names``) mean the assistant;
- ``"memgate": {"id": str, "reply_to": str, "ts": ISO-8601 with offset,
  "mentions": [str]}`` on any message, every field optional (``{"ts": ...}`` alone is
  fine): its id, the id of the message it replies to, when it was sent, and the speakers
  it mentions explicitly. An explicit ``reply_to`` is a strong link; its absence says
  nothing, and the inferred links are computed either way
  (:mod:`plugins.context_scoring`). Without times the decay is by position and there is
  no time window.

A malformed ``memgate`` field is the client's error: a 400 naming the field
(:class:`~gateway.chain.sdk.RequestRejected`), nothing sent upstream.

Never an empty context (seed 004 §5.1's fallback): when no earlier message reaches the
threshold, the ``fallback_messages`` most recent go (``Plan.fallback``:
``nothing_relevant``).

Fallback (seed 004 §3.3/§10.1): a selection slower than ``build_budget_ms`` (``overrun``), any error or the chain's hook
budget: the request goes with the most recent ``fallback_messages`` (seed: 10) earlier
messages instead, never an empty context (system messages and the current turn always
go), and the reason is counted and named in ``x-memgate-degraded``
(``context_selection:<reason>``) through the chain's :class:`~gateway.chain.sdk.Skipped` /
``request_fallback`` rules.

Usage records (seed 004 §4.1 ``ContextUsageRecord``; ``usage_records``, off by default):
one JSON record per call on a capped Redis Stream in the plugin's key space
(:meth:`~gateway.chain.sdk.Services.store`), written after the reply
(:class:`RecordingContextSelection`), exported as JSONL by
``python -m plugins.context_usage_export``, a user's records deleted on admin forget.

Metrics (seed 004 §8.1): ``memgate_context_build_seconds`` (build time),
``memgate_context_kept_messages`` (messages kept per request),
``memgate_context_mean_relevance`` (mean score of the kept messages),
``memgate_context_tokens_total{stage=before|after}`` (token savings rate:
``1 - after / before``), ``memgate_context_builds_total{outcome=selected|fallback}`` and
``memgate_context_fallbacks_total{reason}`` (fallback rate: fallbacks / builds).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, ClassVar

from pydantic import Field

from gateway.chain.sdk import (
    FALLBACK_ENCODING,
    AssembledReply,
    CallContext,
    ChatRequest,
    CounterFamily,
    HistogramFamily,
    PluginConfig,
    PluginStore,
    RequestRejected,
    Services,
    Skipped,
    message_text,
)
from plugins.context_scoring import MAX_TEXT_CHARS, Params, Selection, Turn, Weights, select_context

__all__ = ["ContextSelection", "ContextSelectionConfig", "ContextWeights", "InvalidExtension", "Plan",
           "RecordingContextSelection", "export_usage", "plan_request", "usage_record"]

log = logging.getLogger("memgate.plugins.context_selection")

#: The plugin's metric families (seed 004 §8.1), declared when it is built.
METRICS = (
    HistogramFamily("memgate_context_build_seconds", "context_selection: time to score and select one request's "
                    "context, seconds (seed 004 §8.1 avg_context_build_time)."),
    HistogramFamily("memgate_context_kept_messages", "context_selection: earlier messages kept per request "
                    "(seed 004 §8.1 avg_context_message_count).", buckets=(0, 1, 2, 3, 5, 8, 10, 15, 20, 30, 50, 100)),
    HistogramFamily("memgate_context_mean_relevance", "context_selection: mean relevance score of the kept messages "
                    "per request (seed 004 §8.1 avg_relevance_score).",
                    buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
    CounterFamily("memgate_context_tokens_total", "context_selection: prompt tokens of the messages before and after "
                  "selection (token savings rate = 1 - after/before; seed 004 §8.1).", ("stage",)),
    CounterFamily("memgate_context_builds_total", "context_selection: requests handled, by outcome "
                  "(selected, fallback).", ("outcome",)),
    CounterFamily("memgate_context_fallbacks_total", "context_selection: fallbacks to the most recent messages, by "
                  "reason (fallback rate = fallbacks / builds; seed 004 §10.2).", ("reason",)),
)
#: :class:`RecordingContextSelection`'s own counter.
USAGE_RECORDS = CounterFamily("memgate_context_usage_records_total",
                              "context_selection: ContextUsageRecords written to the usage stream.")

#: The per-message extension field (removed before the request goes upstream).
EXTENSION = "memgate"
SYSTEM_ROLES = ("system", "developer")
#: Messages above which the selection runs in a worker thread (about 2 ms of CPU at 200).
THREAD_ABOVE = 200
#: Characters of text above which selection and token counting run in a worker thread.
THREAD_CHARS = 64 * 1024


def _chars(messages: Sequence[dict[str, Any]]) -> int:
    """Characters of the messages' string contents (list parts counted by their text)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(p.get("text", "")) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return total


class ContextWeights(PluginConfig):
    """Signal weights (seed 004 §3.2 ``RelevanceScorer.weights``, §6.1)."""

    reply_chain: float = Field(0.4, ge=0, le=1, description="Reply chain (explicit, addressed and inferred links); seed 0.4.")
    user_continuity: float = Field(0.15, ge=0, le=1, description="Same speaker as the target; seed 0.15.")
    time_decay: float = Field(0.25, ge=0, le=1, description="Recency (time, else position); seed 0.2, 0.25 tuned "
                              "leave-one-channel-out on the IRC dev channels (python -m bench context --loco).")
    mention_relation: float = Field(0.15, ge=0, le=1, description="Target mentions the speaker or is mentioned; seed 0.15.")
    keyword_overlap: float = Field(0.1, ge=0, le=1, description="IDF-weighted shared terms (CJK bigrams); seed 0.1.")


class ContextSelectionConfig(PluginConfig):
    weights: ContextWeights = Field(default_factory=ContextWeights, description="Signal weights (seed 004 §3.2).")
    relevance_threshold: float = Field(0.33, ge=0, le=1, description="Least score kept; seed 004 §6.1: 0.3, 0.33 "
                                       "tuned with time_decay 0.25 and time_half_life_s 1200.")
    max_context_messages: int = Field(20, ge=1, le=1000, description="Most earlier messages kept; seed 004 §6.1: 20.")
    time_window_s: float = Field(
        86_400.0, gt=0, description="Earlier messages older than this (by memgate.ts) are dropped; seed 004 "
        "time_window_hours 24.")
    time_half_life_s: float = Field(
        1200.0, gt=0, description="Half-life of the time decay, seconds (not in the seed: a reply's parent is a "
        "median of 3 messages / about a minute back in the IRC benchmark, a thread spans 10-20 minutes; 20 min "
        "tuned leave-one-channel-out on its dev channels).")
    position_half_life: float = Field(
        60.0, gt=0, description="Half-life of the decay in messages when times are missing (not in the seed; tuned "
        "leave-one-channel-out on the IRC dev channels sent without times).")
    fallback_messages: int = Field(10, ge=1, le=1000, description="Most recent earlier messages sent on fallback, "
                                   "and when no earlier message scores as relevant (never an empty context); "
                                   "seed 004 §5.1: 10.")
    build_budget_ms: float = Field(
        50.0, gt=0, description="Selections slower than this fall back (overrun). The seed's 5 s timeout is for a "
        "service with database reads; here the work is pure CPU, ~2 ms for 200 messages.")
    max_candidates: int = Field(
        500, ge=1, le=100_000, description="Only the most recent earlier messages (tool pairs count as one) are "
        "scored; older ones are dropped (seed 004 §3.3 takes the 50 most recent plus 15 of the reply thread; "
        "500 keeps the selection within ~10 ms).")
    bot_names: list[str] = Field(default_factory=list, description="Names the bot is mentioned by (mean the assistant).")
    usage_records: bool = Field(
        False, description="Record a ContextUsageRecord per request (trigger, kept ids with scores, the reply) on a "
        "capped Redis Stream, to tune weights from real traffic later (seed 004 §4.1, §11.1); needs memory's Redis.")
    usage_stream: str = Field("context_usage", pattern=r"^[A-Za-z0-9_.-]{1,64}$",
                              description="Name of the usage records' Redis Stream in the plugin's key space "
                              "(<memory.key_prefix>:plugin:context_selection:<usage_stream>).")
    usage_max_records: int = Field(100_000, ge=100, description="Approximate cap of the stream (XADD MAXLEN ~).")
    usage_max_reply_chars: int = Field(4000, ge=0, description="Characters of the reply kept in a record.")


class InvalidExtension(ValueError):
    """A message's ``memgate`` field does not have the documented shape (``param`` names
    the field, e.g. ``messages.3.memgate.ts``)."""

    def __init__(self, param: str, problem: str) -> None:
        super().__init__(f"{param}: {problem}")
        self.param = param


@dataclass(frozen=True)
class Plan:
    """What to send: ``messages`` (extension removed), the selection when one was made,
    how many earlier units were candidates, the dropped message indices; for usage
    records: the target's index, the kept message indices, each candidate message's score
    by index, the message refs (``memgate.id`` or ``#index``) and the fallback reason."""

    messages: list[dict[str, Any]]
    selection: Selection | None
    candidates: int
    dropped: tuple[int, ...]
    target: int | None = None
    kept: tuple[int, ...] = ()
    scores: dict[int, float] = field(default_factory=dict)
    refs: dict[int, str] = field(default_factory=dict)
    fallback: str | None = None


def _strip(message: dict[str, Any]) -> dict[str, Any]:
    """The message without the extension field (the same object when it has none)."""
    if EXTENSION not in message:
        return message
    return {k: v for k, v in message.items() if k != EXTENSION}


def _timestamp(value: Any, param: str) -> float:
    if not isinstance(value, str):
        raise InvalidExtension(param, "must be an ISO-8601 string with a UTC offset")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidExtension(param, f"not ISO-8601: {value[:40]!r}") from None
    if parsed.tzinfo is None:
        raise InvalidExtension(param, "needs a UTC offset (e.g. +08:00 or Z)")
    return parsed.timestamp()


def _turn(message: dict[str, Any], index: int, bot_names: Sequence[str]) -> Turn:
    """The scorer's view of one message (name, text, extension).

    Raises:
        InvalidExtension: a malformed ``memgate`` field.
    """
    role = message.get("role")
    name = message.get("name")
    speaker = name if isinstance(name, str) and name.strip() else role if isinstance(role, str) else None
    if role == "assistant" and not (isinstance(name, str) and name.strip()):
        speaker = "assistant"
    text = message_text(message)
    ext = message.get(EXTENSION)
    if ext is None:
        return Turn(speaker, text, role=role if isinstance(role, str) else "user")
    base = f"messages.{index}.{EXTENSION}"
    if not isinstance(ext, dict):
        raise InvalidExtension(base, "must be an object")
    unknown = set(ext) - {"id", "reply_to", "ts", "mentions"}
    if unknown:
        raise InvalidExtension(f"{base}.{sorted(unknown)[0]}", "unknown field")
    ident = ext.get("id")
    if ident is not None and (not isinstance(ident, str) or not ident):
        raise InvalidExtension(f"{base}.id", "must be a non-empty string")
    reply_to = ext.get("reply_to")
    if reply_to is not None and not isinstance(reply_to, str):
        raise InvalidExtension(f"{base}.reply_to", "must be a string (a message id)")
    ts = _timestamp(ext["ts"], f"{base}.ts") if ext.get("ts") is not None else None
    mentions = ext.get("mentions") or []
    if not isinstance(mentions, list) or not all(isinstance(m, str) for m in mentions):
        raise InvalidExtension(f"{base}.mentions", "must be a list of names")
    bots = {b.casefold() for b in bot_names}
    resolved = tuple("assistant" if m.casefold() in bots else m for m in mentions)
    return Turn(speaker, text, role=role if isinstance(role, str) else "user", id=ident, reply_to=reply_to,
                ts=ts, mentions=resolved)


def _units(messages: Sequence[dict[str, Any]], end: int) -> list[list[int]]:
    """Earlier non-system messages (``messages[:end]``) as units: one message, or an
    assistant message with ``tool_calls`` and the ``tool`` messages after it."""
    units: list[list[int]] = []
    for i in range(end):
        role = messages[i].get("role")
        if role in SYSTEM_ROLES:
            continue
        if role == "tool" and units and messages[units[-1][0]].get("tool_calls"):
            units[-1].append(i)
        else:
            units.append([i])
    return units


def _bot_mentions(turn: Turn, bot_names: Sequence[str]) -> Turn:
    """``turn`` with ``assistant`` among its mentions when its text addresses the bot by
    one of ``bot_names`` (``@name`` anywhere or ``name`` first, case-insensitive)."""
    if not bot_names or "assistant" in turn.mentions:
        return turn
    low = turn.text[:MAX_TEXT_CHARS].casefold().lstrip()
    for name in bot_names:
        key = name.casefold()
        if key and (low.startswith(key) or "@" + key in low or "＠" + key in low):
            return replace(turn, mentions=(*turn.mentions, "assistant"))
    return turn


def plan_request(messages: Sequence[dict[str, Any]], params: Params, bot_names: Sequence[str] = (),
                 recent: int | None = None, max_candidates: int = 500, floor: int = 10) -> Plan:
    """The messages to send (module docstring). ``recent``: instead of scoring, keep the
    ``recent`` most recent earlier units (the fallback). Only the ``max_candidates`` most
    recent earlier units are scored; older ones are dropped. When the selection keeps
    nothing while earlier units exist, the ``floor`` most recent go instead (seed 004
    §5.1/§10.1: never an empty context; ``Plan.fallback`` is ``nothing_relevant``).

    Raises:
        InvalidExtension: a malformed ``memgate`` field (not when ``recent`` is given:
            the fallback only removes the field).
    """
    target = None
    empty: str | None = None
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            target = i
            break
    if target is None:
        return Plan([_strip(m) for m in messages], None, 0, ())
    all_units = _units(messages, target)
    units = all_units[-max_candidates:]
    selection: Selection | None = None
    if recent is not None:
        kept_units = units[-recent:] if recent else []
    else:
        turns = [_bot_mentions(_turn(messages[u[0]], u[0], bot_names), bot_names) for u in units]
        goal = _bot_mentions(_turn(messages[target], target, bot_names), bot_names)
        for i in range(target + 1, len(messages)):
            _turn(messages[i], i, bot_names)  # validate every extension
        selection = select_context([*turns, goal], len(turns), params)
        kept_units = [units[k] for k in selection.kept]
        if not kept_units and units and floor > 0:
            kept_units, empty = units[-floor:], "nothing_relevant"
    keep = {i for u in kept_units for i in u}
    out: list[dict[str, Any]] = []
    dropped: list[int] = []
    for i, message in enumerate(messages):
        if i >= target or message.get("role") in SYSTEM_ROLES or i in keep:
            out.append(_strip(message))
        else:
            dropped.append(i)
    scores = {units[k][0]: v for k, v in selection.scores.items()} if selection is not None else {}
    return Plan(out, selection, len(all_units), tuple(dropped), target, tuple(sorted(u[0] for u in kept_units)), scores,
                _refs(messages), empty)


def _refs(messages: Sequence[dict[str, Any]]) -> dict[int, str]:
    """Index -> the message's ``memgate.id`` (a string), else ``#<index>``."""
    refs: dict[int, str] = {}
    for i, message in enumerate(messages):
        ext = message.get(EXTENSION)
        ident = ext.get("id") if isinstance(ext, dict) else None
        refs[i] = ident if isinstance(ident, str) and ident else f"#{i}"
    return refs


def usage_record(call: CallContext, plan: Plan, reply_text: str, now: datetime) -> dict[str, Any]:
    """Seed 004's ``ContextUsageRecord`` for one call (§4.1; ``user_feedback`` and
    ``success_indicator`` are left for later): message refs are the client's
    ``memgate.id``, else ``#<index in messages>``."""
    refs = plan.refs
    return {
        "context_id": call.request_id,
        "key_id": call.principal.key_id,
        "user_id": call.principal.user_id,
        "friend_id": call.principal.friend_id,
        "trigger_message_id": refs.get(plan.target) if plan.target is not None else None,
        "context_message_ids": [refs[i] for i in plan.kept],
        "relevance_scores": {refs[i]: round(score, 4) for i, score in plan.scores.items()},
        "fallback": plan.fallback,
        "candidates": plan.candidates,
        "llm_response": reply_text,
        "created_at": now.isoformat(),
    }


class ContextSelection:
    """See module docstring. With ``usage_records`` on, the instance is a
    :class:`RecordingContextSelection` (a completion observer too): without it the
    plugin costs no reply capture."""

    def __new__(cls, config: ContextSelectionConfig, services: Services) -> ContextSelection:
        if cls is ContextSelection and config.usage_records:
            return super().__new__(RecordingContextSelection)
        return super().__new__(cls)

    name: ClassVar[str] = "context_selection"
    Config = ContextSelectionConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = (
        "auto_recall", "hybrid_injection", "personalization", "tool_splice", "token_budget")

    def __init__(self, config: ContextSelectionConfig, services: Services) -> None:
        self.config = config
        w = config.weights
        self.params = Params(
            weights=Weights(w.reply_chain, w.user_continuity, w.time_decay, w.mention_relation, w.keyword_overlap),
            threshold=config.relevance_threshold,
            max_messages=config.max_context_messages,
            window_s=config.time_window_s,
            half_life_s=config.time_half_life_s,
            half_life_turns=config.position_half_life,
        )
        self.counter = services.token_counter({"*": FALLBACK_ENCODING})
        self.encoding = self.counter.encoding("*")
        self.metrics = services.metrics
        self.metrics.declare(*METRICS)

    def warm(self) -> None:
        """:class:`~gateway.chain.sdk.Warmup`: one token count with the plugin's encoding."""
        self.counter.warm()

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        started = time.perf_counter()
        messages = request.messages
        try:
            if len(messages) > THREAD_ABOVE or _chars(messages) > THREAD_CHARS:
                plan = await asyncio.to_thread(plan_request, messages, self.params, self.config.bot_names, None,
                                               self.config.max_candidates, self.config.fallback_messages)
            else:
                plan = plan_request(messages, self.params, self.config.bot_names, None, self.config.max_candidates,
                                    self.config.fallback_messages)
        except InvalidExtension as exc:
            raise RequestRejected(f"invalid memgate extension: {exc}", param=exc.param) from None
        elapsed = time.perf_counter() - started
        self.metrics.observe("memgate_context_build_seconds", elapsed)
        if elapsed * 1000 > self.config.build_budget_ms:
            raise Skipped("overrun")
        self.metrics.inc("memgate_context_builds_total", outcome="selected")
        selection = plan.selection
        if selection is not None:
            self.metrics.observe("memgate_context_kept_messages", len(plan.kept))
            if selection.kept:
                self.metrics.observe("memgate_context_mean_relevance", selection.mean_score)
        if plan.dropped:
            if _chars(messages) > THREAD_CHARS:
                await asyncio.to_thread(self._count_tokens, messages, plan)
            else:
                self._count_tokens(messages, plan)
        call.state[self.name] = plan
        if not plan.dropped and all(a is b for a, b in zip(plan.messages, messages, strict=True)):
            return request
        return request.model_copy(update={"messages": plan.messages})

    def request_fallback(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        """The most recent ``fallback_messages`` earlier messages, system messages and the
        current turn, extension removed (never raises: counted by the chain if it did)."""
        reason = next((d.partition(":")[2] for d in reversed(call.degraded) if d.startswith(self.name + ":")), "error")
        self.metrics.inc("memgate_context_builds_total", outcome="fallback")
        self.metrics.inc("memgate_context_fallbacks_total", reason=reason.split(":")[0])
        plan = replace(plan_request(request.messages, self.params, recent=self.config.fallback_messages),
                       fallback=reason)
        if _chars(request.messages) <= THREAD_CHARS:  # no tokenizing of huge prompts on the event loop
            self._count_tokens(request.messages, plan)
        call.state[self.name] = plan
        return request.model_copy(update={"messages": plan.messages})

    def _count_tokens(self, messages: Sequence[dict[str, Any]], plan: Plan) -> None:
        """Prompt tokens of the messages before and after (cl100k, OpenAI's chat message
        counting; :mod:`gateway.runtime.tokens`). Only requests that dropped something count (a
        request that keeps everything saves nothing and costs no tokenizing); the fallback
        skips prompts over :data:`THREAD_CHARS` (it must not block the event loop)."""
        before = sum(self.counter.message(self.encoding, m) for m in messages)
        dropped = sum(self.counter.message(self.encoding, messages[i]) for i in plan.dropped)
        self.metrics.inc("memgate_context_tokens_total", before, stage="before")
        self.metrics.inc("memgate_context_tokens_total", before - dropped, stage="after")


class RecordingContextSelection(ContextSelection):
    """:class:`ContextSelection` that also writes a :func:`usage_record` per call on the
    capped stream ``usage_stream`` (one XADD with ``MAXLEN ~ usage_max_records``, after
    the client has the reply) and drops a user's records on forget."""

    def __init__(self, config: ContextSelectionConfig, services: Services) -> None:
        super().__init__(config, services)
        self.store = services.store(self.name)
        self.metrics.declare(USAGE_RECORDS)

    async def on_complete(self, call: CallContext, reply: AssembledReply) -> None:
        plan = call.state.get(self.name)
        if not isinstance(plan, Plan) or plan.target is None:
            return
        record = usage_record(call, plan, reply.text[:self.config.usage_max_reply_chars], datetime.now(UTC))
        await self.store.stream_add(
            self.config.usage_stream, {"record": json.dumps(record, ensure_ascii=False)},
            max_len=self.config.usage_max_records,
        )
        self.metrics.inc("memgate_context_usage_records_total")

    async def forget_user(self, user_id: str) -> None:
        """Delete ``user_id``'s records (a scan of the stream, 1,000 entries per read)."""
        after: str | None = None
        while True:
            rows = await self.store.stream_range(self.config.usage_stream, after=after, count=1000)
            if not rows:
                return
            doomed = [entry for entry, fields in rows if _record_user(fields) == user_id]
            if doomed:
                await self.store.stream_delete(self.config.usage_stream, doomed)
            after = rows[-1][0]


def _record_user(fields: Mapping[str, str]) -> str | None:
    try:
        return json.loads(fields.get("record", "")).get("user_id")
    except (TypeError, ValueError, AttributeError):
        return None


async def export_usage(store: PluginStore, stream: str, count: int = 1000) -> AsyncIterator[str]:
    """Every record on the plugin's ``stream`` (``store``: the plugin's
    :class:`~gateway.chain.sdk.PluginStore`) as JSONL lines, oldest first, read ``count``
    at a time."""
    after: str | None = None
    while True:
        rows = await store.stream_range(stream, after=after, count=count)
        if not rows:
            return
        for _, fields in rows:
            raw = fields.get("record")
            if raw is not None:
                yield raw + "\n"
        after = rows[-1][0]
