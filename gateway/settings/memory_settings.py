"""Per-user memory settings (seed 002 §5, seed 000's UI switches).

Ten settings per ``(user_id, friend_id)``, with their seed defaults and bounds
(:class:`MemorySettings`):

======================  =======  =========  ==============================================
name                    type     default    what (source)
======================  =======  =========  ==============================================
``recall_enabled``      bool     true       recall before the answer at all (seed 002 §5.1
                                            "启用记忆召回"): off, no recall plugin runs
``recall_rounds``       1-5      3          most recall-agent / memory_search rounds (§5.1)
``profile_topk``        1-10     5          most profile memories recalled (§5.1)
``event_topk``          1-10     5          most event memories recalled (§5.1)
``similarity_threshold`` 0-1     0.5        lowest cosine a recalled memory needs (§5.1)
``show_tool_calls``     bool     false      show the recall step to the client (§5.2)
``show_thinking``       bool     false      show the recall agent's reasoning (§5.2)
``auto_recall``         bool     true       seed 000 P1 switch (autoRecallEnabled): the
                                            per-request search of the seed 000 path
``personalization``     bool     true       seed 000 P3: the personalization section
``inference``           bool     true       seed 000 P4: may this user's conversations
                                            trigger memory inference (it runs only where
                                            the operator enabled ``memorize``'s
                                            ``inference.enabled``, off by default, seed
                                            000's ``inferenceEnabled: false``)
======================  =======  =========  ==============================================

Precedence, lowest first (:func:`effective`): the built-in defaults above <
``settings.defaults`` in ``gateway.yaml`` < the key's own overrides (``memgate keys
create --set name=value``, stored with the key record) < the values stored for the user
and friend (``PUT /v1/memory/settings``). A name in ``settings.locked`` always takes the
yaml (else built-in) default: locks win over everything, and writing a locked name is
refused (403).

How plugins apply them: the chain hands the effective values to every hook as
``call.settings`` (:class:`CallSettings`). A plugin declares the boolean switches that must
be on for it to run (``settings_switches``); numeric values replace a plugin's own config
value only when set somewhere (yaml default, key, user), else the plugin keeps its own
config (``CallSettings.value(name, fallback)``), so per-key plugin configs keep working.

Storage (:class:`SettingsStore`): one Redis hash per pair,
``<prefix>:{<user>}:settings:<friend>`` (ids escaped like memory keys,
:func:`gateway.memory.keys.escape_key_part`, inside the user's hash tag; forgetting the
user erases them, :meth:`SettingsService.forget_user`), ``name -> JSON value``. Read with
one ``HGETALL`` per request, cached per process for ``settings.cache_ttl_s``; a write
through a process re-reads the pair into that process's cache, so the very next request
there sees it; other processes see it within ``cache_ttl_s``. Concurrent requests of one pair share one read (single flight). A read
slower than ``settings.read_timeout_ms`` (250 ms) or failing falls back to
the defaults (yaml and key) and the request is marked ``x-memgate-degraded:
settings:timeout`` / ``settings:unavailable`` (fail open).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from gateway.memory.keys import escape_key_part
from gateway.memory.records import (
    JsonBoolean,
    JsonInteger,
    JsonNumber,
    check_tenant_id,
    json_integer,  # the JSON-type checks behind JsonInteger / JsonNumber
    json_number,
)
from gateway.runtime.errors import InvalidRequest, MemoryUnavailable, PermissionDenied

if TYPE_CHECKING:
    import redis.asyncio as aioredis

__all__ = [
    "BOUNDS",
    "SETTING_NAMES",
    "CallSettings",
    "MemorySettings",
    "SettingsConfig",
    "SettingsPatch",
    "SettingsService",
    "SettingsStore",
    "SettingsView",
    "check_overrides",
    "effective",
    "parse_assignments",
]


class MemorySettings(BaseModel):
    """The ten settings with their seed defaults and bounds (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recall_enabled: JsonBoolean = Field(True, description="Recall memories before the answer (seed 002 §5.1, default on).")
    recall_rounds: JsonInteger = Field(3, ge=1, le=5, description="Most recall search rounds (seed 002 §5.1: 1-5, default 3).")
    profile_topk: JsonInteger = Field(5, ge=1, le=10, description="Most profile memories recalled (seed 002 §5.1: 1-10, default 5).")
    event_topk: JsonInteger = Field(5, ge=1, le=10, description="Most event memories recalled (seed 002 §5.1: 1-10, default 5).")
    similarity_threshold: JsonNumber = Field(
        0.5, ge=0.0, le=1.0, description="Lowest cosine similarity of a recalled memory (seed 002 §5.1: 0-1, default 0.5)."
    )
    show_tool_calls: JsonBoolean = Field(False, description="Show the recall step to the client (seed 002 §5.2, default off).")
    show_thinking: JsonBoolean = Field(False, description="Show the recall agent's reasoning (seed 002 §5.2, default off).")
    auto_recall: JsonBoolean = Field(True, description="Seed 000 P1 switch: the per-request memory search (default on).")
    personalization: JsonBoolean = Field(True, description="Seed 000 P3 switch: answers personalized from preferences (default on).")
    inference: JsonBoolean = Field(
        True, description="Seed 000 P4 switch: this user's conversations may trigger memory inference, where the "
        "operator enabled memorize inference (off by default).",
    )


#: The setting names, in :class:`MemorySettings` order.
SETTING_NAMES: tuple[str, ...] = tuple(MemorySettings.model_fields)


def _bounds() -> dict[str, dict[str, int | float]]:
    out: dict[str, dict[str, int | float]] = {}
    for name, info in MemorySettings.model_fields.items():
        lo = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
        hi = next((m.le for m in info.metadata if hasattr(m, "le")), None)
        if lo is not None and hi is not None:
            out[name] = {"minimum": lo, "maximum": hi}
    return out


#: ``{name: {"minimum", "maximum"}}`` of the numeric settings (from :class:`MemorySettings`).
BOUNDS: dict[str, dict[str, int | float]] = _bounds()


# bounds inside the type, so the JSON Schema of the optional fields keeps them as
# minimum/maximum (pydantic drops them to non-standard ge/le on ``X | None`` otherwise)
_Rounds = Annotated[int, Field(ge=1, le=5), BeforeValidator(json_integer)]
_TopK = Annotated[int, Field(ge=1, le=10), BeforeValidator(json_integer)]
_Threshold = Annotated[float, Field(ge=0.0, le=1.0), BeforeValidator(json_number)]


class SettingsPatch(BaseModel):
    """Body of ``PUT /v1/memory/settings``: any of the ten settings; ``null`` removes the
    stored override (back to the default); an absent name is left as it is. Unknown names
    and out-of-range values are refused (400, ``param`` is the name)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recall_enabled: JsonBoolean | None = Field(None, description="Recall memories before the answer.")
    recall_rounds: _Rounds | None = Field(None, description="Most recall search rounds (1-5).")
    profile_topk: _TopK | None = Field(None, description="Most profile memories recalled (1-10).")
    event_topk: _TopK | None = Field(None, description="Most event memories recalled (1-10).")
    similarity_threshold: _Threshold | None = Field(None, description="Lowest cosine similarity (0-1).")
    show_tool_calls: JsonBoolean | None = Field(None, description="Show the recall step to the client.")
    show_thinking: JsonBoolean | None = Field(None, description="Show the recall agent's reasoning.")
    auto_recall: JsonBoolean | None = Field(None, description="Seed 000 P1 switch.")
    personalization: JsonBoolean | None = Field(None, description="Seed 000 P3 switch.")
    inference: JsonBoolean | None = Field(None, description="Seed 000 P4 switch.")

    def changes(self) -> dict[str, Any]:
        """``{name: value or None}`` for the names the body carried (``null`` kept)."""
        return {name: getattr(self, name) for name in self.model_fields_set}


class SettingsView(BaseModel):
    """What the settings routes answer (``GET``/``PUT /v1/memory/settings`` and the admin
    routes)."""

    object: str = Field("memory.settings", description="Always memory.settings.")
    user_id: str = Field(description="The user the settings are for.")
    friend_id: str = Field(description="The friend (persona) the settings are for.")
    settings: MemorySettings = Field(description="Effective values of all ten settings.")
    overrides: dict[str, Any] = Field(description="The values stored for this user and friend.")
    locked: list[str] = Field(description="Names the operator locked (settings.locked).")
    bounds: dict[str, dict[str, int | float]] = Field(description="minimum/maximum of the numeric settings.")
    in_use: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="For a setting nobody set (no settings.defaults, key or stored value), "
        "what the plugins of the caller's chain use instead, by plugin (their own config), e.g. "
        "{\"similarity_threshold\": {\"auto_recall\": 0.3}}: `settings` then shows the seed default, not what recall uses.")


def check_overrides(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``values`` validated as setting overrides (known names, in range, JSON types).

    Raises:
        InvalidRequest: an unknown name or a bad value (400, ``param`` is the name, the
            message starts with ``where``).
    """
    try:
        patch = SettingsPatch.model_validate(dict(values))
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]) if err["loc"] else None
        msg = str(err["msg"]).removeprefix("Value error, ")
        reason = "unknown setting" if err["type"] == "extra_forbidden" else msg[:1].lower() + msg[1:]
        known = f" (known: {', '.join(SETTING_NAMES)})" if err["type"] == "extra_forbidden" else ""
        raise InvalidRequest(f"{where}{name}: {reason}{known}", param=name) from None
    return patch.changes()


