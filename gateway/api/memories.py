"""Memory REST API (issue 3 item 7), scoped to the caller's key.

- ``GET /v1/memories`` (``scope``, ``type``, ``cursor``, ``limit``): the caller's visible
  memories, newest first, paginated.
- ``POST /v1/memories``: store one memory (:class:`NewMemory`), 201; or form memories from
  a conversation chunk (:class:`~gateway.memorization.ingest.NewConversation`, a body with
  ``messages``), 201 with their ids (:mod:`gateway.memorization.ingest`).
- ``POST /v1/memories/search``: :class:`SearchRequest` -> hits in ranking order, each
  with ``score`` (the score they are ranked by: the fused vector + keyword rank score
  plus the ``memory.ranking`` signals, in [0, 1]), ``similarity`` (the cosine similarity,
  which ``threshold`` applies to) and ``relevance`` (calibrated P(related)); see
  :class:`~gateway.memory.records.ScoredMemory`.
- ``GET | PATCH | DELETE /v1/memories/{id}``.
- Admin keys only: ``GET /v1/admin/users/{user_id}/export`` (JSONL),
  ``POST /v1/admin/users/{user_id}/import`` (JSONL body; records keep ids and times),
  ``POST /v1/admin/users/{user_id}/forget`` (erases every memory of the user and discards
  what their pending memorization jobs would write), ``GET | PUT
  /v1/admin/users/{user_id}/settings?friend_id=F`` (any user's memory settings). ``user_id``
  is best sent percent-encoded (``urllib.parse.quote(user_id, safe="")``); it may contain
  ``/``.
- ``GET | PUT /v1/memory/settings``: the caller's memory settings (:mod:`gateway.settings.memory_settings`,
  :class:`~gateway.settings.memory_settings.SettingsView`; PUT takes a :class:`~gateway.settings.memory_settings.SettingsPatch`).

The tenant is the key's (user_id, friend_id); a service key may name the end user with
``X-Memgate-User`` / ``X-Memgate-Friend`` as on the chat route (percent-encoded UTF-8,
:func:`gateway.proxy.auth.header_id`). Every id obeys
:func:`gateway.memory.records.tenant_id_problem`. Errors use the OpenAI
envelope: bad input 400/413/422, unknown id 404, Redis down 503 (recovers by itself).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from litestar import Controller, Request, delete, get, patch, post, put
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.handlers import BaseRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody, PathParameter, QueryParameter
from litestar.response import Response, Stream
from pydantic import BaseModel, ConfigDict, Discriminator, Field, RootModel, Tag, ValidationError

from gateway.lorebook.model import LoreEntry
from gateway.lorebook.upload import BookSummary, EntryBody, ImportReport, LorebookUpload
from gateway.memorization.ingest import IngestResult, NewConversation
from gateway.memory.ids import MEMORY_ID_PATTERN
from gateway.memory.records import (
    NON_BLANK_SCHEMA,
    JsonBoolean,
    JsonDateTime,
    JsonInteger,
    JsonNumber,
    MemoryPage,
    MemoryPatch,
    MemoryRecord,
    MemoryType,
    NewMemory,
    Scope,
    ScoredMemory,
    Tenant,
    check_tenant_id,
)
from gateway.memory.store import MemoryStore
from gateway.proxy.auth import Authenticator, resolve_end_user
from gateway.proxy.principal import Principal
from gateway.runtime.errors import InvalidRequest, MethodNotAllowed, NotFound, PermissionDenied, UnprocessableInput
from gateway.runtime.fair_share import INGEST, WRITES, FairShare
from gateway.runtime.json_input import check_json_body, decode_utf8
from gateway.settings.memory_settings import SettingsPatch, SettingsService, SettingsView

__all__ = ["PARAM_ALIASES", "MemoryApi", "caller_principal", "memory_controllers", "param_name", "parse_jsonl", "tenant_of"]


class SearchRequest(BaseModel):
    """Body of ``POST /v1/memories/search``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str = Field(min_length=1, json_schema_extra=NON_BLANK_SCHEMA,
                       description="Text to search for; not blank (422).")
    top_k: JsonInteger = Field(5, ge=1, le=100, description="Most hits returned.")
    threshold: JsonNumber = Field(0.0, ge=0.0, le=1.0, description="Least cosine similarity of a hit.")
    scopes: list[Scope] | None = Field(None, description="profile and/or event; None: both.")
    types: list[MemoryType] | None = Field(None, description="Memory types; None: all.")
    occurred_after: JsonDateTime | None = Field(None, description="Only memories after this.")
    occurred_before: JsonDateTime | None = Field(None, description="Only memories before this.")
    include_retired: JsonBoolean = Field(False, description="Also superseded/retired records.")


