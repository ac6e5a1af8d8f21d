"""Memory as MCP tools, with the official ``mcp`` Python SDK (2.x).

Tools (input and output schemas are the pydantic models and annotations below; outputs
are structured content, with the same JSON as text content):

- ``search_memory(query, top_k=5, threshold=0.0, scopes, types)``: hits in ranking
  order, as ``POST /v1/memories/search``.
- ``add_memory(text, scope="profile", type="semantic", keywords, importance,
  occurred_at, metadata)``: the stored record, as ``POST /v1/memories``.
- ``list_memories(scope, type, cursor, limit=50)``: one page, newest first, as
  ``GET /v1/memories``.
- ``get_memory(memory_id)``, ``update_memory(memory_id, ...)``,
  ``delete_memory(memory_id)``: as ``GET | PATCH | DELETE /v1/memories/{id}``.
- ``recall_memory(query, profile_topk, event_topk, similarity_threshold)``:
  seed 002 §4: ``{"profiles": [{"topic", "content", "updated_at"}], "events": [{"date",
  "content"}]}``, profiles in relevance order, events in chronological order, dates
  ``YYYY-MM-DD``. Seed 002 lists ``friend_id`` as a parameter; here the friend is the
  caller's (tenancy by construction), as in the ``tool_splice`` plugin. The user's memory
  settings apply as on the chat path (:meth:`gateway.settings.memory_settings.SettingsService.for_call`,
  same precedence, same fail-open read): ``recall_enabled`` off gives empty lists; an
  omitted argument takes the effective ``profile_topk`` / ``event_topk`` /
  ``similarity_threshold`` (seed 002 §4.1 defaults 5, 5, 0.5); a given one is bounded by
  the setting when the setting was set somewhere (yaml, key, user): at most that many
  hits, at least that strength. The threshold applies to a hit's calibrated relevance
  when the store has a calibration, else its cosine (``ScoredMemory.strength``), as in
  the recall agent.

Every tool acts on the caller's tenant exactly like the REST memory API: the key's
principal (:func:`gateway.api.guards.caller_principal`: a service key may name the end
user with ``X-Memgate-User`` / ``X-Memgate-Friend``) mapped to ``Tenant(user_id,
friend_id)`` (:func:`gateway.api.guards.tenant_of`), through the same store. Another
tenant's memory id is "not found", never a leak.

Errors are MCP tool errors (``isError: true``) whose text names the field at fault:
argument validation by the SDK (pydantic, ``top_k`` ...), the store's own errors
(``memory_id: memory ... not found``, ``text: ... longer than memory.max_text_chars``).

Transports:

- Streamable HTTP at ``/mcp`` on the gateway (:class:`McpHttpEndpoint`): every request
  authenticates its ``Authorization: Bearer`` memgate key before the SDK sees it (401 in
  the OpenAI error envelope otherwise, 503 when the key store is down). Stateless (no
  server-side session: each POST carries its own key, any gateway process can answer)
  with JSON replies; ``GET`` (the standalone SSE stream a stateless server never writes
  to) is 405, so no client can hold streams open. DNS-rebinding protection is on by
  default (``mcp:`` in gateway.yaml, :class:`gateway.runtime.config.McpConfig`): the ``Host``
  header must be in ``allowed_hosts`` (else 421) and a present ``Origin`` in
  ``allowed_origins`` (else 403), checked before the key, with the SDK's
  :class:`~mcp.server.transport_security.TransportSecuritySettings` rules (exact, or
  ``name:*`` for any port); the defaults admit localhost only.
- stdio: ``memgate mcp`` (:func:`serve_stdio`), the key from ``MEMGATE_API_KEY``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

from gateway import __version__
from gateway.api.guards import caller_principal, check_caller_metadata, tenant_of
from gateway.memory.ids import MEMORY_ID_PATTERN
from gateway.memory.records import (
    KeywordList,
    MemoryPage,
    MemoryPatch,
    MemoryRecord,
    MemoryType,
    NewMemory,
    Scope,
    ScoredMemory,
    profile_topic,
)
from gateway.memory.store import MemoryStore
from gateway.proxy.auth import Authenticator
from gateway.runtime.config import McpConfig
from gateway.runtime.errors import MemgateError, MethodNotAllowed, PermissionDenied
from gateway.runtime.principal import Principal
from gateway.settings.memory_settings import CallSettings, SettingsService

__all__ = [
    "PRINCIPAL_SCOPE_KEY", "Deleted", "McpHttpEndpoint", "MemoryTools", "RecallEvent", "RecallProfile",
    "RecallResult", "SearchResult", "build_server", "open_http_endpoint", "serve_stdio",
]

#: ASGI scope key under which :class:`McpHttpEndpoint` hands the authenticated
#: principal to the tools (the SDK passes the request, scope included, to each call).
PRINCIPAL_SCOPE_KEY = "memgate.principal"

MemoryId = Annotated[str, Field(pattern=MEMORY_ID_PATTERN, description="A memory id (32 lowercase hex digits).")]

#: Resolves the principal a tool call acts for (per transport).
PrincipalOf = Callable[[Context], Principal]


class SearchResult(BaseModel):
    """``search_memory``'s reply: hits in ranking order (see :class:`ScoredMemory`)."""

    hits: list[ScoredMemory] = Field(description="Best first.")


