"""``Authorization: Bearer <key>`` -> :class:`Principal`.

Keys from ``clients:`` in gateway.yaml are checked first (in memory); others are looked
up in the Redis key store and cached for ``auth.cache_ttl_s`` (valid and unknown
alike), which bounds how long a revoked key keeps working on any gateway process
(openai-compat checklist item 4). Missing or unknown key: 401 without echoing the key;
key store unreachable: 503, never 401 (items 2-3).

Only a ``service`` key may name the end user per request, with the body's ``user`` field
or the ``X-Memgate-User`` / ``X-Memgate-Friend`` headers (percent-encoded UTF-8, see
:func:`header_id`); for any other key these are ignored for identity (``user`` is still
forwarded upstream untouched). Every named id obeys
:func:`gateway.memory.records.tenant_id_problem`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import unquote

from gateway.config import ClientConfig
from gateway.memory.records import check_tenant_id
from gateway.proxy.keystore import RedisKeyStore, key_digest
from gateway.runtime.errors import AuthenticationFailed, InvalidRequest
from gateway.runtime.principal import Principal

__all__ = ['FRIEND_HEADER', 'FRIEND_HEADER_NAME', 'USER_HEADER', 'USER_HEADER_NAME', 'Authenticator', 'header_id', 'principal_from_client', 'resolve_end_user']

USER_HEADER_NAME = "X-Memgate-User"
FRIEND_HEADER_NAME = "X-Memgate-Friend"
USER_HEADER = USER_HEADER_NAME.lower()
FRIEND_HEADER = FRIEND_HEADER_NAME.lower()
_MAX_CACHE = 50_000


def principal_from_client(client: ClientConfig) -> Principal:
    """The principal of a key declared in gateway.yaml."""
    return Principal(
        key_id=client.key_id or client.digest[:12],
        user_id=client.user_id,
        friend_id=client.friend_id,
        admin=client.admin,
        service=client.service,
        allowed_models=tuple(client.allowed_models),
        plugins=dict(client.plugins),
        group=client.group,
        settings=dict(client.settings),
        shared_ids={kind: frozenset(ids) for kind, ids in client.responses_shared_ids.model_dump().items() if ids},
    )


class Authenticator:
    """Resolves bearer keys; see the module docstring for the rules."""

    def __init__(
        self,
        clients: Iterable[ClientConfig],
        store: RedisKeyStore | None,
        cache_ttl: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._static = {c.digest: principal_from_client(c) for c in clients}
        self._store = store
        self._ttl = cache_ttl
        self._clock = clock
        self._cache: dict[str, tuple[Principal | None, float]] = {}

    async def authenticate(self, authorization: str | None) -> Principal:
        """The principal for an ``Authorization`` header value.

        Raises:
            AuthenticationFailed: missing, malformed, unknown or revoked key (401).
            KeyStoreUnavailable: the Redis key store is unreachable (503).
        """
        key = _bearer(authorization)
        if key is None:
            raise AuthenticationFailed(
                "Missing API key: send it as `Authorization: Bearer <key>`."
            )
        digest = key_digest(key)
        principal = self._static.get(digest)
        if principal is None:
            principal = await self._lookup(digest)
        if principal is None:
            raise AuthenticationFailed("Incorrect API key provided.")
        return principal

    async def _lookup(self, digest: str) -> Principal | None:
        now = self._clock()
        hit = self._cache.get(digest)
        if hit is not None and hit[1] > now:
            return hit[0]
        if self._store is None:
            return None
        principal = await self._store.lookup(digest)
        if len(self._cache) >= _MAX_CACHE:
            self._cache.clear()
        self._cache[digest] = (principal, now + self._ttl)
        return principal


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, key = authorization.partition(" ")
    key = key.strip()
    if scheme.lower() != "bearer" or not key:
        return None
    return key


def header_id(value: str, header: str) -> str:
    """The id carried by an ``X-Memgate-User`` / ``X-Memgate-Friend`` header value.

    Header values are ASCII; an id is sent percent-encoded as UTF-8 (what
    ``urllib.parse.quote(id, safe="")`` gives), so ``caf%C3%A9`` is ``café`` and a literal
    ``%`` travels as ``%25``. The decoded id must pass
    :func:`gateway.memory.records.check_tenant_id`, the same rules as a body ``user``.

    Raises:
        InvalidRequest: non-ASCII bytes in the header (ASGI servers decode them as
            latin-1, which would silently give another id), a percent-encoding that is not
            UTF-8, or a decoded id the rules reject (400, ``param`` is the header name).
    """
    if not value.isascii():
        raise InvalidRequest(
            f"{header}: header values must be ASCII; send the id percent-encoded as UTF-8 "
            "(urllib.parse.quote(id, safe=''))",
            param=header,
        )
    try:
        decoded = unquote(value, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise InvalidRequest(
            f"{header}: the percent-encoded id is not valid UTF-8", param=header
        ) from None
    return check_tenant_id(decoded, header)


def resolve_end_user(
    principal: Principal, body_user: object, headers: Mapping[str, str]
) -> Principal:
    """Apply a service key's per-request end-user naming; other keys are returned as is.

    Args:
        body_user: the chat body's ``user`` field (None when absent, or on routes
            without a body).
        headers: request headers with lower-case names.

    A present ``X-Memgate-User`` header wins over the body's ``user`` (which is then not
    used for identity); whichever names the user, and a present ``X-Memgate-Friend``, is
    validated even when empty, so an empty id is an error, never the service key's own
    tenant. Header ids are decoded by :func:`header_id`; body ids are used as
    sent. An ordinary key's ids never change and these fields are not checked for it.
    For a group key (:mod:`gateway.speakers.group`) the body ``user`` is the group, not an
    identity: only the header names the namespace.

    Raises:
        InvalidRequest: a named id fails :func:`gateway.memory.records.check_tenant_id`
            (400, ``param``: ``user``, ``X-Memgate-User`` or ``X-Memgate-Friend``).
    """
    if not principal.service:
        return principal
    user: str | None = None
    if USER_HEADER in headers:
        user = header_id(headers[USER_HEADER], USER_HEADER_NAME)
    elif body_user is not None and not principal.group:
        user = check_tenant_id(body_user, "user")
    friend = header_id(headers[FRIEND_HEADER], FRIEND_HEADER_NAME) if FRIEND_HEADER in headers else None
    if user is None and friend is None:
        return principal
    return principal.acting_as(user, friend)