def _body_kind(value: Any) -> str:
    return "conversation" if isinstance(value, dict) and "messages" in value else "memory"


class MemoryBody(RootModel[Annotated[
    Annotated[NewMemory, Tag("memory")] | Annotated[NewConversation, Tag("conversation")], Discriminator(_body_kind),
]]):
    """Body of ``POST /v1/memories``: a :class:`NewMemory`, or, when it has ``messages``, a
    :class:`~gateway.memorization.ingest.NewConversation`."""


#: Tags of :class:`MemoryBody`'s variants, which lead validation error locations
#: (``conversation.messages.0.role``); :func:`param_name` drops them.
BODY_TAGS = ("memory", "conversation")


def param_name(key: str) -> str:
    """The request field a validation error location names: a query parameter's client
    name (:data:`PARAM_ALIASES`), a body field without its union tag (:data:`BODY_TAGS`)."""
    head, _, rest = key.partition(".")
    if head in BODY_TAGS:
        return rest
    return PARAM_ALIASES.get(key, key)


class ErrorBody(BaseModel):
    """``error`` of the OpenAI error envelope (OpenAI API reference, "Errors")."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(description="What went wrong; names the field and the reason.")
    type: str = Field(description="invalid_request_error, service_unavailable, server_error...")
    param: str | None = Field(description="The request field at fault, or null.")
    code: str | None = Field(description="Machine-readable code, or null.")


class ErrorResponse(BaseModel):
    """The OpenAI error envelope every error of the gateway uses."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorBody


_ERROR_DESCRIPTIONS = {
    400: "Invalid input: malformed JSON or UTF-8, a field that fails validation or is unknown "
         "(param names it), a malformed id.",
    401: "Missing, unknown or revoked key.",
    403: "The key may not do this (admin routes need an admin key; a locked setting or `mode: extract` not enabled for the key, param names it).",
    404: "No such memory visible to the caller (or, for a conversation chunk, no memorize plugin).",
    413: "Memory text or query longer than memory.max_text_chars.",
    422: "Well-formed but unusable: an event memory without a friend, a record of another user.",
    502: "The memory model failed or answered unusably (conversation ingest in extract mode).",
    503: "The key store or memory store is unavailable (retryable; retry-after: 1).",
}