class Deleted(BaseModel):
    """``delete_memory``'s reply."""

    id: str = Field(description="The erased memory's id.")
    deleted: bool = Field(True, description="Always true: an unknown id is a tool error.")


class RecallProfile(BaseModel):
    """A profile entry of seed 002 §4.2."""

    model_config = ConfigDict(extra="forbid")

    topic: str = Field(description="metadata.topic, else the first keyword, else the memory type.")
    content: str = Field(description="The memory text.")
    updated_at: dt.date = Field(description="Day it was last changed (UTC).")


class RecallEvent(BaseModel):
    """An event gist of seed 002 §4.2."""

    model_config = ConfigDict(extra="forbid")

    date: dt.date = Field(description="Day it happened (UTC).")
    content: str = Field(description="The memory text.")


class RecallResult(BaseModel):
    """``recall_memory``'s reply (seed 002 §4.2)."""

    model_config = ConfigDict(extra="forbid")

    profiles: list[RecallProfile] = Field(description="Relevance order.")
    events: list[RecallEvent] = Field(description="Chronological order.")


def _tool_error(exc: MemgateError, field: str | None = None) -> ToolError:
    """A tool error whose text starts with the field at fault (``param``, else ``field``)."""
    text = exc.public_message or exc.message
    param = field if exc.param in (None, "id") and field else exc.param
    if param and not text.startswith(param):
        text = f"{param}: {text}"
    return ToolError(text)


def _validation_error(exc: ValidationError) -> ToolError:
    """pydantic's errors as one line per field: ``text: String should have at least 1 character``."""
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()[:5]
    ]
    return ToolError("; ".join(parts))