def parse_assignments(pairs: Iterable[str], where: str = "") -> dict[str, Any]:
    """``["recall_rounds=2", "show_thinking=true", "profile_topk=null"]`` -> overrides
    (values read as JSON, else as a string; ``null`` removes). For the CLI.

    Raises:
        InvalidRequest: a pair without ``=``, an unknown name or a bad value.
    """
    raw: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise InvalidRequest(f"{where}{pair!r}: expected name=value", param=pair)
        try:
            raw[name.strip()] = json.loads(text)
        except ValueError:
            raw[name.strip()] = text
    return check_overrides(raw, where)


class SettingsConfig(BaseModel):
    """``settings:`` in gateway.yaml: operator defaults and locks of the per-user memory
    settings (:mod:`gateway.settings.memory_settings`).

    Example::

        settings:
          defaults: {recall_rounds: 2, show_tool_calls: false}
          locked: [recall_rounds]      # users and keys cannot change it (403)
          cache_ttl_s: 5
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    defaults: dict[str, Any] = Field(
        default_factory=dict, description="Default values replacing the built-in (seed) defaults; "
        "any of the ten settings, validated with their bounds.",
    )
    locked: list[str] = Field(
        default_factory=list, description="Setting names users and keys cannot change: they always "
        "take the default (PUT of a locked name: 403 naming it).",
    )
    cache_ttl_s: float = Field(
        5.0, ge=0, description="Seconds a (user, friend)'s stored settings are cached per process; "
        "a write through a process applies there at once, on others within this time (like auth.cache_ttl_s).",
    )
    read_timeout_ms: float = Field(
        250.0, gt=0, description="Longest wait for the settings read on a chat request; past it (or "
        "when Redis fails) the defaults apply and the reply says settings:timeout / settings:unavailable.",
    )
    failure_cache_s: float = Field(
        1.0, ge=0, description="Seconds a failed read's defaults are reused for that pair, so a Redis "
        "outage costs one timeout per pair per period, not one per request.",
    )

    @field_validator("defaults")
    @classmethod
    def _valid_defaults(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            return {k: v for k, v in check_overrides(value, "").items() if v is not None}
        except InvalidRequest as exc:
            raise ValueError(exc.message) from None

    @field_validator("locked")
    @classmethod
    def _known_names(cls, value: list[str]) -> list[str]:
        unknown = [n for n in value if n not in SETTING_NAMES]
        if unknown:
            raise ValueError(f"unknown setting(s) {unknown} (known: {', '.join(SETTING_NAMES)})")
        return list(dict.fromkeys(value))


def effective(
    config: SettingsConfig, key_overrides: Mapping[str, Any], stored: Mapping[str, Any]
) -> tuple[MemorySettings, frozenset[str]]:
    """The effective settings and the names set at some layer (yaml default, key, user),
    by the precedence in the module docstring. Stored values that no longer validate
    (bounds changed) are ignored, field by field."""
    values: dict[str, Any] = dict(config.defaults)
    explicit = set(values)
    locked = set(config.locked)
    for layer in (key_overrides, stored):
        for name, value in layer.items():
            if name in locked or name not in SETTING_NAMES or value is None:
                continue
            try:
                check_overrides({name: value}, "")
            except InvalidRequest:
                continue
            values[name] = value
            explicit.add(name)
    return MemorySettings.model_validate(values), frozenset(explicit)


@dataclass(frozen=True)
class CallSettings:
    """The settings of one chat call, as plugins see them (``call.settings``).

    Attributes:
        values: the effective :class:`MemorySettings`.
        explicit: names set at some layer (yaml ``settings.defaults``, the key, the user);
            the others are the built-in defaults.
    """

    values: MemorySettings = field(default_factory=MemorySettings)
    explicit: frozenset[str] = frozenset()

    def __getattr__(self, name: str) -> Any:
        if name in SETTING_NAMES:
            return getattr(self.values, name)
        raise AttributeError(name)

    def value(self, name: str, fallback: Any) -> Any:
        """The setting when it was set at some layer, else ``fallback`` (the plugin's own
        config value): built-in defaults never replace a plugin's configuration."""
        return getattr(self.values, name) if name in self.explicit else fallback

    def switched_on(self, switches: Iterable[str]) -> bool:
        """True when every named boolean setting is on."""
        return all(bool(getattr(self.values, name)) for name in switches)


