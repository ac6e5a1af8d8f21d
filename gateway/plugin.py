"""The plugin API: small capability protocols, the per-call context, shared services.

A plugin is a class with ``name``, a pydantic ``Config`` model and a constructor
``Plugin(config, services)``; it implements only the capabilities it needs:

- :class:`RequestRewriter` ``rewrite_request(call, request) -> ChatRequest`` (values in,
  new value out; never mutate the input),
- :class:`ResponseFilter` ``filter_response(call, body) -> dict`` for non-stream
  replies (may make further upstream calls through ``call.upstream``),
- :class:`StreamFilter` ``on_chunk(call, chunk) -> Sequence[Chunk]`` and the async
  generator ``on_stream_end(call)`` (may hold back, rewrite or add chunks, and may continue
  the stream with further upstream calls),
- :class:`CompletionObserver` ``on_complete(call, reply)`` after the client has the
  whole reply.

The chain (``gateway.chain``) owns every loop, budget and failure rule. Per-call state
lives in ``call.state[plugin.name]``, never on the plugin instance (shared by all calls).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from gateway.proxy.assembly import AssembledReply
from gateway.proxy.wire import ChatRequest, Chunk
from gateway.proxy.principal import Principal

if TYPE_CHECKING:
    from gateway.proxy.upstream import UpstreamCaller


class PluginConfig(BaseModel):
    """Base for a plugin's ``Config``: frozen, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass
class CallContext:
    """Everything one request carries through the chain.

    Attributes:
        request_id: the gateway's id for this call (``x-request-id`` of the reply).
        principal: the caller, after any service-key end-user naming.
        original: the request as the client sent it (what fail-open forwards).
        headers: the client's request headers (lower-case names).
        upstream: makes further upstream calls on this call's behalf (tool loops).
        state: per-plugin scratch space, ``state[plugin.name]``.
        degraded: ``plugin:reason`` entries; sent as ``x-memgate-degraded``.
        annotations: what plugins report to a client that asked to see it (the
            ``memgate`` field of the reply; seed 002 "show tool calls").
        started: ``time.perf_counter()`` when the request arrived.
    """

    request_id: str
    principal: Principal
    original: ChatRequest | None
    headers: dict[str, str]
    upstream: "UpstreamCaller | None" = None
    state: dict[str, Any] = field(default_factory=dict)
    degraded: list[str] = field(default_factory=list)
    annotations: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    trace_context: Any = None

    def deadline_left(self, deadline_s: float) -> float:
        """Seconds left of a phase deadline measured from :attr:`started`."""
        return deadline_s - (time.perf_counter() - self.started)


@runtime_checkable
class RequestRewriter(Protocol):
    name: ClassVar[str]

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest: ...


@runtime_checkable
class ResponseFilter(Protocol):
    name: ClassVar[str]

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class StreamFilter(Protocol):
    name: ClassVar[str]

    async def on_chunk(self, call: CallContext, chunk: Chunk) -> Sequence[Chunk]: ...

    def on_stream_end(self, call: CallContext) -> AsyncIterator[Chunk]: ...


@runtime_checkable
class CompletionObserver(Protocol):
    name: ClassVar[str]

    async def on_complete(self, call: CallContext, reply: AssembledReply) -> None: ...


@dataclass(frozen=True)
class Services:
    """Shared resources handed to plugin constructors (built once in ``create_app``).

    Attributes:
        redis: the async Redis client (None when memory is not configured).
        memory: the memory store (``gateway.memory``), None if unavailable.
        upstreams: the upstream pool, for plugins that call a model themselves.
        metrics: the gateway's counters (``gateway.telemetry.Metrics``).
        extras: anything else later subsystems register (queue, embedder, tokenizer).
    """

    redis: Any = None
    memory: Any = None
    upstreams: Any = None
    metrics: Any = None
    extras: dict[str, Any] = field(default_factory=dict)
