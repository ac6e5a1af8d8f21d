"""Memory REST API, scoped to the caller's key.

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

Settings routes: :mod:`gateway.api.settings`; admin routes: :mod:`gateway.api.admin`;
what the routes share (caller, tenant, guards): :mod:`gateway.api.guards`.

The tenant is the key's (user_id, friend_id); a service key may name the end user with
``X-Memgate-User`` / ``X-Memgate-Friend`` as on the chat route (percent-encoded UTF-8,
:func:`gateway.proxy.auth.header_id`). Every id obeys
:func:`gateway.memory.records.tenant_id_problem`. Errors use the OpenAI
envelope: bad input 400/413/422, unknown id 404, Redis down 503 (recovers by itself). A
memory written (``POST``, ``PATCH``) with a ``metadata`` key the store keeps
(``followed_by``: :data:`gateway.memory.records.RESERVED_METADATA`) is refused, 400 naming
``metadata.followed_by`` (:func:`gateway.api.guards.check_caller_metadata`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Controller, delete, get, patch, post
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import JSONBody, PathParameter, QueryParameter
from pydantic import BaseModel, ConfigDict, Discriminator, Field, RootModel, Tag

from gateway.api.guards import api_state, check_caller_metadata, json_body_guard, provide_principal, provide_store, provide_tenant
from gateway.api.responses import errors
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
)
from gateway.runtime.errors import NotFound, UnprocessableInput
from gateway.runtime.principal import Principal

__all__ = ["MemoriesController", "MemoryBody", "MemoryId", "SearchRequest", "SearchResponse"]


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


MemoryId = Annotated[str, PathParameter(pattern=MEMORY_ID_PATTERN, description="A memory id (32 lowercase hex digits).")]


class SearchResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[ScoredMemory]


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
            check_caller_metadata(data.root.metadata)
            async with api_state(state).writes.slot(tenant.user_id):
                return await store.add(tenant, data.root)
        ingester = api_state(state).ingester_for(principal)
        if ingester is None:
            raise NotFound("conversation ingest needs the memorize plugin enabled for this key")
        if tenant.friend_id is None:
            raise UnprocessableInput("conversation ingest needs a friend: the key has no friend_id", param="friend_id")
        async with api_state(state).bulk.slot(tenant.user_id):  # one bulk call per user at a time
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
        check_caller_metadata(data.metadata)
        async with api_state(state).writes.slot(tenant.user_id):
            return await store.update(tenant, memory_id, data)

    @delete("/{memory_id:str}", summary="Erase a memory", status_code=204, responses=errors(404))
    async def delete_memory(self, tenant: NamedDependency[Tenant], store: NamedDependency[Any], memory_id: MemoryId) -> None:
        await store.delete(tenant, memory_id)