class MemoryTools:
    """The seven tools over one store; ``principal_of`` says whom a call acts for;
    ``settings`` gives the user's memory settings (None: the defaults only)."""

    def __init__(self, store: MemoryStore, principal_of: PrincipalOf, settings: SettingsService | None = None) -> None:
        self._store = store
        self._principal_of = principal_of
        self._settings = settings

    async def _call_settings(self, principal: Principal) -> CallSettings:
        """The caller's effective settings, read as the chat path reads them (never raises)."""
        if self._settings is None:
            return CallSettings()
        settings, _problem = await self._settings.for_call(principal.user_id, principal.friend_id, principal.settings)
        return settings

    def _tenant(self, ctx: Context) -> Any:
        return tenant_of(self._principal_of(ctx))

    async def search_memory(
        self,
        ctx: Context,
        query: Annotated[str, Field(min_length=1, description="Text to search for.")],
        top_k: Annotated[int, Field(ge=1, le=100, description="Most hits returned.")] = 5,
        threshold: Annotated[float, Field(ge=0.0, le=1.0, description="Least cosine similarity of a hit.")] = 0.0,
        scopes: Annotated[list[Scope] | None, Field(description="profile and/or event; null: both.")] = None,
        types: Annotated[list[MemoryType] | None, Field(description="Memory types; null: all.")] = None,
    ) -> SearchResult:
        """Search the caller's long-term memories by meaning and keywords, best first."""
        try:
            hits = await self._store.search(
                self._tenant(ctx), query, top_k=top_k, threshold=threshold,
                scopes=[s.value for s in scopes] if scopes else None,
                types=[t.value for t in types] if types else None,
            )
        except MemgateError as exc:
            raise _tool_error(exc, "query") from None
        return SearchResult(hits=hits)

    async def add_memory(
        self,
        ctx: Context,
        text: Annotated[str, Field(min_length=1, description="The memory in natural language.")],
        scope: Annotated[Scope, Field(description="profile: every assistant of the user sees it; "
                                                  "event: only the caller's friend (assistant).")] = Scope.PROFILE,
        type: Annotated[MemoryType, Field(description="Kind of memory.")] = MemoryType.SEMANTIC,
        keywords: Annotated[KeywordList | None, Field(description="Extra search terms (at most 64, each at most 100 characters).")] = None,
        importance: Annotated[float, Field(ge=0.0, le=1.0, description="0 trivial .. 1 vital.")] = 0.5,
        occurred_at: Annotated[dt.datetime | None, Field(description="When it happened (ISO 8601 with "
                                                                      "offset); null: now.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Caller's JSON data.")] = None,
    ) -> MemoryRecord:
        """Store one memory for the caller; returns the stored record (with its id)."""
        try:
            new = NewMemory(scope=scope, type=type, text=text, keywords=keywords or [], importance=importance,
                            occurred_at=occurred_at, metadata=metadata or {})
        except ValidationError as exc:
            raise _validation_error(exc) from None
        try:
            check_caller_metadata(new.metadata)
            record: MemoryRecord = await self._store.add(self._tenant(ctx), new)
        except MemgateError as exc:
            raise _tool_error(exc) from None
        return record

    async def list_memories(
        self,
        ctx: Context,
        scope: Annotated[Scope | None, Field(description="Only this scope; null: both.")] = None,
        type: Annotated[MemoryType | None, Field(description="Only this type; null: all.")] = None,
        cursor: Annotated[str | None, Field(pattern=MEMORY_ID_PATTERN,
                                            description="next_cursor of the previous page.")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="Most records in the page.")] = 50,
    ) -> MemoryPage:
        """The caller's memories, newest first, one page at a time."""
        try:
            return await self._store.list(
                self._tenant(ctx), scope=scope.value if scope else None,
                types=[type.value] if type else None, cursor=cursor, limit=limit,
            )
        except MemgateError as exc:
            raise _tool_error(exc, "cursor") from None

    async def get_memory(self, ctx: Context, memory_id: MemoryId) -> MemoryRecord:
        """One of the caller's memories by id."""
        try:
            return await self._store.get(self._tenant(ctx), memory_id)
        except MemgateError as exc:
            raise _tool_error(exc, "memory_id") from None

    async def update_memory(
        self,
        ctx: Context,
        memory_id: MemoryId,
        text: Annotated[str | None, Field(min_length=1, description="New text (re-embedded).")] = None,
        type: Annotated[MemoryType | None, Field(description="New kind.")] = None,
        keywords: Annotated[KeywordList | None, Field(description="New keyword list (limits as add_memory).")] = None,
        importance: Annotated[float | None, Field(ge=0.0, le=1.0, description="New importance.")] = None,
        occurred_at: Annotated[dt.datetime | None, Field(description="New time it happened.")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Replacement metadata.")] = None,
    ) -> MemoryRecord:
        """Change fields of one of the caller's memories (null leaves a field as is)."""
        try:
            patch = MemoryPatch(text=text, type=type, keywords=keywords, importance=importance,
                                occurred_at=occurred_at, metadata=metadata)
        except ValidationError as exc:
            raise _validation_error(exc) from None
        try:
            check_caller_metadata(patch.metadata)
            return await self._store.update(self._tenant(ctx), memory_id, patch)
        except MemgateError as exc:
            raise _tool_error(exc, "memory_id") from None

    async def delete_memory(self, ctx: Context, memory_id: MemoryId) -> Deleted:
        """Erase one of the caller's memories."""
        try:
            await self._store.delete(self._tenant(ctx), memory_id)
        except MemgateError as exc:
            raise _tool_error(exc, "memory_id") from None
        return Deleted(id=memory_id)

    async def recall_memory(
        self,
        ctx: Context,
        query: Annotated[str, Field(min_length=1, description="Search keywords or the user's message.")],
        profile_topk: Annotated[int | None, Field(ge=1, le=100, description="Most profile entries; null: the "
                                                  "user's setting (seed 002: 5).")] = None,
        event_topk: Annotated[int | None, Field(ge=1, le=100, description="Most event gists; null: the user's "
                                                "setting (seed 002: 5).")] = None,
        similarity_threshold: Annotated[float | None, Field(ge=0.0, le=1.0, description="Least relevance "
                                                            "(calibrated P(related), else cosine); null: the user's "
                                                            "setting (seed 002: 0.5).")] = None,
    ) -> RecallResult:
        """Memories relevant to the conversation: profile facts (every assistant of the
        user shares them) and event gists (the caller's assistant only), seed 002 §4,
        within the user's memory settings."""
        principal = self._principal_of(ctx)
        tenant = tenant_of(principal)
        settings = await self._call_settings(principal)
        if not settings.recall_enabled:
            return RecallResult(profiles=[], events=[])
        profile_topk = _bounded(settings, "profile_topk", profile_topk, min)
        event_topk = _bounded(settings, "event_topk", event_topk, min)
        similarity_threshold = _bounded(settings, "similarity_threshold", similarity_threshold, max)
        try:
            profiles = await self._store.search(tenant, query, top_k=profile_topk, threshold=0.0,
                                                scopes=[Scope.PROFILE.value])
            events = [] if tenant.friend_id is None else await self._store.search(
                tenant, query, top_k=event_topk, threshold=0.0, scopes=[Scope.EVENT.value])
        except MemgateError as exc:
            raise _tool_error(exc, "query") from None
        return recall_result([h for h in profiles if h.strength >= similarity_threshold],
                             [h for h in events if h.strength >= similarity_threshold])

    def register(self, server: MCPServer[Any]) -> None:
        """Add the seven tools to ``server``."""
        read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
        for fn, hints in (
            (self.search_memory, read_only),
            (self.add_memory, ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)),
            (self.list_memories, read_only),
            (self.get_memory, read_only),
            (self.update_memory, ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                 idempotent_hint=True, open_world_hint=False)),
            (self.delete_memory, ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                 idempotent_hint=False, open_world_hint=False)),
            (self.recall_memory, read_only),
        ):
            server.add_tool(fn, annotations=hints, structured_output=True)


