"""``POST /v1/chat/completions``: auth, request phase, upstream call, relay, completion.

The path of one request (docs/architecture.md):

1. read the body (``server.max_body_bytes``), resolve the bearer key to a principal
   (service keys may name the end user), check the model is allowed;
2. request phase: the principal's plugin chain rewrites a :class:`ChatRequest` under
   the chain's budgets; an unchanged request is forwarded as the client's exact bytes;
3. upstream call on the pooled client of the upstream routed by model; error statuses
   come back unchanged (status, body, rate-limit headers);
4. non-stream: body relayed byte for byte unless a response filter changed it; stream:
   :mod:`gateway.proxy.relay`;
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
import os
import time
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import SpanKind

from gateway.chain import ChainFactory, PluginChain
from gateway.config import GatewayConfig
from gateway.errors import InvalidRequest, MemgateError, PermissionDenied
from gateway.json_input import parse_json_object
from gateway.proxy.asgi import Send, send_bytes, send_error
from gateway.proxy.assembly import ReplyAssembler, reply_from_completion
from gateway.proxy.auth import Authenticator, resolve_end_user
from gateway.proxy.handler import Incoming, ProxyRoute
from gateway.proxy.relay import RelayState, error_event, relay_events, relay_passthrough
from gateway.proxy.upstream import UpstreamCaller, UpstreamPool, forward_headers, relay_headers
from gateway.proxy.wire import ChatRequest
from gateway.sdk import CallContext
from gateway.settings import SettingsService
from gateway.telemetry import Telemetry

__all__ = ["ChatCompletions"]

log = logging.getLogger("memgate.proxy")

SSE_HEADERS = (
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


@dataclass
class Prepared:
    """The request as it will be sent upstream."""

    call: CallContext
    chain: PluginChain
    model: str
    stream: bool
    body: bytes
    strip_usage: bool


class ChatCompletions(ProxyRoute):
    """The raw ASGI handler for both ``/v1/chat/completions`` and ``/chat/completions``."""

    route = "/v1/chat/completions"
    endpoint = "chat.completions"

    def __init__(
        self,
        config: GatewayConfig,
        auth: Authenticator,
        chains: ChainFactory,
        upstreams: UpstreamPool,
        telemetry: Telemetry,
        settings: SettingsService | None = None,
    ) -> None:
        super().__init__(config, auth, upstreams, telemetry)
        self._chains = chains
        self._settings = settings if settings is not None else SettingsService(config.settings, None)

    async def handle(self, incoming: Incoming, send: Send) -> None:
        headers = incoming.headers
        context = self._telemetry.extract(headers)
        with self._telemetry.span("chat", {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"},
                                  kind=SpanKind.SERVER, context=context) as span:
            prepared = await self._prepare(incoming.body, headers, incoming.started, _traceparent(span, headers))
            if span.is_recording():
                principal = prepared.call.principal
                span.update_name(f"chat {prepared.model}")
                span.set_attributes({
                    "gen_ai.request.model": prepared.model,
                    "memgate.user_id": principal.user_id,
                    "memgate.friend_id": principal.friend_id,
                    "memgate.key_id": principal.key_id,
                    "memgate.stream": prepared.stream,
                })
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
                    self._complete(prepared, state, cancelled=True)
                raise

    async def _prepare(
        self, raw: bytes, headers: dict[str, str], started: float, traceparent: str | None
    ) -> Prepared:
        principal = await self._auth.authenticate(headers.get("authorization"))
        body = parse_json_object(raw)
        model = body.get("model")
        if not isinstance(model, str):
            raise InvalidRequest(
                f"model: must be a string naming the model, not {_json_type(model)}", param="model"
            )
        if not model:
            raise InvalidRequest("model: must not be empty", param="model")
        if not principal.may_use(model):
            raise PermissionDenied(
                f"this key may not use model {model!r}", code="model_not_allowed"
            )
        principal = resolve_end_user(principal, body.get("user"), headers)
        chain = self._chains.for_principal(principal)
        stream = body.get("stream") is True
        upstream = self._upstreams.for_model(model)
        parsed, unparsable = _parse_request(body) if (chain.rewriters or chain.observers) else (None, None)
        call = CallContext(
            request_id="req_" + os.urandom(16).hex(),
            principal=principal,
            original=parsed,
            headers=headers,
            upstream=UpstreamCaller(upstream, forward_headers(headers, upstream)),
            started=started,
            deadline_s=self._config.chain.request_deadline_ms / 1000.0,
            trace_context=traceparent,
        )
        if unparsable:
            call._degraded.append(f"chain:unparsable_request:{unparsable}")
        if chain.plugins:
            # one cached Redis read; fails open to the defaults (gateway.settings)
            call.settings, problem = await self._settings.for_call(
                principal.user_id, principal.friend_id, principal.settings, call.time_left()
            )
            if problem is not None:
                call._degraded.append(f"settings:{problem}")
        out_body: dict[str, Any] | None = None
        if chain.rewriters and parsed is not None:
            result = await chain.rewrite(call, parsed)
            out_body = None if result is parsed else result.to_body()
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
        return Prepared(call, chain, model, stream, data, strip_usage)

    async def _forward(self, prepared: Prepared, send: Send, state: RelayState, span: Any) -> None:
        call = prepared.call
        upstream = call.upstream.upstream
        out_headers = call.upstream.headers()
        up_started = time.perf_counter()
        try:
            with self._telemetry.span(
                f"upstream chat {prepared.model}", {"server.address": upstream.base_url}, kind=SpanKind.CLIENT
            ):
                self._telemetry.inject(out_headers)
                async with self.upstream_call(
                    upstream, "POST", "/chat/completions", prepared.body, out_headers
                ) as response:
                    up_headers_at = time.perf_counter()
                    if prepared.stream and response.status_code == 200:
                        overhead = (up_started - call.started) + (time.perf_counter() - up_headers_at)
                        await self._stream(prepared, response, send, state, overhead)
                    else:
                        body = await response.aread()
                        await self._reply(prepared, response, body, send, up_started, state)
        except MemgateError as exc:
            await self._fail(prepared, send, state, exc)
        if span.is_recording() and state.assembler is not None:
            reply = state.assembler.build()
            if reply.usage:
                span.set_attribute("gen_ai.usage.input_tokens", reply.usage.get("prompt_tokens", 0))
                span.set_attribute("gen_ai.usage.output_tokens", reply.usage.get("completion_tokens", 0))
            if reply.model:
                span.set_attribute("gen_ai.response.model", reply.model)

    async def _fail(self, prepared: Prepared, send: Send, state: RelayState, exc: MemgateError) -> None:
        """Before the first byte: an error response; after it: one SSE error event."""
        self._telemetry.metrics.inc("memgate_upstream_errors_total", code=str(exc.code))
        log.warning("%s: %s", exc.code, exc.message)  # the client sees the public envelope only
        if state.first_byte_at is None:
            await send_error(send, exc, self._meta_headers(prepared.call, 0.0))
            return
        state.error = exc.envelope()
        await send({"type": "http.response.body", "body": error_event(exc), "more_body": False})
        self._complete(prepared, state, cancelled=False)

    def _meta_headers(self, call: CallContext, overhead_s: float) -> list[tuple[bytes, bytes]]:
        """The gateway's reply headers; built once per reply, so each ``x-memgate-degraded``
        entry (``plugin:reason``) is counted here once in ``memgate_degraded_total``."""
        headers = [(b"x-memgate-overhead-ms", f"{overhead_s * 1000:.3f}".encode())]
        degraded = call.degraded
        if degraded:
            headers.append((b"x-memgate-degraded", ",".join(degraded).encode("utf-8", "replace")))
            for entry in degraded:
                plugin, _, reason = entry.partition(":")
                self._telemetry.metrics.inc("memgate_degraded_total", plugin=plugin, reason=reason)
        return headers

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
        await send_bytes(send, response.status_code, body, [*headers, *self._meta_headers(call, overhead)])
        if parsed is not None and chain.observers:
            chain.complete(call, reply_from_completion(parsed))

    async def _stream(
        self, prepared: Prepared, response: Any, send: Send, state: RelayState, overhead: float
    ) -> None:
        call, chain = prepared.call, prepared.chain
        headers = [
            *(h for h in relay_headers(response.raw_headers) if h[0] != b"content-type"),
            *SSE_HEADERS,
            *self._meta_headers(call, overhead),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        state.first_byte_at = time.perf_counter()
        if chain.stream_filters or prepared.strip_usage:
            await relay_events(call, chain, response, send, state, strip_usage=prepared.strip_usage)
        else:
            await relay_passthrough(response, send, state)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        self._complete(prepared, state, cancelled=False)

    def _complete(self, prepared: Prepared, state: RelayState, *, cancelled: bool) -> None:
        if state.assembler is None or not prepared.chain.observers:
            return
        reply = state.assembler.build(cancelled=cancelled, error=state.error)
        prepared.chain.complete(prepared.call, reply)


def _json_type(value: Any) -> str:
    """The JSON type name of a parsed value (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else "a string"


def _parse_request(body: dict[str, Any]) -> tuple[ChatRequest | None, str | None]:
    """``(the body as a ChatRequest, None)``, or ``(None, error type)`` when it does not fit:
    the upstream, not the gateway, then answers for the malformed request."""
    try:
        return ChatRequest.model_validate(body), None
    except ValueError as exc:
        return None, type(exc).__name__


def _traceparent(span: Any, headers: dict[str, str]) -> str | None:
    """W3C ``traceparent`` of the request span (or the client's, when not recording)."""
    context = span.get_span_context()
    if context.is_valid:
        return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
    return headers.get("traceparent")
