"""``memorize``: after each chat completion, enqueue a memorization job (issue 5).

Capabilities: :class:`~gateway.plugin.CompletionObserver` (``on_complete``: runs after
the client has the whole reply, streamed or not, or after it went away: such a job is
marked ``partial``) and a no-op :class:`~gateway.plugin.RequestRewriter` whose only job
is to note the request's trace context and to make the chain keep the client's original
request (``call.original``) for ``on_complete``; it returns the request unchanged.

Request-path cost: hashing the candidate turns plus one Redis round trip (the enqueue
script: dedupe check + XADD, :mod:`gateway.memorization.queue`). Everything else (redaction,
the memory model, embedding, the store) happens in workers
(:mod:`gateway.memorization.worker`). Off for a call: per key with
``clients[].plugins.memorize.enabled: false``, or per request with the header
``x-memgate-memorize: off`` (``honour_header``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, ClassVar

from opentelemetry import trace

from gateway.assembly import AssembledReply
from gateway.chat import ChatRequest
from gateway.memorization.capture import capture_exchange, memorize_disabled, traceparent_of
from gateway.memorization.config import MemorizeConfig
from gateway.memorization.runtime import queue_for
from gateway.plugin import CallContext, Services


class MemorizePlugin:
    """See module docstring."""

    name: ClassVar[str] = "memorize"
    Config = MemorizeConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: MemorizeConfig, services: Services) -> None:
        if services.redis is None:
            raise ValueError("memorize needs Redis (memory: section)")
        self.config = config
        self.queue = queue_for(config, services.redis)

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        """No change; remembers the traceparent of the request's span for the job."""
        traceparent = traceparent_of(trace.get_current_span().get_span_context())
        if traceparent is None and isinstance(call.trace_context, str):
            traceparent = call.trace_context
        call.state[self.name] = {"traceparent": traceparent or call.headers.get("traceparent")}
        return request

    async def on_complete(self, call: CallContext, reply: AssembledReply) -> None:
        """Enqueue the exchange's new turns (nothing when every turn was seen before)."""
        await self.enqueue(call, reply, datetime.now(timezone.utc))

    async def enqueue(self, call: CallContext, reply: AssembledReply, now: datetime) -> str | None:
        """The stream entry id of the job, or None (nothing new, disabled, no request)."""
        request = call.original
        if request is None or (self.config.honour_header and memorize_disabled(call.headers)):
            return None
        state: dict[str, Any] = call.state.get(self.name) or {}
        principal = call.principal
        capture = capture_exchange(
            request, reply, headers=call.headers, user_id=principal.user_id,
            friend_id=principal.friend_id, request_id=call.request_id, received_at=now,
            traceparent=state.get("traceparent") or call.headers.get("traceparent"),
            max_candidates=self.config.queue.max_candidate_turns,
        )
        if not capture.turns:
            return None
        return await self.queue.enqueue(
            capture.header.model_dump_json(), principal.user_id, principal.friend_id,
            [(t.hash, t.model_dump_json()) for t in capture.turns], self.config.queue.seen_ttl_seconds,
        )
