"""``/v1/responses``: the OpenAI Responses API through the plugin chain.

``POST /v1/responses`` (and ``/responses``), stream or not, takes the chat path's steps
(:mod:`.chat`, :mod:`.model_route`): auth and model checks, the request phase on the
chain's chat-shaped view of the request (:mod:`.responses_wire`: memories end up in
``instructions``), the upstream call (``POST {upstream}/responses``), the reply relayed,
completion observers (memorization) after it. Differences, all from the wire format:

- an input item's ``memgate`` extension field (the chat messages' one, README "Group
  chats") is removed before the upstream, on every key; the chain's view does not carry
  it (group keys and their per-message signals are chat-only);
- idle (no edit, no gateway tool, no extension field): the request goes as the client's bytes and the reply
  comes back byte for byte, stream events included (``event:`` and ``data:`` lines,
  ``sequence_number`` order, no ``[DONE]``: the API sends none); the gateway asks for no
  usage chunk (every ``response.completed`` carries ``usage``);
- the gateway's ``memory_search`` loop runs in the Responses form (:mod:`.responses_loop`);
  the chat-shaped response and stream filters do not run (so ``recall_report``'s
  ``memgate`` field is a chat-only feature);
- completion observers get the reply assembled from the output items
  (:func:`~.responses_wire.reply_from_response`); ``call.original`` is the chain's view,
  which holds only what the client sent: with ``previous_response_id`` that is the new
  input, so only the new turn is memorized;
- a failure after the first byte ends the stream with one ``event: error`` (the API's
  ``error`` event: ``type``, ``code``, ``message``, ``param``, ``sequence_number``).

The stored-response routes pass through to the default upstream (a response id names no
model, so ``upstream.routes`` do not apply), bodies and statuses unchanged, query string
included, streamed as they arrive: ``GET`` and ``DELETE /v1/responses/{id}``,
``GET /v1/responses/{id}/input_items``, ``POST /v1/responses/{id}/cancel``. A successful
``input_items`` list (one page, at most 100 items), and the response object ``GET`` and
``cancel`` answer (a ``background`` response's output items first appear there), are read
whole first, so the item ids they list are recorded for the response's owner before the
client sees them; ``GET ...?stream=true`` is relayed event by event, each output item
recorded before the event that names it.

Tenancy (:mod:`.responses_owners`): a create records the tenant it ran as for the
response id it returns, before the client sees the id (non-stream: before the reply is
sent; stream: before the first event naming it); the stored-response routes and
``previous_response_id`` on create answer the upstream's own 404 to any other tenant
(admin keys pass); so do a ``conversation`` claimed by another tenant and an input item
naming a stored item not recorded for the caller (an ``item_reference``, any item's
``id``, an ``approval_request_id``; recorded: output items of the caller's responses,
input items listed to it); and a container, vector store, stored prompt or file id
(:func:`~.responses_wire.referenced_resources`) that is neither in
``upstream.responses_shared_ids`` (with the key's own ``responses_shared_ids``) nor, for
a container, recorded for the caller (the ``container_id`` of a call in its responses'
output, hidden tool-loop rounds included). The id in the path is percent-decoded once and must match
:data:`~.responses_owners.RESPONSE_ID` (else 404 for every key, nothing sent upstream),
and it is percent-encoded again in the upstream path.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from opentelemetry.trace import SpanKind

from gateway.chain.chain import ChainFactory
from gateway.chain.sdk import CallContext
from gateway.config import GatewayConfig
from gateway.proxy.asgi import Send, send_bytes
from gateway.proxy.auth import Authenticator, resolve_end_user
from gateway.proxy.handler import Incoming
from gateway.proxy.responses_owners import (
    RESPONSE_ID,
    ConversationNotFound,
    ItemNotFound,
    PreviousResponseNotFound,
    ResourceNotFound,
    ResponseNotFound,
    ResponseOwners,
    conversation_of,
)
from gateway.proxy.sse import SSEDecoder
from gateway.proxy.upstream import UpstreamPool, UpstreamResponse, forward_headers, relay_headers
from gateway.proxy.wire import without_extension
from gateway.routes.model_route import SSE_HEADERS, ModelRoute, traceparent_of_span
from gateway.routes.model_route import Prepared as RoutePrepared
from gateway.routes.relay import RelayState
from gateway.routes.responses_loop import Emitter, ToolLoop
from gateway.routes.responses_wire import (
    RESOURCE_NOUNS,
    ResponsesAssembler,
    apply_edits,
    chain_view,
    check_request,
    container_ids,
    dumps,
    referenced_items,
    referenced_resources,
    reply_from_response,
)
from gateway.runtime.errors import InvalidRequest, MemgateError, MemoryUnavailable, MethodNotAllowed, NotFound
from gateway.runtime.principal import Principal
from gateway.runtime.telemetry import Telemetry
from gateway.settings.memory_settings import SettingsService

__all__ = ["Responses", "responses_error_event"]

log = logging.getLogger("memgate.proxy")

#: Methods per path under ``/v1/responses`` (API reference).
ALLOWED = {"": ("POST",), "id": ("GET", "DELETE"), "input_items": ("GET",), "cancel": ("POST",)}


@dataclass
class Prepared(RoutePrepared):
    """The request as it will be sent upstream."""

    loop: ToolLoop | None
    #: the request's ``previous_response_id`` (recorded with the new id)
    previous: str | None = None


def responses_error_event(error: MemgateError, sequence_number: int) -> bytes:
    """The API's stream ``error`` event for a failure after the first byte."""
    envelope = error.envelope()["error"]
    data = {"type": "error", "code": envelope.get("code"), "message": envelope.get("message"),
            "param": envelope.get("param"), "sequence_number": sequence_number}
    return b"event: error\ndata: " + dumps(data) + b"\n\n"


