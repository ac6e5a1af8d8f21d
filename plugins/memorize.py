"""``memorize``: after each chat completion, enqueue a memorization job (issue 5).

Capability: :class:`~gateway.plugin.CompletionObserver` (``on_complete``: runs after
the client has the whole reply, streamed or not, or after it went away: such a job is
marked ``partial``). It reads the client's request from ``call.original`` and the
request span's W3C traceparent from ``call.trace_context`` (the job's span links to it).

Request-path cost: hashing the candidate turns plus one Redis round trip (the enqueue
script: dedupe check + XADD, :mod:`gateway.memorization.queue`). Everything else (redaction,
the memory model, embedding, the store) happens in workers
(:mod:`gateway.memorization.worker`). Off for a call: per key with
``clients[].plugins.memorize.enabled: false``, or per request with the header
``x-memgate-memorize: off`` (``honour_header``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import ClassVar

from gateway.assembly import AssembledReply
from gateway.memorization.capture import capture_exchange, memorize_disabled
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

    async def on_complete(self, call: CallContext, reply: AssembledReply) -> None:
        """Enqueue the exchange's new turns (nothing when every turn was seen before)."""
        await self.enqueue(call, reply, datetime.now(timezone.utc))

    async def enqueue(self, call: CallContext, reply: AssembledReply, now: datetime) -> str | None:
        """The stream entry id of the job, or None (nothing new, disabled, no request)."""
        request = call.original
        if request is None or (self.config.honour_header and memorize_disabled(call.headers)):
            return None
        principal = call.principal
        capture = capture_exchange(
            request, reply, headers=call.headers, user_id=principal.user_id,
            friend_id=principal.friend_id, request_id=call.request_id, received_at=now,
            traceparent=call.trace_context if isinstance(call.trace_context, str) else None,
            max_candidates=self.config.queue.max_candidate_turns,
            max_chars=self.config.redaction.max_chars,
        )
        if not capture.turns:
            return None
        return await self.queue.enqueue(
            capture.header.model_dump_json(), principal.user_id, principal.friend_id,
            [(t.hash, t.model_dump_json()) for t in capture.turns], self.config.queue.seen_ttl_seconds,
        )
