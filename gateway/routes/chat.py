"""``POST /v1/chat/completions``: auth, request phase, upstream call, relay, completion.

The path of one request (docs/architecture.md):

1. read the body (``server.max_body_bytes``), resolve the bearer key to a principal
   (service keys may name the end user; a group key acts as the speaker of the last user
   message, :mod:`gateway.speakers.group`), check the model is allowed;
2. request phase: the principal's plugin chain rewrites a :class:`ChatRequest` under
   the chain's budgets; the messages' ``memgate`` extension field is then removed
   (:func:`~gateway.proxy.wire.without_extension`, on every key, plugins or not); an
   unchanged request without it is forwarded as the client's exact bytes;
3. upstream call on the pooled client of the upstream routed by model; error statuses
   come back unchanged (status, body, rate-limit headers);
4. non-stream: body relayed byte for byte unless a response filter changed it; stream:
   :mod:`gateway.routes.relay`;
5. completion phase: the assembled reply (``cancelled`` if the client left) goes to
   completion observers in the background.

A client disconnect at any point cancels the handler task (:class:`DisconnectWatcher`),
which closes the upstream response and frees its pool slot.

Response headers added: ``x-memgate-overhead-ms`` (gateway time: total minus upstream
time; for streams, up to the response head) and ``x-memgate-degraded`` when a plugin
failed open.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import SpanKind

from gateway.proxy.asgi import Send, send_bytes
from gateway.proxy.assembly import ReplyAssembler, reply_from_completion
from gateway.proxy.handler import Incoming
from gateway.proxy.upstream import relay_headers
from gateway.proxy.wire import ChatRequest, without_extension
from gateway.routes.model_route import SSE_HEADERS, ModelRoute, traceparent_of_span
from gateway.routes.model_route import Prepared as RoutePrepared
from gateway.routes.relay import RelayState, error_event, relay_events, relay_passthrough
from gateway.runtime.principal import Principal
from gateway.speakers.group import resolve_speaker

__all__ = ["ChatCompletions"]

log = logging.getLogger("memgate.proxy")


@dataclass
class Prepared(RoutePrepared):
    """The request as it will be sent upstream."""

    strip_usage: bool


class ChatCompletions(ModelRoute):
    """The raw ASGI handler for both ``/v1/chat/completions`` and ``/chat/completions``."""

    route = "/v1/chat/completions"
    endpoint = "chat.completions"

    async def handle(self, incoming: Incoming, send: Send) -> None:
        headers = incoming.headers
        context = self._telemetry.extract(headers)
        with self._telemetry.span("chat", {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"},
                                  kind=SpanKind.SERVER, context=context) as span:
            prepared = await self._prepare(incoming.body, headers, incoming.started, traceparent_of_span(span, headers))
            self.describe(span, "chat", prepared)
            state = RelayState(
                assembler=ReplyAssembler(self._config.chain.max_capture_bytes)
                if prepared.chain.observers or span.is_recording()
                else None
            )
            incoming.responded = True  # from here on, failures are answered by _forward
            try:
                await self._forward(prepared, send, state, span)
            except asyncio.CancelledError:
                if incoming.watcher.fired:
                    if span.is_recording():
                        span.set_attribute("memgate.cancelled", True)
                    self.complete(prepared, state, cancelled=True)
                raise

    def route_principal(self, principal: Principal, body: dict[str, Any]) -> Principal:
        """A group key's call runs as the speaker answered (:func:`gateway.speakers.group.resolve_speaker`)."""
        return resolve_speaker(principal, body)

    async def _prepare(
        self, raw: bytes, headers: dict[str, str], started: float, traceparent: str | None
    ) -> Prepared:
        accepted = await self.accept(raw, headers)
        body, chain, stream = accepted.body, accepted.chain, accepted.stream
        parsed, unparsable = _parse_request(body) if (chain.rewriters or chain.observers) else (None, None)
        call = self.call_context(accepted, parsed, headers, started, traceparent)
        if unparsable:
            call.degrade("chain", f"unparsable_request:{unparsable}")
        await self.load_settings(call, chain)
        out_body: dict[str, Any] | None = None
        if chain.rewriters and parsed is not None:
            result = await chain.rewrite(call, parsed)
            out_body = None if result is parsed else result.to_body()
        stripped = without_extension((out_body if out_body is not None else body).get("messages"))
        if stripped is not None:  # the gateway's extension field never goes upstream, plugins or not
            out_body = {**(out_body if out_body is not None else body), "messages": stripped}
        strip_usage = False
        if stream and self._config.upstream.request_stream_usage:
            options = body.get("stream_options")
            if not (isinstance(options, dict) and options.get("include_usage")):
                base = out_body if out_body is not None else body
                out_body = {
                    **base,
                    "stream_options": {**(options if isinstance(options, dict) else {}), "include_usage": True},
                }
                strip_usage = True
        data = raw if out_body is None else json.dumps(out_body, ensure_ascii=False).encode()
        return Prepared(call, chain, accepted.model, stream, data, strip_usage)

    async def _forward(self, prepared: Prepared, send: Send, state: RelayState, span: Any) -> None:
        await self.forward(
            prepared, send, state, span, path="/chat/completions",
            stream=lambda response, overhead: self._stream(prepared, response, send, state, overhead),
            reply=lambda response, body, up_started: self._reply(prepared, response, body, send, up_started, state),
            error_event=error_event, usage_keys=("prompt_tokens", "completion_tokens"),
        )

    async def _reply(
        self,
        prepared: Prepared,
        response: Any,
        body: bytes,
        send: Send,
        up_started: float,
        state: RelayState,
    ) -> None:
        """Non-stream reply (or a stream call the upstream answered with an error)."""
        call, chain = prepared.call, prepared.chain
        parsed: dict[str, Any] | None = None
        if response.status_code == 200 and (chain.response_filters or chain.observers):
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            if parsed is not None and chain.response_filters:
                filtered = await chain.filter_response(call, parsed)
                if filtered is not parsed:
                    body = json.dumps(filtered, ensure_ascii=False).encode()
                    parsed = filtered
        up_time = time.perf_counter() - up_started
        overhead = (time.perf_counter() - call.started) - up_time
        headers = relay_headers(response.raw_headers)
        state.first_byte_at = time.perf_counter()
        await send_bytes(send, response.status_code, body, [*headers, *self.meta_headers(call, overhead)])
        if parsed is not None and chain.observers:
            chain.complete(call, reply_from_completion(parsed))

    async def _stream(
        self, prepared: Prepared, response: Any, send: Send, state: RelayState, overhead: float
    ) -> None:
        call, chain = prepared.call, prepared.chain
        headers = [
            *(h for h in relay_headers(response.raw_headers) if h[0] != b"content-type"),
            *SSE_HEADERS,
            *self.meta_headers(call, overhead),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        state.first_byte_at = time.perf_counter()
        if chain.stream_filters or prepared.strip_usage:
            await relay_events(call, chain, response, send, state, strip_usage=prepared.strip_usage)
        else:
            await relay_passthrough(response, send, state)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        self.complete(prepared, state, cancelled=False)



def _parse_request(body: dict[str, Any]) -> tuple[ChatRequest | None, str | None]:
    """``(the body as a ChatRequest, None)``, or ``(None, error type)`` when it does not fit:
    the upstream, not the gateway, then answers for the malformed request."""
    try:
        return ChatRequest.model_validate(body), None
    except ValueError as exc:
        return None, type(exc).__name__
