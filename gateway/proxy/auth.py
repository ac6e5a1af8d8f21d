"""``Authorization: Bearer <key>`` -> :class:`Principal`.

Keys from ``clients:`` in gateway.yaml are checked first (in memory); others are looked
up in the Redis key store and cached for ``auth.cache_ttl_seconds`` (valid and unknown
alike), which bounds how long a revoked key keeps working on any gateway process
(openai-compat checklist item 4). Missing or unknown key: 401 without echoing the key;
key store unreachable: 503, never 401 (items 2-3).

Only a ``service`` key may name the end user per request, with the body's ``user`` field
or the ``X-Memgate-User`` / ``X-Memgate-Friend`` headers; for any other key these are
ignored for identity (``user`` is still forwarded upstream untouched).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from gateway.config import ClientConfig
from gateway.errors import AuthenticationFailed, InvalidRequest
from gateway.proxy.keystore import RedisKeyStore, key_digest
from gateway.proxy.principal import Principal

USER_HEADER = "x-memgate-user"
FRIEND_HEADER = "x-memgate-friend"
_MAX_CACHE = 50_000
_MAX_ID_LEN = 256


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


def resolve_end_user(
    principal: Principal, body_user: object, headers: dict[str, str]
) -> Principal:
    """Apply a service key's per-request end-user naming; other keys are returned as is.

    Headers win over the body's ``user``. An ordinary key's ids never change.

    Raises:
        InvalidRequest: a named id is longer than 256 characters or contains NUL (400).
    """
    if not principal.service:
        return principal
    user = headers.get(USER_HEADER) or (body_user if isinstance(body_user, str) else None)
    friend = headers.get(FRIEND_HEADER)
    for value in (user, friend):
        if value is not None and (len(value) > _MAX_ID_LEN or "\x00" in value):
            raise InvalidRequest(
                "end-user id must be 1-256 characters without NUL", param="user"
            )
    if not user and not friend:
        return principal
    return principal.acting_as(user, friend)