def errors(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI responses for these error statuses, all with :class:`ErrorResponse`
    (401 and 503 are added to every route: every call authenticates)."""
    return {
        status: ResponseSpec(data_container=ErrorResponse, description=_ERROR_DESCRIPTIONS[status],
                             generate_examples=False)
        for status in sorted({400, 401, 503, *statuses})
    }


MemoryId = Annotated[str, PathParameter(pattern=MEMORY_ID_PATTERN, description="A memory id (32 lowercase hex digits).")]


class SearchResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[ScoredMemory]


class ImportResult(BaseModel):
    imported: int = Field(description="Records stored.")


class ForgetResult(BaseModel):
    user_id: str
    deleted: int = Field(description="Memory records erased.")


@dataclass(frozen=True)
class MemoryApi:
    """What the memory API needs from the running gateway (``app.state.memory_api``)."""

    auth: Authenticator
    store: MemoryStore
    forget_user: Callable[[str], Awaitable[int]]
    settings: SettingsService
    ingester_for: Callable[[Principal], Any] = lambda _principal: None
    #: Slots of bulk work (conversation ingests, lorebook and admin imports): one at a
    #: time per user, four per process (:data:`gateway.runtime.fair_share.INGEST`).
    bulk: FairShare = field(default_factory=lambda: FairShare(*INGEST))
    #: Slots of single memory writes (``POST /v1/memories`` with a NewMemory, ``PATCH``):
    #: two at a time per user, sixteen per process (:data:`gateway.runtime.fair_share.WRITES`).
    writes: FairShare = field(default_factory=lambda: FairShare(*WRITES))


def _api(state: State) -> MemoryApi:
    api: MemoryApi = state.memory_api
    return api


def _fallbacks(state: State, principal: Principal | None) -> dict[str, dict[str, Any]]:
    """What the plugins of ``principal``'s chain (None: the default chain, for the admin
    routes, which act for no key) use for the memory settings nobody set
    (:meth:`gateway.chain.chain.PluginChain.setting_fallbacks`); empty without a gateway."""
    gateway = getattr(state, "gateway", None)
    if gateway is None:
        return {}
    chain = gateway.chains.default if principal is None else gateway.chains.for_principal(principal)
    return chain.setting_fallbacks()


async def caller_principal(auth: Authenticator, headers: Mapping[str, str]) -> Principal:
    """The principal of a memory API caller from its request headers (lower-case names):
    the ``Authorization: Bearer`` key's principal, for a service key acting for the end
    user named by ``X-Memgate-User`` / ``X-Memgate-Friend``
    (:func:`gateway.proxy.auth.resolve_end_user`). The REST routes and the MCP server
    (:mod:`gateway.api.mcp`) both resolve callers here.

    Raises:
        AuthenticationFailed: missing, unknown or revoked key (401).
        KeyStoreUnavailable: the key store is unreachable (503).
        InvalidRequest: a named end-user id is invalid (400).
    """
    principal = await auth.authenticate(headers.get("authorization"))
    return resolve_end_user(principal, None, headers)


def tenant_of(principal: Principal) -> Tenant:
    """The memory tenant a principal reads and writes: ``Tenant(user_id, friend_id)``."""
    return Tenant(principal.user_id, principal.friend_id)


async def provide_principal(request: Request[Any, Any, Any], state: State) -> Principal:
    """The caller's principal (a service key may name the end user by header)."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    return await caller_principal(_api(state).auth, headers)


async def provide_tenant(principal: NamedDependency[Principal]) -> Tenant:
    """The caller's memory tenant: ``Tenant(user_id, friend_id)``."""
    return tenant_of(principal)


async def provide_store(state: State) -> Any:
    """The memory store (typed Any: litestar would isinstance-check a Protocol)."""
    return _api(state).store


async def json_body_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Bodies are checked before litestar parses them (:func:`gateway.runtime.json_input.check_json_body`):
    invalid UTF-8, nesting deeper than 128 levels and lone surrogates are 400 naming the
    field, not a decoder crash (500) after the fact."""
    if isinstance(connection, Request) and connection.method in ("POST", "PATCH", "PUT"):
        check_json_body(await connection.body())


#: Query parameters whose handler argument has another name (``scope`` is reserved by
#: litestar): validation errors name the parameter the client sent.
PARAM_ALIASES = {"memory_scope": "scope", "memory_type": "type", "book_scope": "scope", "book_id": "id"}


async def admin_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Admin keys only (403 otherwise; 401 for an unknown key)."""
    headers = {k.lower(): v for k, v in connection.headers.items()}
    principal = await _api(connection.app.state).auth.authenticate(headers.get("authorization"))
    if not principal.admin:
        raise PermissionDenied("this route needs an admin key")