def path_tail(scope: dict[str, Any]) -> str:
    """What follows ``/responses`` in the request path, still percent-encoded (the route
    is a mount, which rewrites ``path``)."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if raw else scope["path"]
    return path.split("?", 1)[0].split("/responses", 1)[1].strip("/")


def response_id(segment: str) -> str | None:
    """The response id a path segment names (percent-decoded once, UTF-8), or None when
    it is no response id (:data:`~.responses_owners.RESPONSE_ID`)."""
    try:
        value = unquote(segment, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        return None
    return value if RESPONSE_ID.fullmatch(value) else None


class Responses(ModelRoute):
    """The raw ASGI handler mounted at ``/v1/responses`` and ``/responses``."""

    #: every method reaches :meth:`handle`, which answers 405 with the path's own ``Allow``
    methods = ("GET", "POST", "DELETE", "PUT", "PATCH")
    route = "/v1/responses"
    endpoint = "responses"

    def __init__(
        self, config: GatewayConfig, auth: Authenticator, chains: ChainFactory, upstreams: UpstreamPool,
        telemetry: Telemetry, settings: SettingsService | None, owners: ResponseOwners,
    ) -> None:
        super().__init__(config, auth, chains, upstreams, telemetry, settings)
        self._owners = owners
        #: ``upstream.responses_shared_ids`` as sets, by kind
        self._shared = {kind: frozenset(ids) for kind, ids in config.upstream.responses_shared_ids.model_dump().items()}

    @property
    def owners(self) -> ResponseOwners:
        """The tenancy records (also forgotten with a user: :meth:`ResponseOwners.forget_user`)."""
        return self._owners

    async def handle(self, incoming: Incoming, send: Send) -> None:
        tail = path_tail(incoming.scope)
        parts = tail.split("/") if tail else []
        kind = "" if not parts else "id" if len(parts) == 1 else parts[1] if len(parts) == 2 else None
        if kind not in ALLOWED or (kind and not parts[0]):
            raise NotFound(f"no such route: {incoming.scope['path']}", code="not_found")
        method = incoming.scope["method"]
        if method not in ALLOWED[kind]:
            raise MethodNotAllowed(method, ALLOWED[kind])
        if kind:
            await self._pass_through(incoming, send, parts[0], kind)
        else:
            await self._create(incoming, send)

    # -- stored responses: pass-through ---------------------------------------------------

    async def _pass_through(self, incoming: Incoming, send: Send, segment: str, kind: str) -> None:
        """One stored-response route for the response the path ``segment`` names (module
        docstring: tenancy, id checks)."""
        principal = resolve_end_user(
            await self._auth.authenticate(incoming.headers.get("authorization")), None, incoming.headers)
        rid = response_id(segment)
        if rid is None or not await self._owners.owns(rid, principal):
            raise ResponseNotFound(rid if rid is not None else segment)
        upstream = self._upstreams.default
        method = incoming.scope["method"]
        query = incoming.scope.get("query_string") or b""
        suffix = f"/responses/{quote(rid, safe='')}" + ("" if kind == "id" else "/" + kind) \
            + ("?" + query.decode("latin-1") if query else "")
        body = incoming.body if method == "POST" and incoming.body else None
        headers = forward_headers(incoming.headers, upstream)
        async with self.upstream_call(upstream, method, suffix, body, headers) as response:
            names_items = response.status_code == 200 and method != "DELETE"
            stream = names_items and kind == "id" and any(
                name.lower() == b"content-type" and value.lower().startswith(b"text/event-stream")
                for name, value in response.raw_headers)
            listed = await response.aread() if names_items and not stream else None
            if listed is not None:  # recorded before the client sees the ids
                await self._record_listed(rid, listed, "data" if kind == "input_items" else "output")
            if method == "DELETE" and 200 <= response.status_code < 300:
                await self._owners.forget(rid)  # before the client learns it is deleted
            incoming.responded = True
            await send({"type": "http.response.start", "status": response.status_code,
                        "headers": relay_headers(response.raw_headers)})
            if listed is not None:
                await send({"type": "http.response.body", "body": listed, "more_body": False})
            elif stream:  # GET ?stream=true: each output item recorded before its event
                owner = await self._owners.owner_of(rid)

                async def write(data: bytes) -> None:
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                await _relay(response, Emitter(write, claim_items=None if owner is None
                                               else lambda ids: self._record_owned(rid, ids, owner)))
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            else:
                async for part in response.aiter_raw():
                    await send({"type": "http.response.body", "body": part, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _record_listed(self, rid: str, body: bytes, field: str) -> None:
        """Record the ids of the items a stored-response route's JSON ``body`` lists in
        ``field`` (``data`` of ``input_items``; ``output`` of the response object that
        ``GET`` and ``cancel`` answer, where a background response's items first appear)
        under the response's recorded tenant (an admin's read records nothing for the
        admin); a failure is logged (the owner's later references to them are refused)."""
        try:
            value = json.loads(body)
        except ValueError:
            return
        data = value.get(field) if isinstance(value, dict) else None
        items = [i for i in data if isinstance(i, dict)] if isinstance(data, list) else []
        owner = await self._owners.owner_of(rid) if items else None
        if owner is not None:
            await self._record_owned(rid, items, owner, containers=field == "output")

    def _shared_for(self, principal: Principal) -> dict[str, frozenset[str]]:
        """The resource ids ``principal`` may name, by kind: ``upstream.responses_shared_ids``
        merged with its key's own ``responses_shared_ids`` (:attr:`Principal.shared_ids`)."""
        if not principal.shared_ids:
            return self._shared
        return {kind: ids | principal.shared_ids.get(kind, frozenset()) for kind, ids in self._shared.items()}

    def _created(self, items: list[Any], principal: Principal, containers: bool = True) -> tuple[list[str], list[str]]:
        """The item ids of output ``items`` and, when ``containers``, the container ids
        they name (:func:`~.responses_wire.container_ids`) that are not shared with
        ``principal`` (:meth:`_shared_for`: a shared container stays everyone's, or the
        key's, never one tenant's)."""
        ids = [i["id"] for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)]
        shared = self._shared_for(principal)["containers"]
        made = [c for i in items for c in container_ids(i) if c not in shared] if containers else []
        return ids, made

    async def _record_owned(self, rid: str, items: list[Any], owner: Principal, containers: bool = True) -> None:
        try:
            ids, made = self._created(items, owner, containers)
            await self._owners.record_items(ids, owner, made)
        except MemoryUnavailable as exc:
            log.warning("items of response %s not recorded: %s", rid, exc.message)

    async def _record_items(self, call: CallContext, items: list[Any]) -> None:
        """Record ``call``'s tenant as the owner of output items and the containers they
        name (failure: as :meth:`_record`)."""
        ids, made = self._created(items, call.principal)
        await self._record_ids(call, ids, made)

    async def _record_hidden(self, call: CallContext, items: list[Any]) -> None:
        """Record ``call``'s tenant as the owner of the containers that the output ``items``
        of a hidden round of the gateway's tool loop (:mod:`.responses_loop`) name: a
        container the upstream made in such a round is the caller's, as one made in the
        visible reply is. The round's item ids are not recorded (the client never sees
        them). Failure: as :meth:`_record`."""
        _ids, made = self._created(items, call.principal)
        await self._record_ids(call, [], made)

    async def _record_ids(self, call: CallContext, ids: list[str], made: list[str]) -> None:
        if not ids and not made:
            return
        try:
            await self._owners.record_items(ids, call.principal, made)
        except MemoryUnavailable as exc:
            log.warning("response items %s / containers %s not recorded: %s", ids[:3], made[:3], exc.message)
            call.degrade("responses", "unrecorded")

    async def _record(self, call: CallContext, rid: str, previous: str | None) -> None:
        """Record ``call``'s tenant as the creator of ``rid``; a Redis failure is logged and
        named ``responses:unrecorded`` in ``x-memgate-degraded`` (the response exists
        upstream; only its creator's later reads will be refused)."""
        try:
            await self._owners.record(rid, call.principal, previous)
        except MemoryUnavailable as exc:
            log.warning("response %s created but not recorded: %s", rid, exc.message)
            call.degrade("responses", "unrecorded")

    # -- create -------------------------------------------------------------------------

    async def _create(self, incoming: Incoming, send: Send) -> None:
        headers = incoming.headers
        context = self._telemetry.extract(headers)
        with self._telemetry.span("responses", {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"},
                                  kind=SpanKind.SERVER, context=context) as span:
            prepared = await self._prepare(incoming.body, headers, incoming.started, traceparent_of_span(span, headers))
            self.describe(span, "responses", prepared)
            assembler = ResponsesAssembler(self._config.chain.max_capture_bytes) \
                if prepared.chain.observers or span.is_recording() else None
            state = RelayState(assembler=assembler)  # type: ignore[arg-type]
            emitter = Emitter(self._writer(send, state), assembler.add if assembler is not None else None,
                              claim=lambda rid: self._record(prepared.call, rid, prepared.previous),
                              claim_items=lambda ids: self._record_items(prepared.call, ids))
            incoming.responded = True  # from here on, failures are answered by _forward
            try:
                await self._forward(prepared, send, state, emitter, span)
            except asyncio.CancelledError:
                if incoming.watcher.fired:
                    if span.is_recording():
                        span.set_attribute("memgate.cancelled", True)
                    self.complete(prepared, state, cancelled=True)
                raise

    def route_principal(self, principal: Principal, body: dict[str, Any]) -> Principal:
        """Group keys (memory per speaker, :mod:`gateway.speakers.group`) are chat-completions
        only: a Responses request has no per-message speaker ``name`` to attribute.

        Raises:
            InvalidRequest: a group key (400).
        """
        if principal.group:
            raise InvalidRequest("a group key (memory per speaker) works on /v1/chat/completions only: "
                                 "Responses input items carry no speaker name", param="input")
        return principal

    async def _prepare(self, raw: bytes, headers: dict[str, str], started: float, traceparent: str | None) -> Prepared:
        accepted = await self.accept(raw, headers)
        body, chain = accepted.body, accepted.chain
        check_request(body)
        previous = body.get("previous_response_id")
        if isinstance(previous, str) and not await self._owners.owns(previous, accepted.principal):
            raise PreviousResponseNotFound(previous)
        await self._check_references(body, accepted.principal)
        view = chain_view(body) if (chain.rewriters or chain.observers) else None
        call = self.call_context(accepted, view.request if view is not None else None, headers, started, traceparent)
        await self.load_settings(call, accepted.chain)
        out: dict[str, Any] | None = None
        if chain.rewriters and view is not None:
            result = await chain.rewrite(call, view.request)
            out = apply_edits(body, view, result, call.injection)
        stripped = without_extension((out if out is not None else body).get("input"))
        if stripped is not None:  # the gateway's extension field never goes upstream, plugins or not
            out = {**(out if out is not None else body), "input": stripped}
        loop = ToolLoop.for_call(chain, call, out if out is not None else body, self._telemetry,
                                 record_hidden=lambda items: self._record_hidden(call, items))
        data = raw if out is None else dumps(out)
        return Prepared(call, chain, accepted.model, accepted.stream, data, loop,
                        previous if isinstance(previous, str) else None)

    async def _check_references(self, body: dict[str, Any], principal: Principal) -> None:
        """Refuse a ``conversation`` another tenant claimed (claiming it when new) and an
        input item naming a stored item not recorded for ``principal``
        (:func:`~.responses_wire.referenced_items`: an ``item_reference``, any item's
        ``id``, an ``approval_request_id``; module docstring of :mod:`.responses_owners`).
        A few Redis round trips, linear in the items.

        Raises:
            ItemNotFound: an unowned item (404, ``param: input[i].id`` or
                ``input[i].approval_request_id``).
            ConversationNotFound: another tenant's conversation (404).
            MemoryUnavailable: Redis failed (503).
        """
        items = body.get("input")
        if isinstance(items, list):
            unowned = await self._owners.unowned_item(referenced_items(items), principal)
            if unowned is not None:
                raise ItemNotFound(*unowned)
        refused = await self._owners.unshared_resource(
            referenced_resources(body), principal, self._shared_for(principal))
        if refused is not None:
            kind, resource_id, param = refused
            raise ResourceNotFound(RESOURCE_NOUNS[kind], resource_id, param)
        conversation = conversation_of(body)
        if conversation is not None and not await self._owners.claim_conversation(conversation, principal):
            raise ConversationNotFound(conversation)

    def _writer(self, send: Send, state: RelayState) -> Any:
        async def write(data: bytes) -> None:
            if data:
                await send({"type": "http.response.body", "body": data, "more_body": True})
                state.bytes_sent += len(data)
        return write

    def _post(self, call: CallContext) -> Any:
        """A further upstream call of the tool loop (same upstream, headers, timeouts)."""
        upstream = call.upstream.upstream

        @contextlib.asynccontextmanager
        async def post(body: bytes) -> AsyncIterator[UpstreamResponse]:
            call.upstream.calls += 1
            async with self.upstream_call(upstream, "POST", "/responses", body, call.upstream.headers()) as response:
                yield response
        return post

    async def _forward(self, prepared: Prepared, send: Send, state: RelayState, emitter: Emitter, span: Any) -> None:
        await self.forward(
            prepared, send, state, span, path="/responses",
            stream=lambda response, overhead: self._stream(prepared, response, send, state, emitter, overhead),
            reply=lambda response, body, up_started: self._reply(prepared, response, body, send, up_started, state),
            error_event=lambda exc: responses_error_event(exc, emitter.sent), usage_keys=("input_tokens", "output_tokens"),
        )

    async def _reply(
        self, prepared: Prepared, response: Any, body: bytes, send: Send, up_started: float, state: RelayState,
    ) -> None:
        """Non-stream reply (or a stream call the upstream answered with an error)."""
        call, chain = prepared.call, prepared.chain
        parsed: dict[str, Any] | None = None
        if response.status_code == 200:
            try:
                value = json.loads(body)
            except ValueError:
                value = None
            parsed = value if isinstance(value, dict) else None
            if parsed is not None and prepared.loop is not None:
                body, parsed = await prepared.loop.complete(body, parsed, self._post(call))
            if parsed is not None and isinstance(parsed.get("id"), str):
                await self._record(call, parsed["id"], prepared.previous)
                output = parsed.get("output")
                if isinstance(output, list):
                    await self._record_items(call, output)
        up_time = time.perf_counter() - up_started
        overhead = (time.perf_counter() - call.started) - up_time
        state.first_byte_at = time.perf_counter()
        await send_bytes(send, response.status_code, body, [*relay_headers(response.raw_headers), *self.meta_headers(call, overhead)])
        if parsed is not None and chain.observers:
            chain.complete(call, reply_from_response(parsed, stream=False, max_chars=self._config.chain.max_capture_bytes))

    async def _stream(
        self, prepared: Prepared, response: Any, send: Send, state: RelayState, emitter: Emitter, overhead: float,
    ) -> None:
        headers = [
            *(h for h in relay_headers(response.raw_headers) if h[0] != b"content-type"),
            *SSE_HEADERS,
            *self.meta_headers(prepared.call, overhead),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        state.first_byte_at = time.perf_counter()
        if prepared.loop is not None:
            await prepared.loop.stream(response, self._post(prepared.call), emitter)
        else:
            await _relay(response, emitter)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        self.complete(prepared, state, cancelled=False)



async def _relay(response: Any, emitter: Emitter) -> None:
    """Every upstream read's complete events in one write, with their bytes (a partial
    event waits for its end); events counted, and parsed only for the assembler and until
    the response id was claimed (:meth:`Emitter.claim_id`, before the event is written)."""
    decoder = SSEDecoder()
    async for part in response.aiter_raw():
        events = decoder.feed(part)
        if not events:
            continue
        for event in events:
            if event.data is not None:
                emitter.sent += 1
                if emitter.observe is not None or (emitter.claim is not None and not emitter.claimed) \
                        or (emitter.claim_items is not None and b"output_item." in event.raw):
                    try:
                        data = json.loads(event.data)
                    except ValueError:
                        continue
                    if isinstance(data, dict):
                        await emitter.claim_id(data)
                        if emitter.observe is not None:
                            emitter.observe(data)
        await emitter.write(events[0].raw if len(events) == 1 else b"".join(e.raw for e in events))
    tail = decoder.flush()
    if tail:
        await emitter.write(b"".join(e.raw for e in tail))
