"""Client keys kept in Redis, managed by ``memgate keys create|list|revoke``.

Keys are hashed at rest: Redis holds only the hex SHA-256 of a key, never the key.
Layout (``<p>`` is the key prefix, ``mg`` by default):

- ``<p>:keys:h:<sha256>`` hash: ``key_id``, ``user_id``, ``friend_id``, ``admin``,
  ``service``, ``group`` (absent on keys minted before it: 0), ``allowed_models`` (JSON list), ``plugins`` (JSON),
  ``settings`` (JSON: the key's memory settings overrides, :mod:`gateway.settings.memory_settings`; absent in older records),
  ``created_at``, ``revoked_at`` (empty while valid). A revoked key's record stays for audit.
- ``<p>:keys:ids`` hash: ``key_id`` -> sha256, for ``list`` and ``revoke`` by id.

A key is ``mgk-`` followed by 43 url-safe characters (256 random bits).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from gateway.memory.records import check_tenant_id
from gateway.runtime.config import PluginOverride
from gateway.runtime.errors import InvalidRequest, KeyStoreUnavailable, NotFound, PermissionDenied
from gateway.runtime.principal import Principal
from gateway.settings.memory_settings import CORE, SettingsSchema

__all__ = ['RedisKeyStore', 'StoredKey', 'key_digest']


def key_digest(key: str) -> str:
    """Hex SHA-256 of a presented key."""
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class StoredKey:
    """A key record as listed (never the key itself)."""

    key_id: str
    digest: str
    principal: Principal
    created_at: float
    revoked_at: float | None

    def summary(self) -> dict[str, Any]:
        p = self.principal
        return {
            "key_id": self.key_id,
            "user_id": p.user_id,
            "friend_id": p.friend_id,
            "admin": p.admin,
            "service": p.service,
            "group": p.group,
            "allowed_models": list(p.allowed_models),
            "settings": dict(p.settings),
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


class RedisKeyStore:
    """Create, look up, list and revoke client keys in Redis.

    Every method raises :class:`KeyStoreUnavailable` (503) when Redis cannot be reached.
    """

    def __init__(self, redis: aioredis.Redis, prefix: str = "mg") -> None:
        self._redis = redis
        self._prefix = prefix

    def _record_key(self, digest: str) -> str:
        return f"{self._prefix}:keys:h:{digest}"

    @property
    def _ids_key(self) -> str:
        return f"{self._prefix}:keys:ids"

    async def create(
        self,
        user_id: str,
        friend_id: str = "default",
        *,
        admin: bool = False,
        service: bool = False,
        allowed_models: tuple[str, ...] = ("*",),
        plugins: dict[str, PluginOverride] | None = None,
        group: bool = False,
        settings: dict[str, Any] | None = None,
        locked: tuple[str, ...] = (),
        schema: SettingsSchema = CORE,
    ) -> tuple[str, StoredKey]:
        """Mint a key. Returns ``(key, record)``; the key is shown once and not stored.

        ``settings``: the key's memory settings overrides (:mod:`gateway.settings.memory_settings`);
        ``locked``: the operator's locked names (``settings.locked``), refused here;
        ``schema``: the gateway's settings (the core's and its plugins',
        :func:`gateway.chain.chain.settings_schema`) the ``settings`` are checked against.

        Raises:
            InvalidRequest: ``user_id`` or ``friend_id`` breaks the id rules
                (:func:`gateway.memory.records.check_tenant_id`), or a setting is unknown or
                out of range (``param`` is its name), or ``group`` without ``service``
                (``param``: ``group``).
            PermissionDenied: a setting is locked (``param`` is its name).
        """
        check_tenant_id(user_id, "user_id")
        check_tenant_id(friend_id, "friend_id")
        if group and not service:
            raise InvalidRequest("group: a group key must be a service key", param="group")
        overrides = {k: v for k, v in schema.check(settings or {}, "settings.").items() if v is not None}
        for name in overrides:
            if name in locked:
                raise PermissionDenied(f"settings.{name}: locked by the operator (settings.locked)", param=name)
        key = "mgk-" + secrets.token_urlsafe(32)
        digest = key_digest(key)
        key_id = "k_" + secrets.token_hex(6)
        now = time.time()
        fields = {
            "key_id": key_id,
            "user_id": user_id,
            "friend_id": friend_id,
            "admin": int(admin),
            "service": int(service),
            "group": int(group),
            "allowed_models": json.dumps(list(allowed_models)),
            "plugins": json.dumps({k: v.model_dump() for k, v in (plugins or {}).items()}),
            "settings": json.dumps(overrides),
            "created_at": now,
            "revoked_at": "",
        }
        try:
            # two writes, the id index first: the record and the index are in different
            # hash slots on Redis Cluster (no MULTI across slots). A create that fails in
            # between leaves an id without a record, which list() skips and no lookup
            # finds (the key was never handed out).
            await self._redis.hset(self._ids_key, key_id, digest)
            await self._redis.hset(self._record_key(digest), mapping=fields)
        except RedisError as exc:
            raise KeyStoreUnavailable(f"key store unreachable: {exc}") from None
        return key, _stored(digest, {k: str(v) for k, v in fields.items()})

    async def lookup(self, digest: str) -> Principal | None:
        """The principal of a valid key, None if unknown or revoked."""
        try:
            raw = await self._redis.hgetall(self._record_key(digest))
        except RedisError as exc:
            raise KeyStoreUnavailable(f"key store unreachable: {exc}") from None
        if not raw:
            return None
        stored = _stored(digest, _decode(raw))
        return None if stored.revoked_at else stored.principal

    async def list(self) -> list[StoredKey]:
        """Every key record, revoked ones included, oldest first."""
        try:
            ids = await self._redis.hgetall(self._ids_key)
            async with self._redis.pipeline(transaction=False) as pipe:
                for digest in ids.values():
                    pipe.hgetall(self._record_key(_s(digest)))
                rows = await pipe.execute()
        except RedisError as exc:
            raise KeyStoreUnavailable(f"key store unreachable: {exc}") from None
        out = [_stored(_s(d), _decode(r)) for d, r in zip(ids.values(), rows, strict=True) if r]
        return sorted(out, key=lambda s: s.created_at)

    async def revoke(self, key_id: str) -> StoredKey:
        """Mark a key revoked (kept for audit). Raises NotFound for an unknown id."""
        try:
            digest = await self._redis.hget(self._ids_key, key_id)
            if digest is None:
                raise NotFound(f"no key with id {key_id!r}")
            digest = _s(digest)
            await self._redis.hset(self._record_key(digest), "revoked_at", time.time())
            raw = await self._redis.hgetall(self._record_key(digest))
        except RedisError as exc:
            raise KeyStoreUnavailable(f"key store unreachable: {exc}") from None
        return _stored(digest, _decode(raw))


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _decode(raw: dict[Any, Any]) -> dict[str, str]:
    return {_s(k): _s(v) for k, v in raw.items()}


def _stored(digest: str, f: dict[str, str]) -> StoredKey:
    plugins = {k: PluginOverride(**v) for k, v in json.loads(f.get("plugins") or "{}").items()}
    principal = Principal(
        key_id=f["key_id"],
        user_id=f["user_id"],
        friend_id=f.get("friend_id") or "default",
        admin=f.get("admin") == "1",
        service=f.get("service") == "1",
        group=f.get("group") == "1",
        allowed_models=tuple(json.loads(f.get("allowed_models") or '["*"]')),
        plugins=plugins,
        settings=json.loads(f.get("settings") or "{}"),
    )
    revoked = f.get("revoked_at") or ""
    return StoredKey(
        key_id=f["key_id"],
        digest=digest,
        principal=principal,
        created_at=float(f.get("created_at") or 0),
        revoked_at=float(revoked) if revoked else None,
    )