class SettingsStore:
    """The stored per-(user, friend) values in Redis (module docstring for the layout).

    Every method raises :class:`MemoryUnavailable` (503) when Redis fails."""

    def __init__(self, redis: aioredis.Redis, prefix: str = "mg") -> None:
        self._redis = redis
        self._prefix = prefix

    def key(self, user_id: str, friend_id: str) -> str:
        return f"{self._prefix}:{{{escape_key_part(user_id)}}}:settings:{escape_key_part(friend_id)}"

    async def read(self, user_id: str, friend_id: str) -> dict[str, Any]:
        """The stored values (``{}`` when none); names no longer known are dropped."""
        try:
            raw = await self._redis.hgetall(self.key(user_id, friend_id))
        except Exception as exc:  # redis errors and connection failures alike
            raise MemoryUnavailable(f"settings store unreachable: {exc!r}") from None
        out = {}
        for k, v in raw.items():
            name = k.decode() if isinstance(k, bytes) else k
            if name in SETTING_NAMES:
                try:
                    out[name] = json.loads(v)
                except ValueError:
                    continue
        return out

    async def forget_user(self, user_id: str) -> int:
        """Delete every stored settings hash of ``user_id`` (all friends): a SCAN with a
        pattern inside the user's hash tag. Returns the keys deleted."""
        pattern = f"{self._prefix}:{{{escape_key_part(user_id)}}}:settings:*"
        deleted = 0
        try:
            batch: list[Any] = []
            async for key in self._redis.scan_iter(match=pattern, count=500):
                batch.append(key)
                if len(batch) == 500:
                    deleted += await self._redis.unlink(*batch)
                    batch = []
            if batch:
                deleted += await self._redis.unlink(*batch)
        except Exception as exc:
            raise MemoryUnavailable(f"settings store unreachable: {exc!r}") from None
        return deleted

    async def write(self, user_id: str, friend_id: str, changes: Mapping[str, Any]) -> None:
        """Set the non-null values and delete the null ones, in one transaction."""
        key = self.key(user_id, friend_id)
        sets = {k: json.dumps(v) for k, v in changes.items() if v is not None}
        dels = [k for k, v in changes.items() if v is None]
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                if sets:
                    pipe.hset(key, mapping=sets)
                if dels:
                    pipe.hdel(key, *dels)
                await pipe.execute()
        except Exception as exc:
            raise MemoryUnavailable(f"settings store unreachable: {exc!r}") from None


