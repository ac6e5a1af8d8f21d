"""What the two model routes share: ``POST /v1/chat/completions`` (:mod:`.chat`) and
``POST /v1/responses`` (:mod:`.responses`).

One accepted call, in order (:meth:`ModelRoute.accept`): the bearer key resolves to a
principal, the body parses as a JSON object (:mod:`gateway.runtime.json_input`: 400 naming the
field), ``model`` is a non-empty string (400, ``param: model``) the key may use (403
``model_not_allowed``), a service key may name the end user (body ``user`` or the
``X-Memgate-*`` headers), then the principal's plugin chain and the upstream routed by
model are chosen. :meth:`ModelRoute.call_context` builds the
:class:`~gateway.chain.sdk.CallContext` plugins see. Replies carry :meth:`ModelRoute.meta_headers`
(``x-memgate-overhead-ms``, ``x-memgate-degraded``); an upstream failure before the first
byte is an error response, after it one error event (:meth:`ModelRoute.fail`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import SpanKind

from gateway.chain.chain import ChainFactory, PluginChain
from gateway.chain.sdk import CallContext
from gateway.config import GatewayConfig
from gateway.proxy.asgi import Send, send_error
from gateway.proxy.auth import Authenticator, resolve_end_user
from gateway.proxy.handler import ProxyRoute
from gateway.proxy.upstream import Upstream, UpstreamCaller, UpstreamPool, forward_headers
from gateway.proxy.wire import ChatRequest
from gateway.routes.relay import RelayState
from gateway.runtime.errors import InvalidRequest, MemgateError, PermissionDenied
from gateway.runtime.json_input import json_type, parse_json_object
from gateway.runtime.principal import Principal
from gateway.runtime.telemetry import Telemetry
from gateway.settings.memory_settings import SettingsService

__all__ = ["SSE_HEADERS", "Accepted", "ModelRoute", "Prepared", "traceparent_of_span"]

log = logging.getLogger("memgate.proxy")

SSE_HEADERS = (
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


@dataclass
class Prepared:
    """A model call ready to go upstream (each route adds what it needs).

    Attributes:
        call: the call as plugins see it.
        chain: the caller's plugin chain.
        model: the requested model.
        stream: whether the client asked for a stream.
        body: the request body as it will be sent upstream.
    """

    call: CallContext
    chain: PluginChain
    model: str
    stream: bool
    body: bytes


@dataclass
class Accepted:
    """A call that passed auth and the model checks.

    Attributes:
        body: the request body, parsed.
        model: the requested model.
        principal: the caller, after any service-key end-user naming.
        chain: the principal's plugin chain.
        upstream: the upstream routed by ``model``.
        stream: ``body["stream"] is True``.
    """

    body: dict[str, Any]
    model: str
    principal: Principal
    chain: PluginChain
    upstream: Upstream
    stream: bool


class ModelRoute(ProxyRoute):
    """Base of the routes that run the plugin chain around a model call."""

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

    async def accept(self, raw: bytes, headers: dict[str, str]) -> Accepted:
        """See the module docstring.

        Raises:
            Unauthorized / KeyStoreUnavailable: the key (401 / 503).
            InvalidRequest: the body or ``model`` (400, ``param`` names the field).
            PermissionDenied: the key may not use the model (403).
        """
        principal = await self._auth.authenticate(headers.get("authorization"))
        body = parse_json_object(raw)
        model = body.get("model")
        if not isinstance(model, str):
            raise InvalidRequest(f"model: must be a string naming the model, not {json_type(model)}", param="model")
        if not model:
            raise InvalidRequest("model: must not be empty", param="model")
        if not principal.may_use(model):
            raise PermissionDenied(f"this key may not use model {model!r}", code="model_not_allowed")
        principal = self.route_principal(resolve_end_user(principal, body.get("user"), headers), body)
        chain = self._chains.for_principal(principal)
        return Accepted(body, model, principal, chain, self._upstreams.for_model(model), body.get("stream") is True)

    def route_principal(self, principal: Principal, body: dict[str, Any]) -> Principal:
        """The principal the call runs as once the body is read (a route's own rule; by
        default the caller as resolved). Raises InvalidRequest (400) to refuse the call."""
        return principal

    async def load_settings(self, call: CallContext, chain: PluginChain) -> None:
        """The caller's effective memory settings into ``call.settings``
        (:mod:`gateway.settings.memory_settings`): one cached Redis read when the chain has plugins; a
        failed or slow read falls back to the defaults and is named
        ``settings:<problem>`` in ``x-memgate-degraded``."""
        if not chain.plugins:
            return
        principal = call.principal
        call.settings, problem = await self._settings.for_call(
            principal.user_id, principal.friend_id, principal.settings, call.time_left()
        )
        if problem is not None:
            call.degrade("settings", problem)

    def complete(self, prepared: Prepared, state: RelayState, *, cancelled: bool) -> None:
        """Hand the assembled reply to the chain's completion observers (memorization),
        ``cancelled`` when the client went away; nothing when no observer needs it."""
        if state.assembler is None or not prepared.chain.observers:
            return
        prepared.chain.complete(prepared.call, state.assembler.build(cancelled=cancelled, error=state.error))

    def describe(self, span: Any, operation: str, prepared: Any) -> None:
        """Name a recording request span ``<operation> <model>`` and give it the caller's
        attributes (``prepared``: a route's prepared call, with ``call``, ``model`` and
        ``stream``)."""
        if not span.is_recording():
            return
        principal = prepared.call.principal
        span.update_name(f"{operation} {prepared.model}")
        span.set_attributes({
            "gen_ai.request.model": prepared.model, "memgate.user_id": principal.user_id,
            "memgate.friend_id": principal.friend_id, "memgate.key_id": principal.key_id,
            "memgate.stream": prepared.stream,
        })

    def call_context(
        self, accepted: Accepted, original: ChatRequest | None, headers: dict[str, str], started: float,
        traceparent: str | None,
    ) -> CallContext:
        """The call as plugins see it (``original``: the chain's view of the request)."""
        upstream = accepted.upstream
        return CallContext(
            request_id="req_" + os.urandom(16).hex(),
            principal=accepted.principal,
            original=original,
            headers=headers,
            upstream=UpstreamCaller(upstream, forward_headers(headers, upstream)),
            started=started,
            deadline_s=self._config.chain.request_deadline_ms / 1000.0,
            trace_context=traceparent,
        )

    def meta_headers(self, call: CallContext, overhead_s: float) -> list[tuple[bytes, bytes]]:
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

    async def forward(
        self, prepared: Prepared, send: Send, state: RelayState, span: Any, *, path: str,
        stream: Callable[[Any, float], Awaitable[None]],
        reply: Callable[[Any, bytes, float], Awaitable[None]],
        error_event: Callable[[MemgateError], bytes],
        usage_keys: tuple[str, str],
    ) -> None:
        """POST ``prepared.body`` to the routed upstream's ``path`` inside a client span
        (``upstream <operation> <model>``, the W3C context injected): a 200 answer to a
        stream request goes to ``stream(response, overhead_s)`` (overhead: the gateway's
        time before the call plus after the upstream's headers), anything else is read
        whole and goes to ``reply(response, body, up_started)``. An upstream failure is
        answered by :meth:`fail` with ``error_event``. Afterwards the request ``span``
        gets the reply's token usage (``usage_keys``: input and output keys of the wire's
        ``usage``) and model (OpenTelemetry GenAI conventions)."""
        call = prepared.call
        upstream = call.upstream.upstream
        out_headers = call.upstream.headers()
        up_started = time.perf_counter()
        operation = "chat" if path == "/chat/completions" else path.strip("/")
        try:
            with self._telemetry.span(
                f"upstream {operation} {prepared.model}", {"server.address": upstream.base_url}, kind=SpanKind.CLIENT
            ):
                self._telemetry.inject(out_headers)
                async with self.upstream_call(upstream, "POST", path, prepared.body, out_headers) as response:
                    up_headers_at = time.perf_counter()
                    if prepared.stream and response.status_code == 200:
                        await stream(response, (up_started - call.started) + (time.perf_counter() - up_headers_at))
                    else:
                        await reply(response, await response.aread(), up_started)
        except MemgateError as exc:
            if await self.fail(call, send, state, exc, error_event):
                self.complete(prepared, state, cancelled=False)
        if span.is_recording() and state.assembler is not None:
            built = state.assembler.build()
            if built.usage:
                span.set_attribute("gen_ai.usage.input_tokens", built.usage.get(usage_keys[0], 0))
                span.set_attribute("gen_ai.usage.output_tokens", built.usage.get(usage_keys[1], 0))
            if built.model:
                span.set_attribute("gen_ai.response.model", built.model)

    async def fail(
        self, call: CallContext, send: Send, state: RelayState, exc: MemgateError,
        error_event: Callable[[MemgateError], bytes],
    ) -> bool:
        """An upstream failure: before the first byte an error response (returns False);
        after it one ``error_event(exc)`` ends the stream (returns True: the reply ended,
        completion hooks may run)."""
        self._telemetry.metrics.inc("memgate_upstream_errors_total", code=str(exc.code))
        log.warning("%s: %s", exc.code, exc.message)  # the client sees the public envelope only
        if state.first_byte_at is None:
            await send_error(send, exc, self.meta_headers(call, 0.0))
            return False
        state.error = exc.envelope()
        await send({"type": "http.response.body", "body": error_event(exc), "more_body": False})
        return True


def traceparent_of_span(span: Any, headers: dict[str, str]) -> str | None:
    """W3C ``traceparent`` of the request span (or the client's, when not recording)."""
    context = span.get_span_context()
    if context.is_valid:
        return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
    return headers.get("traceparent")