class MemoriesController(Controller):
    """The caller's own memories (scoped to the key's tenant)."""

    path = "/v1/memories"
    guards = [json_body_guard]
    security = [{"bearer": []}]
    dependencies = {
        "principal": Provide(provide_principal),
        "tenant": Provide(provide_tenant),
        "store": Provide(provide_store),
    }

    @get("/", summary="List the caller's memories (newest first)", responses=errors())
    async def list_memories(
        self,
        tenant: NamedDependency[Tenant],
        store: NamedDependency[Any],
        memory_scope: Annotated[Scope | None, QueryParameter(name="scope")] = None,
        memory_type: Annotated[MemoryType | None, QueryParameter(name="type")] = None,
        cursor: Annotated[str | None, QueryParameter(
            pattern=MEMORY_ID_PATTERN, description="next_cursor of the previous page.")] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    ) -> MemoryPage:
        types = [memory_type.value] if memory_type else None
        scope = memory_scope.value if memory_scope else None
        return await store.list(tenant, scope=scope, types=types, cursor=cursor, limit=limit)

    @post("/", summary="Store a memory, or form memories from a conversation chunk", status_code=201,
          responses=errors(403, 404, 413, 422, 502),
          description="A NewMemory body stores that memory (reply: the MemoryRecord). A NewConversation body "
          "(`messages`, as mem0 and Zep take them) forms memories the way chat memorization does, now, with the "
          "caller's memorize configuration (reply: IngestResult with their ids; 404 when the caller's chain "
          "memorizes nothing; 403 naming `mode` for `mode: extract` where the caller's memorize configuration "
          "neither extracts nor has `ingest_extract`).")
    async def add_memory(
        self, state: State, principal: NamedDependency[Principal], tenant: NamedDependency[Tenant],
        store: NamedDependency[Any], data: JSONBody[MemoryBody],
    ) -> MemoryRecord | IngestResult:
        if isinstance(data.root, NewMemory):
            async with _api(state).writes.slot(tenant.user_id):
                return await store.add(tenant, data.root)
        ingester = _api(state).ingester_for(principal)
        if ingester is None:
            raise NotFound("conversation ingest needs the memorize plugin enabled for this key")
        if tenant.friend_id is None:
            raise UnprocessableInput("conversation ingest needs a friend: the key has no friend_id", param="friend_id")
        async with _api(state).bulk.slot(tenant.user_id):  # one bulk call per user at a time
            return await ingester.ingest(tenant, data.root)

    @post("/search", summary="Search the caller's memories", status_code=200, responses=errors(413, 422))
    async def search_memories(self, tenant: NamedDependency[Tenant], store: NamedDependency[Any], data: JSONBody[SearchRequest]) -> SearchResponse:
        hits = await store.search(
            tenant, data.query, top_k=data.top_k, threshold=data.threshold,
            scopes=[s.value for s in data.scopes] if data.scopes else None,
            types=[t.value for t in data.types] if data.types else None,
            occurred_after=data.occurred_after, occurred_before=data.occurred_before,
            include_retired=data.include_retired,
        )
        return SearchResponse(data=hits)

    @get("/{memory_id:str}", summary="Get one memory", responses=errors(404))
    async def get_memory(self, tenant: NamedDependency[Tenant], store: NamedDependency[Any], memory_id: MemoryId) -> MemoryRecord:
        return await store.get(tenant, memory_id)

    @patch("/{memory_id:str}", summary="Change a memory (re-embedded if its text changes)", responses=errors(404, 413, 422))
    async def patch_memory(
        self, state: State, tenant: NamedDependency[Tenant], store: NamedDependency[Any], memory_id: MemoryId,
        data: JSONBody[MemoryPatch],
    ) -> MemoryRecord:
        async with _api(state).writes.slot(tenant.user_id):
            return await store.update(tenant, memory_id, data)

    @delete("/{memory_id:str}", summary="Erase a memory", status_code=204, responses=errors(404))
    async def delete_memory(self, tenant: NamedDependency[Tenant], store: NamedDependency[Any], memory_id: MemoryId) -> None:
        await store.delete(tenant, memory_id)


class MemorySettingsController(Controller):
    """The caller's memory settings (:mod:`gateway.settings.memory_settings`): the key's user and friend,
    or the end user a service key names with ``X-Memgate-User`` / ``X-Memgate-Friend``.
    Effective values include the key's own overrides (``memgate keys create --set``)."""

    path = "/v1/memory/settings"
    guards = [json_body_guard]
    security = [{"bearer": []}]
    dependencies = {"principal": Provide(provide_principal)}

    @get("/", summary="The caller's memory settings", responses=errors())
    async def get_settings(self, state: State, principal: NamedDependency[Principal]) -> SettingsView:
        return await _api(state).settings.view(
            principal.user_id, principal.friend_id, principal.settings, _fallbacks(state, principal))

    @put("/", summary="Change the caller's memory settings (null: back to the default)", responses=errors(403))
    async def put_settings(
        self, state: State, principal: NamedDependency[Principal], data: JSONBody[SettingsPatch]
    ) -> SettingsView:
        return await _api(state).settings.update(
            principal.user_id, principal.friend_id, data.changes(), principal.settings, _fallbacks(state, principal)
        )


