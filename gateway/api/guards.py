"""Who calls an HTTP API and whether they may: the dependencies (caller, tenant, store)
and guards (JSON body checks, admin keys) that every non-proxy HTTP surface shares
(memories, settings, lorebooks, admin), the caller resolution MCP uses too, and
:class:`MemoryApi`, what these surfaces need from the running gateway
(``app.state.memory_api``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.handlers import BaseRouteHandler

from gateway.memory.records import Tenant, reserved_metadata
from gateway.memory.store import MemoryStore
from gateway.proxy.auth import Authenticator, resolve_end_user
from gateway.runtime.errors import InvalidRequest, PermissionDenied
from gateway.runtime.fair_share import INGEST, WRITES, FairShare
from gateway.runtime.json_input import check_json_body
from gateway.runtime.principal import Principal
from gateway.settings.memory_settings import SettingsService

__all__ = [
    "MemoryApi", "admin_guard", "api_state", "caller_principal", "check_caller_metadata", "json_body_guard", "provide_principal",
    "provide_store", "provide_tenant", "require_admin", "require_admin_or_service", "setting_fallbacks", "tenant_of",
]


@dataclass(frozen=True)
class MemoryApi:
    """What the HTTP APIs need from the running gateway (``app.state.memory_api``)."""

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


def api_state(state: State) -> MemoryApi:
    """The running gateway's :class:`MemoryApi` (``app.state.memory_api``)."""
    api: MemoryApi = state.memory_api
    return api


def setting_fallbacks(state: State, principal: Principal | None) -> dict[str, dict[str, Any]]:
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
    return await caller_principal(api_state(state).auth, headers)


async def provide_tenant(principal: NamedDependency[Principal]) -> Tenant:
    """The caller's memory tenant: ``Tenant(user_id, friend_id)``."""
    return tenant_of(principal)


async def provide_store(state: State) -> Any:
    """The memory store (typed Any: litestar would isinstance-check a Protocol)."""
    return api_state(state).store


async def json_body_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Bodies are checked before litestar parses them (:func:`gateway.runtime.json_input.check_json_body`):
    invalid UTF-8, nesting deeper than 128 levels and lone surrogates are 400 naming the
    field, not a decoder crash (500) after the fact."""
    if isinstance(connection, Request) and connection.method in ("POST", "PATCH", "PUT"):
        check_json_body(await connection.body())


async def admin_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Admin keys only (403 otherwise; 401 for an unknown key)."""
    headers = {k.lower(): v for k, v in connection.headers.items()}
    principal = await api_state(connection.app.state).auth.authenticate(headers.get("authorization"))
    require_admin(principal)


def require_admin(principal: Principal) -> None:
    """Raises PermissionDenied (403) unless ``principal`` holds an admin key."""
    if not principal.admin:
        raise PermissionDenied("this route needs an admin key")


def require_admin_or_service(principal: Principal, what: str, param: str | None = None) -> None:
    """Raises PermissionDenied (403, ``param`` named) unless ``principal`` holds an admin
    or a service key; ``what`` names the action in the message ("``what`` needs an admin
    or service key")."""
    if not (principal.admin or principal.service):
        raise PermissionDenied(f"{what} needs an admin or service key", param=param)


def check_caller_metadata(metadata: dict[str, Any] | None) -> None:
    """Refuse a caller's ``metadata`` that holds a key the store writes itself
    (:func:`gateway.memory.records.reserved_metadata`: ``followed_by``, the ids of the
    memories that follow this one, kept from their ``metadata.follows``).

    Raises:
        InvalidRequest: 400, ``param`` the key (``metadata.followed_by``).
    """
    field = reserved_metadata(metadata)
    if field is not None:
        raise InvalidRequest(f"{field} is kept by the store (the memories whose metadata.follows names this one); "
                             "leave it out, or link the newer memory with its metadata.follows", param=field)
