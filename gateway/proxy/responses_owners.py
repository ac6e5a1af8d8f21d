"""Who created each stored response: tenancy of the ``/v1/responses`` routes.

Every memgate key calls the upstream with the operator's one upstream key, so the
upstream cannot tell tenants apart: a response id is readable, cancellable, deletable and
continuable (``previous_response_id``) by anyone holding it. The gateway therefore records
the tenant, ``(user_id, friend_id)`` of the principal the create ran as (a service key's
named end user included), of every response id a create returned, and lets only that
tenant use the id afterwards; any other key gets the upstream's own not-found answer
(:class:`ResponseNotFound`, :class:`PreviousResponseNotFound`), so an id's existence
is not revealed either. An id the gateway never recorded (created before this record
existed, directly at the upstream, or expired) is not found for everyone but admin keys.
Admin keys (which may already act on any user) pass every check.

Storage: ``<p>:responses:owner:<id>`` (``<p>`` the memory key prefix) holds
``{"user", "friend", "from"}`` as JSON (``from``: the ``previous_response_id`` the
response continued, or null), written before the client sees the id and expiring after
``upstream.responses_retention_s`` (the upstream's own retention of stored responses;
OpenAI keeps them 30 days). Deleting a response through the gateway deletes its record.

Ids are checked with :data:`RESPONSE_ID` (letters, digits and ``_ - . = +``, not
starting with ``.``, at most 512 characters: OpenAI's ``resp_<hex>`` and the base64 ids
of some compatible servers): a segment such as ``..`` or one with a ``/`` (``%2F``) never
names a response, and the route percent-encodes the id it sends, so no upstream path
built from an id can climb out of ``/responses/``.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from gateway.errors import MemoryUnavailable, NotFound
from gateway.proxy.principal import Principal

if TYPE_CHECKING:
    import redis.asyncio as aioredis

__all__ = ["RESPONSE_ID", "PreviousResponseNotFound", "ResponseNotFound", "ResponseOwners"]

log = logging.getLogger("memgate.proxy")

#: What a response id in a path may be (module docstring).
RESPONSE_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.=+-]{0,511}")


def _shown(response_id: str) -> str:
    return response_id if len(response_id) <= 80 else response_id[:80] + "..."


class ResponseNotFound(NotFound):
    """The upstream's answer for an unknown stored response (404,
    ``invalid_request_error``, no code), also given for another tenant's id."""

    code = None  # type: ignore[assignment]  # the upstream sends no code

    def __init__(self, response_id: str) -> None:
        super().__init__(f"Response with id '{_shown(response_id)}' not found.")


class PreviousResponseNotFound(NotFound):
    """The upstream's answer for an unknown ``previous_response_id`` on create (404,
    ``param: previous_response_id``, ``code: previous_response_not_found``)."""

    code = "previous_response_not_found"

    def __init__(self, response_id: str) -> None:
        super().__init__(f"Previous response with id '{_shown(response_id)}' not found.",
                         param="previous_response_id")


class ResponseOwners:
    """The records of the module docstring in Redis.

    Args:
        redis: the gateway's Redis client.
        prefix: the memory key prefix.
        ttl_s: seconds a record lives (the upstream's retention).
    """

    def __init__(self, redis: aioredis.Redis, prefix: str, ttl_s: float) -> None:
        self._redis = redis
        self._prefix = prefix
        self._ttl_ms = max(1, int(ttl_s * 1000))

    def key(self, response_id: str) -> str:
        return f"{self._prefix}:responses:owner:{response_id}"

    async def record(self, response_id: str, principal: Principal, continued: str | None) -> None:
        """Record ``principal``'s tenant as the creator of ``response_id``.

        Raises:
            MemoryUnavailable: Redis failed (503).
        """
        value = json.dumps({"user": principal.user_id, "friend": principal.friend_id, "from": continued},
                           ensure_ascii=False)
        try:
            await self._redis.set(self.key(response_id), value, px=self._ttl_ms)
        except RedisError as exc:
            raise MemoryUnavailable(f"response owner record: {exc!r}") from None

    async def owns(self, response_id: str, principal: Principal) -> bool:
        """True when ``principal`` may use ``response_id``: an admin key, or the tenant
        recorded for it.

        Raises:
            MemoryUnavailable: Redis failed (503: the check fails closed).
        """
        if principal.admin:
            return True
        if RESPONSE_ID.fullmatch(response_id) is None:
            return False
        try:
            raw: Any = await self._redis.get(self.key(response_id))
        except RedisError as exc:
            raise MemoryUnavailable(f"response owner lookup: {exc!r}") from None
        if raw is None:
            return False
        try:
            owner = json.loads(raw)
        except ValueError:
            return False
        return isinstance(owner, dict) and owner.get("user") == principal.user_id \
            and owner.get("friend") == principal.friend_id

    async def forget(self, response_id: str) -> None:
        """Drop the record of a deleted response (a failure only leaves it to expire)."""
        try:
            await self._redis.delete(self.key(response_id))
        except RedisError as exc:
            log.warning("response owner record of %s not deleted: %r", response_id, exc)