#: The admin actions and the methods each answers (others: 405 with ``Allow``).
ADMIN_ACTIONS: dict[str, tuple[str, ...]] = {
    "export": ("GET",), "import": ("POST",), "forget": ("POST",), "settings": ("GET", "PUT"),
}


def admin_target(path: str, actions: tuple[str, ...], method: str = "GET") -> tuple[str, str]:
    """``(user_id, action)`` from the part of an admin path after ``/v1/admin/users``.

    The id is everything between ``/v1/admin/users/`` and the last ``/`` (the action is
    always the last segment), so ids containing ``/`` work whether the client sends them
    percent-encoded (``urllib.parse.quote(user_id, safe="")``, decoded by the HTTP server
    before routing) or raw.

    ``actions``: the actions the calling handler serves; ``method``: the request's method.

    Raises:
        MethodNotAllowed: the action exists for another method (405 with ``Allow``).
        NotFound: the last segment is no admin action (404).
        InvalidRequest: the id fails :func:`gateway.memory.records.check_tenant_id` (400).
    """
    user_id, _, action = path.removeprefix("/").rpartition("/")
    if action not in actions and action in ADMIN_ACTIONS:
        raise MethodNotAllowed(method, ADMIN_ACTIONS[action])
    if action not in actions:
        raise NotFound(f"no admin route {path!r}: use /v1/admin/users/{{user_id}}/" + "|".join(actions))
    return check_tenant_id(user_id, "user_id"), action


FriendQuery = Annotated[str | None, QueryParameter(
    min_length=1, max_length=256, description="The friend (persona) whose settings are meant (required).")]


class AdminUsersController(Controller):
    """Admin keys only: export, import, forget any user; read and change any user's memory
    settings (``settings?friend_id=F``: the yaml defaults and the stored values; a key's
    own overrides are not part of this view, as a user may use several keys).

    Routes are ``/v1/admin/users/{user_id}/export|import|forget|settings``; ``user_id`` may
    contain ``/`` (one ``:path`` parameter per method, split by :func:`admin_target`).
    """

    path = "/v1/admin/users"
    guards = [admin_guard, json_body_guard]
    security = [{"bearer": []}]
    dependencies = {"store": Provide(provide_store)}

    @get("/{target:path}", summary="GET {user_id}/export: a user's memories as JSONL (user_id percent-encoded); "
         "GET {user_id}/settings?friend_id=F: a user's memory settings (SettingsView JSON)",
         responses=errors(403, 404), media_type="application/x-ndjson",
         description="export: one MemoryRecord JSON per line. settings: a SettingsView (application/json).")
    async def export_user(
        self, state: State, store: NamedDependency[Any], target: FromPath[str], friend_id: FriendQuery = None
    ) -> Response[Any]:
        user_id, action = admin_target(target, ("export", "settings"), "GET")
        if action == "settings":  # JSON, a SettingsView (one handler per method and path)
            view = await _api(state).settings.view(user_id, _friend(friend_id), {}, _fallbacks(state, None))
            return Response(view.model_dump(mode="json"), media_type="application/json")
        records = store.export_user(user_id)

        async def lines() -> AsyncIterator[bytes]:
            async for record in records:
                yield (record.model_dump_json() + "\n").encode()

        return Stream(lines(), media_type="application/x-ndjson")

    @post(
        "/{target:path}", status_code=200, responses=errors(403, 404, 422),
        summary="POST {user_id}/import (JSONL body) or {user_id}/forget (erase everything of the user)",
        description="import: JSON Lines, one MemoryRecord per line (what export writes); records keep "
        "their ids and times; an empty body imports nothing. forget: erases every memory of the user "
        "and discards what their pending memorization jobs would write.",
    )
    async def import_or_forget(
        self, request: Request[Any, Any, Any], state: State, store: NamedDependency[Any], target: FromPath[str]
    ) -> ImportResult | ForgetResult:
        user_id, action = admin_target(target, ("import", "forget"), "POST")
        if action == "forget":
            return ForgetResult(user_id=user_id, deleted=await _api(state).forget_user(user_id))
        async with _api(state).bulk.slot(user_id):
            records = parse_jsonl(await request.body(), user_id)
            return ImportResult(imported=await store.import_records(records))

    @put("/{target:path}", summary="PUT {user_id}/settings?friend_id=F: change a user's memory settings",
         responses=errors(403, 404), description="Body: SettingsPatch (null: back to the default); "
         "answers the SettingsView.")
    async def put_user_settings(
        self, state: State, target: FromPath[str], data: JSONBody[SettingsPatch], friend_id: FriendQuery = None
    ) -> SettingsView:
        user_id, _ = admin_target(target, ("settings",), "PUT")
        return await _api(state).settings.update(
            user_id, _friend(friend_id), data.changes(), {}, _fallbacks(state, None))