def _bounded(settings: CallSettings, name: str, given: Any, bound: Callable[[Any, Any], Any]) -> Any:
    """``recall_memory``'s value of setting ``name``: the effective setting when the
    argument is omitted; else the argument, bounded (``min`` / ``max``) by the setting
    when it was set somewhere (module docstring)."""
    if given is None:
        return getattr(settings, name)
    return bound(given, getattr(settings, name)) if name in settings.explicit else given


def recall_result(profiles: list[ScoredMemory], events: list[ScoredMemory]) -> RecallResult:
    """Seed 002 §4.2 from search hits: profiles as ranked, events oldest first."""
    return RecallResult(
        profiles=[
            RecallProfile(topic=profile_topic(h.record), content=h.record.text, updated_at=h.record.updated_at.date())
            for h in profiles
        ],
        events=[
            RecallEvent(date=h.record.occurred_at.date(), content=h.record.text)
            for h in sorted(events, key=lambda h: h.record.occurred_at)
        ],
    )


def build_server(store: MemoryStore, principal_of: PrincipalOf, settings: SettingsService | None = None) -> MCPServer[Any]:
    """An MCP server with the memory tools over ``store`` (``settings``: see :class:`MemoryTools`)."""
    server: MCPServer[Any] = MCPServer(
        name="memgate",
        version=__version__,
        instructions="Long-term memory of the user: search, recall, add, update and delete memories. "
        "Profile memories are shared by every assistant of the user; event memories belong to this assistant.",
        log_level="WARNING",
    )
    MemoryTools(store, principal_of, settings).register(server)
    return server