class SettingsService:
    """Reads (cached, fail-open on the chat path) and writes per-user settings.

    Args:
        config: ``settings:`` of gateway.yaml.
        store: the Redis store; None (no Redis): defaults only, writes 503.
        clock: monotonic seconds (tests).
    """

    MAX_CACHE = 50_000

    def __init__(
        self, config: SettingsConfig, store: SettingsStore | None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config
        self._store = store
        self._clock = clock
        self._cache: dict[tuple[str, str], tuple[dict[str, Any], float]] = {}
        self._inflight: dict[tuple[str, str], asyncio.Future[dict[str, Any] | None]] = {}
        self._writes = 0  # writes through this process: a read older than one is not cached

    def _cached(self, pair: tuple[str, str]) -> dict[str, Any] | None:
        hit = self._cache.get(pair)
        if hit is not None and hit[1] > self._clock():
            return hit[0]
        return None

    def _remember(self, pair: tuple[str, str], stored: dict[str, Any], ttl: float) -> None:
        if ttl <= 0:
            return
        if len(self._cache) >= self.MAX_CACHE:
            self._cache.clear()
        self._cache[pair] = (stored, self._clock() + ttl)

    async def for_call(
        self, user_id: str, friend_id: str, key_overrides: Mapping[str, Any], time_left: float | None = None
    ) -> tuple[CallSettings, str | None]:
        """The settings of a chat call and a degraded reason (``timeout``,
        ``unavailable``) or None. Never raises: failures give the defaults (yaml, key).

        ``time_left``: seconds left of the request phase; the read waits at most the
        smaller of it and ``read_timeout_ms``."""
        pair = (user_id, friend_id)
        stored = self._cached(pair)
        reason = None
        if stored is None:
            if self._store is None:
                stored = {}
            else:
                limit = self.config.read_timeout_ms / 1000
                if time_left is not None:
                    limit = max(0.0, min(limit, time_left))
                try:
                    async with asyncio.timeout(limit):
                        loaded = await asyncio.shield(self._loading(pair))
                    stored, reason = (loaded, None) if loaded is not None else ({}, "unavailable")
                except TimeoutError:
                    stored, reason = {}, "timeout"
                if reason is not None:
                    self._remember(pair, {}, min(self.config.failure_cache_s, self.config.cache_ttl_s or self.config.failure_cache_s))
        values, explicit = effective(self.config, key_overrides, stored)
        return CallSettings(values, explicit), reason

    def _loading(self, pair: tuple[str, str]) -> asyncio.Future[dict[str, Any] | None]:
        """The one read of ``pair`` in flight (single flight: a burst of requests of one
        pair with a cold cache makes one ``HGETALL``, not one each). Its result is the
        stored values, or None when Redis failed; it is cached unless a write happened in
        this process meanwhile (the write's own re-read wins)."""
        task = self._inflight.get(pair)
        if task is None:
            task = asyncio.ensure_future(self._load(pair, self._writes))
            self._inflight[pair] = task
            task.add_done_callback(lambda done: self._inflight.pop(pair, None) if self._inflight.get(pair) is done else None)
        return task

    async def _load(self, pair: tuple[str, str], writes: int) -> dict[str, Any] | None:
        assert self._store is not None
        try:
            stored = await self._store.read(*pair)
        except MemoryUnavailable:
            return None
        if writes == self._writes:
            self._remember(pair, stored, self.config.cache_ttl_s)
        return stored

    async def view(
        self, user_id: str, friend_id: str, key_overrides: Mapping[str, Any],
        fallbacks: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> SettingsView:
        """The settings as the routes show them (read from Redis, not the cache);
        ``fallbacks`` (:meth:`gateway.chain.chain.PluginChain.setting_fallbacks`) fills
        ``in_use`` for the names nobody set.

        Raises:
            InvalidRequest: a malformed id (400).
            MemoryUnavailable: Redis failed (503).
        """
        check_tenant_id(user_id, "user_id")
        check_tenant_id(friend_id, "friend_id")
        stored = await self._store.read(user_id, friend_id) if self._store is not None else {}
        self._remember((user_id, friend_id), stored, self.config.cache_ttl_s)
        values, explicit = effective(self.config, key_overrides, stored)
        in_use = {name: dict(used) for name, used in (fallbacks or {}).items() if name not in explicit and used}
        return SettingsView(
            user_id=user_id, friend_id=friend_id, settings=values, overrides=stored,
            locked=list(self.config.locked), bounds=BOUNDS, in_use=in_use,
        )

    async def forget_user(self, user_id: str) -> int:
        """Erase the user's stored settings (every friend) and this process's cache of
        them; returns the keys deleted (0 without Redis)."""
        self._writes += 1
        for pair in [p for p in self._cache if p[0] == user_id]:
            del self._cache[pair]
        return await self._store.forget_user(user_id) if self._store is not None else 0

    def check_writable(self, changes: Mapping[str, Any]) -> None:
        """Refuse changes to locked names.

        Raises:
            PermissionDenied: a locked name (403, ``param`` is the name).
        """
        for name in changes:
            if name in self.config.locked:
                raise PermissionDenied(
                    f"{name}: locked by the operator (settings.locked); it always takes the default",
                    param=name, code="setting_locked",
                )

    async def update(
        self, user_id: str, friend_id: str, body: Mapping[str, Any], key_overrides: Mapping[str, Any],
        fallbacks: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> SettingsView:
        """Apply a PUT body (:class:`SettingsPatch` semantics) and return the new view;
        this process's cache entry is dropped first, so its next request reads the new
        values.

        Raises:
            InvalidRequest: unknown name or bad value (400, ``param``).
            PermissionDenied: a locked name (403, ``param``).
            MemoryUnavailable: Redis failed or is not configured (503).
        """
        check_tenant_id(user_id, "user_id")
        check_tenant_id(friend_id, "friend_id")
        changes = check_overrides(body, "")
        self.check_writable(changes)
        if self._store is None:
            raise MemoryUnavailable("settings need Redis (memory: section)")
        self._writes += 1
        self._cache.pop((user_id, friend_id), None)
        if changes:
            await self._store.write(user_id, friend_id, changes)
        self._writes += 1
        self._cache.pop((user_id, friend_id), None)
        return await self.view(user_id, friend_id, key_overrides, fallbacks)