def _friend(friend_id: str | None) -> str:
    """The required ``friend_id`` query parameter of the admin settings routes.

    Raises:
        InvalidRequest: absent or breaking the id rules (400, ``param`` friend_id).
    """
    if friend_id is None:
        raise InvalidRequest("friend_id: query parameter required (the friend whose settings are meant)",
                             param="friend_id")
    return check_tenant_id(friend_id, "friend_id")


#: The memory API's models whose OpenAPI component schemas come from pydantic itself
#: (request bodies in validation mode, replies in serialization mode). Litestar's own
#: generator drops ``extra="forbid"`` (``additionalProperties: false``) and zero-valued
#: bounds (``ge=0``), so the served schema would not match what the API enforces.
REQUEST_MODELS: tuple[type[BaseModel], ...] = (
    MemoryBody, NewMemory, NewConversation, MemoryPatch, SearchRequest, LorebookUpload, EntryBody, SettingsPatch)
REPLY_MODELS: tuple[type[BaseModel], ...] = (
    MemoryRecord, MemoryPage, ScoredMemory, SearchResponse, ImportResult, ForgetResult, ErrorResponse,
    ImportReport, BookSummary, LoreEntry, IngestResult, SettingsView,
)


def apply_pydantic_schemas(
    openapi: dict[str, Any], requests: tuple[type[BaseModel], ...] = (), replies: tuple[type[BaseModel], ...] = (),
) -> None:
    """Replace, in a served OpenAPI document (a dict), the component schemas of
    :data:`REQUEST_MODELS` and :data:`REPLY_MODELS` (and of other routes' ``requests``
    and ``replies`` models, e.g. :mod:`gateway.api.admin.console_api`'s) with pydantic's JSON Schemas
    (nested models and enums hoisted into components too)."""
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    template = "#/components/schemas/{model}"
    modes: tuple[tuple[tuple[type[BaseModel], ...], Literal['validation', 'serialization']], ...] = (
        ((*REPLY_MODELS, *replies), "serialization"), ((*REQUEST_MODELS, *requests), "validation"),
    )
    for models, mode in modes:
        for model in models:
            schema = model.model_json_schema(ref_template=template, mode=mode)
            for name, nested in schema.pop("$defs", {}).items():
                schemas.setdefault(name, nested) if name in _OWN_NAMES else schemas.__setitem__(name, nested)
            schemas[model.__name__] = schema


_OWN_NAMES = frozenset(m.__name__ for m in (*REQUEST_MODELS, *REPLY_MODELS))


def memory_controllers() -> list[type[Controller]]:
    """The memory API's controllers (their dependencies resolve from app state)."""
    return [MemoriesController, AdminUsersController, MemorySettingsController]


def parse_jsonl(body: bytes, user_id: str | None = None) -> list[MemoryRecord]:
    """Records from JSONL (one :class:`MemoryRecord` JSON per line; blank lines skipped).

    Raises:
        InvalidRequest: the body is not UTF-8 (400).
        UnprocessableInput: a line is not a valid record (its line number is named), or
            ``user_id`` is given and a record belongs to another user.
    """
    records = []
    for number, line in enumerate(decode_utf8(body).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = MemoryRecord.model_validate_json(line)
        except ValidationError as exc:
            raise UnprocessableInput(f"line {number}: not a memory record: {exc.errors()[:2]}") from None
        if user_id is not None and record.user_id != user_id:
            raise UnprocessableInput(f"line {number}: record belongs to user {record.user_id!r}, not {user_id!r}")
        records.append(record)
    return records