def principal_from_request(ctx: Context) -> Principal:
    """The principal :class:`McpHttpEndpoint` put in the HTTP request's ASGI scope."""
    request = ctx.request_context.request
    principal = getattr(request, "scope", {}).get(PRINCIPAL_SCOPE_KEY)
    if not isinstance(principal, Principal):  # only reachable if the endpoint is bypassed
        raise ToolError("unauthenticated: send the memgate key as Authorization: Bearer <key>")
    return principal


Asgi = Callable[[Any, Any, Any], Awaitable[None]]


class MisdirectedRequest(MemgateError):
    """The ``Host`` header names no host the endpoint serves (421, DNS rebinding)."""

    status = 421
    type = "invalid_request_error"
    code = "invalid_host"


def transport_security(config: McpConfig) -> TransportSecuritySettings:
    """The SDK's Host/Origin settings from ``mcp:`` in gateway.yaml."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=config.dns_rebinding_protection,
        allowed_hosts=list(config.allowed_hosts), allowed_origins=list(config.allowed_origins),
    )


class McpHttpEndpoint:
    """The ASGI app at ``/mcp``: Host/Origin, method and key checks (module docstring),
    then the SDK's Streamable HTTP transport. Refusals are OpenAI error envelopes."""

    def __init__(self, auth: Authenticator, handle: Asgi, security: TransportSecuritySettings | None = None) -> None:
        self._auth = auth
        self._handle = handle
        self._security = TransportSecurityMiddleware(security or TransportSecuritySettings())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            await self._check_origin(scope)
            if scope.get("method") == "GET":
                raise MethodNotAllowed("GET", ("POST", "DELETE"))
            principal = await caller_principal(self._auth, headers)
        except MemgateError as exc:
            await _send_error(send, exc)
            return
        await self._handle({**scope, PRINCIPAL_SCOPE_KEY: principal}, receive, send)

    async def _check_origin(self, scope: Any) -> None:
        """Raises MisdirectedRequest (421) / PermissionDenied (403) for a Host / Origin the
        settings refuse (the SDK's own rules)."""
        refused = await self._security.validate_request(Request(scope), is_post=False)
        if refused is None:
            return
        if refused.status_code == 421:
            raise MisdirectedRequest(
                "Host header not allowed for /mcp (DNS-rebinding protection): add the name clients use to "
                "mcp.allowed_hosts", param="Host")
        raise PermissionDenied(
            "Origin header not allowed for /mcp (DNS-rebinding protection): add it to mcp.allowed_origins",
            param="Origin", code="invalid_origin")


async def _send_error(send: Any, exc: MemgateError) -> None:
    body = exc.body()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in exc.headers().items()]
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextlib.asynccontextmanager
async def open_http_endpoint(
    store: MemoryStore, auth: Authenticator, settings: SettingsService | None = None, config: McpConfig | None = None,
) -> AsyncIterator[McpHttpEndpoint]:
    """The ``/mcp`` endpoint over ``store``, its session manager running until exit (the
    SDK's task group lives in the gateway's lifespan). ``config``: ``mcp:`` of
    gateway.yaml (default: protection on, localhost only)."""
    security = transport_security(config or McpConfig())
    server = build_server(store, principal_from_request, settings)
    server.streamable_http_app(stateless_http=True, json_response=True, transport_security=security)
    manager = server.session_manager
    async with manager.run():
        yield McpHttpEndpoint(auth, manager.handle_request, security)


async def serve_stdio(
    store: MemoryStore, auth: Authenticator, key: str, end_user: Mapping[str, str], settings: SettingsService | None = None,
) -> None:
    """Serve the tools on stdin/stdout for ``key`` until stdin closes.

    Args:
        end_user: ``x-memgate-user`` / ``x-memgate-friend`` values (percent-encoded as
            the headers) for a service key acting for an end user; ignored for other keys.

    Raises:
        AuthenticationFailed, KeyStoreUnavailable, InvalidRequest: as
            :func:`gateway.api.guards.caller_principal`, before anything is served.
    """
    principal = await caller_principal(auth, {"authorization": f"Bearer {key}", **end_user})
    await build_server(store, lambda _ctx: principal, settings).run_stdio_async()
