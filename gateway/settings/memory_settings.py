"""Per-user memory settings (seed 002 §5, seed 000's UI switches).

Settings per ``(user_id, friend_id)``: the core's eight (:class:`CoreSettings`), with their
seed defaults and bounds, plus the fields the plugins of the gateway's plugin table declare
(each plugin's ``Settings`` model, a :class:`UserSettings`), merged once at start-up into one
:class:`SettingsSchema`:

======================  =======  =========  ==============================================
name                    type     default    what (source)
======================  =======  =========  ==============================================
``recall_enabled``      bool     true       recall before the answer at all (seed 002 §5.1
                                            "启用记忆召回"): off, no recall plugin runs
``recall_rounds``       1-5      3          most recall search rounds (§5.1)
``profile_topk``        1-10     5          most profile memories recalled (§5.1)
``event_topk``          1-10     5          most event memories recalled (§5.1)
``similarity_threshold`` 0-1     0.5        lowest strength a recalled memory needs (§5.1)
``show_tool_calls``     bool     false      show the recall step to the client (§5.2)
``show_thinking``       bool     false      show the recall agent's reasoning (§5.2)
``inference``           bool     true       seed 000 P4: may this user's conversations
                                            trigger memory inference (it runs only where
                                            the operator enabled memorization's
                                            ``inference.enabled``, off by default, seed
                                            000's ``inferenceEnabled: false``)
======================  =======  =========  ==============================================

A plugin's fields (a seed 000 switch of its own, say) follow, in plugin-table order. Two
plugins may declare the same field only identically; a plugin may not redeclare a core
field (either stops start-up naming both). The schema drives everything a client sees: the
``MemorySettings``, ``SettingsPatch`` and ``SettingsView`` shapes of the HTTP routes and
their OpenAPI components (:meth:`SettingsSchema.openapi_models`), the CLI's ``name=value``
parsing, ``settings.defaults`` / ``settings.locked`` / ``clients[].settings`` checks
(:meth:`SettingsSchema.check_config`, at start-up and in the settings commands).

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
from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError, create_model, field_validator

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
    "CORE",
    "CallSettings",
    "CoreSettings",
    "SettingsConfig",
    "SettingsPatch",
    "SettingsSchema",
    "SettingsService",
    "SettingsStore",
    "SettingsView",
    "UserSettings",
    "check_names",
]


class UserSettings(BaseModel):
    """Base of the per-user settings fields a plugin declares (its ``Settings`` class):
    each field has a default and, for numbers, its bounds (``Field(ge=..., le=...)``); use
    the strict JSON types (``JsonBoolean``, ``JsonInteger``, ``JsonNumber``) so ``"true"``
    or ``1`` is refused for a boolean, not coerced."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class CoreSettings(UserSettings):
    """The core's eight settings with their seed defaults and bounds (module docstring)."""

    recall_enabled: JsonBoolean = Field(True, description="Recall memories before the answer (seed 002 §5.1, default on).")
    recall_rounds: JsonInteger = Field(3, ge=1, le=5, description="Most recall search rounds (seed 002 §5.1: 1-5, default 3).")
    profile_topk: JsonInteger = Field(5, ge=1, le=10, description="Most profile memories recalled (seed 002 §5.1: 1-10, default 5).")
    event_topk: JsonInteger = Field(5, ge=1, le=10, description="Most event memories recalled (seed 002 §5.1: 1-10, default 5).")
    similarity_threshold: JsonNumber = Field(
        0.5, ge=0.0, le=1.0, description="Lowest strength of a recalled memory (seed 002 §5.1: 0-1, "
        "default 0.5): the calibrated relevance for the recall agent and MCP recall_memory, the cosine for "
        "auto_recall and memory_search.",
    )
    show_tool_calls: JsonBoolean = Field(False, description="Show the recall step to the client (seed 002 §5.2, default off).")
    show_thinking: JsonBoolean = Field(False, description="Show the recall agent's reasoning (seed 002 §5.2, default off).")
    inference: JsonBoolean = Field(
        True, description="Seed 000 P4 switch: this user's conversations may trigger memory inference, where the "
        "operator enabled memorize inference (off by default).",
    )


# bounds inside the type, so the JSON Schema of the optional fields keeps them as
# minimum/maximum (pydantic drops them to non-standard ge/le on ``X | None`` otherwise)
_Rounds = Annotated[int, Field(ge=1, le=5), BeforeValidator(json_integer)]
_TopK = Annotated[int, Field(ge=1, le=10), BeforeValidator(json_integer)]
_Threshold = Annotated[float, Field(ge=0.0, le=1.0), BeforeValidator(json_number)]


_PATCH_DOC = """Body of ``PUT /v1/memory/settings``: any of the settings; ``null`` removes the
    stored override (back to the default); an absent name is left as it is. Unknown names
    and out-of-range values are refused (400, ``param`` is the name)."""


class _CorePatch(BaseModel):
    """The core's fields of ``PUT /v1/memory/settings`` (:meth:`SettingsSchema.check`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recall_enabled: JsonBoolean | None = Field(None, description="Recall memories before the answer.")
    recall_rounds: _Rounds | None = Field(None, description="Most recall search rounds (1-5).")
    profile_topk: _TopK | None = Field(None, description="Most profile memories recalled (1-10).")
    event_topk: _TopK | None = Field(None, description="Most event memories recalled (1-10).")
    similarity_threshold: _Threshold | None = Field(None, description="Lowest strength (0-1): calibrated "
                                                     "relevance or cosine, per plugin.")
    show_tool_calls: JsonBoolean | None = Field(None, description="Show the recall step to the client.")
    show_thinking: JsonBoolean | None = Field(None, description="Show the recall agent's reasoning.")
    inference: JsonBoolean | None = Field(None, description="Seed 000 P4 switch.")


class SettingsPatch(BaseModel):
    """Body of ``PUT /v1/memory/settings``: any of the settings; ``null`` removes the
    stored override (back to the default); an absent name is left as it is. Unknown names
    and out-of-range values are refused (400, ``param`` is the name). The routes take the
    body as this open object and check it with the gateway's :class:`SettingsSchema`
    (its :attr:`SettingsSchema.patch` is the documented shape, of the same name)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    def changes(self) -> dict[str, Any]:
        """``{name: value or None}`` as the body carried them (unchecked)."""
        return dict(self.model_extra or {})


class SettingsView(BaseModel):
    """What the settings routes answer (``GET``/``PUT /v1/memory/settings`` and the admin
    routes); ``settings`` has every name of the gateway's :class:`SettingsSchema`."""

    object: str = Field("memory.settings", description="Always memory.settings.")
    user_id: str = Field(description="The user the settings are for.")
    friend_id: str = Field(description="The friend (persona) the settings are for.")
    settings: dict[str, Any] = Field(description="Effective values of all the settings.")
    overrides: dict[str, Any] = Field(description="The values stored for this user and friend.")
    locked: list[str] = Field(description="Names the operator locked (settings.locked).")
    bounds: dict[str, dict[str, int | float]] = Field(description="minimum/maximum of the numeric settings.")
    in_use: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="For a setting nobody set (no settings.defaults, key or stored value), "
        "what the plugins of the caller's chain use instead, by plugin (their own config), e.g. "
        "{\"similarity_threshold\": {\"some_plugin\": 0.3}}: `settings` then shows the seed default, not what the "
        "plugin uses.")


def _bounds(model: type[BaseModel]) -> dict[str, dict[str, int | float]]:
    out: dict[str, dict[str, int | float]] = {}
    for name, info in model.model_fields.items():
        lo = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
        hi = next((m.le for m in info.metadata if hasattr(m, "le")), None)
        if lo is not None and hi is not None:
            out[name] = {"minimum": lo, "maximum": hi}
    return out


class SettingsSchema:
    """The settings of one gateway: :class:`CoreSettings` and the fields each plugin of its
    plugin table declares (``declared``: ``{plugin name: its UserSettings model}``, in
    table order), merged once.

    Attributes:
        model: ``MemorySettings``, every field with its default and bounds (frozen).
        patch: ``SettingsPatch``, every field optional (``null``: back to the default).
        view: ``SettingsView`` with ``settings`` as :attr:`model` (OpenAPI only).
        names: the setting names, core first, then the plugins' in table order.
        bounds: ``{name: {"minimum", "maximum"}}`` of the bounded numeric settings.
        owners: ``{name: (plugin, ...)}`` of the plugin-declared settings.

    Raises:
        ValueError: a plugin redeclares a core field, declares a field without a default,
            or two plugins declare one name differently (the message names them).
    """

    def __init__(self, declared: Mapping[str, type[BaseModel]] | None = None) -> None:
        fields: dict[str, Any] = {}
        owners: dict[str, list[str]] = {}
        for plugin, model in (declared or {}).items():
            for name, info in model.model_fields.items():
                if name in CoreSettings.model_fields:
                    raise ValueError(f"plugin {plugin!r} declares setting {name!r}, a core setting")
                if info.is_required():
                    raise ValueError(f"plugin {plugin!r}: setting {name!r} needs a default")
                if name in fields:
                    if repr(fields[name]) != repr(info):
                        raise ValueError(f"plugins {owners[name][0]!r} and {plugin!r} declare setting {name!r} differently")
                    owners[name].append(plugin)
                    continue
                fields[name] = info
                owners[name] = [plugin]
        self.model: type[BaseModel] = create_model(  # type: ignore[call-overload]  # dynamic fields
            "MemorySettings", __base__=CoreSettings, __doc__="Every memory setting with its default and bounds.",
            **{name: (info.annotation, info) for name, info in fields.items()},
        )
        self.patch: type[BaseModel] = create_model(  # type: ignore[call-overload]
            "SettingsPatch", __base__=_CorePatch, __doc__=_PATCH_DOC,
            **{name: (Annotated[(info.annotation, *info.metadata)] | None, Field(None, description=info.description))
               for name, info in fields.items()},
        )
        self.view: type[BaseModel] = create_model(
            "SettingsView", __base__=SettingsView, __doc__=SettingsView.__doc__,
            settings=(self.model, Field(description="Effective values of all the settings.")),
        )
        self.names: tuple[str, ...] = tuple(self.model.model_fields)
        self.bounds: dict[str, dict[str, int | float]] = _bounds(self.model)
        self.owners: dict[str, tuple[str, ...]] = {name: tuple(who) for name, who in owners.items()}
        self._defaults_dict: dict[str, Any] = self.model().model_dump()
        # one validator per field (its type, bounds and JSON-type check), for effective()
        self._fields: dict[str, TypeAdapter[Any]] = {
            name: TypeAdapter(cast(Any, Annotated[(info.annotation, *info.metadata)]))
            for name, info in self.model.model_fields.items()
        }

    def openapi_models(self) -> tuple[tuple[type[BaseModel], ...], tuple[type[BaseModel], ...]]:
        """``(request models, reply models)`` whose component schemas document this
        gateway's settings routes (:func:`gateway.api.openapi.apply_pydantic_schemas`)."""
        return (self.patch,), (self.view,)

    def defaults(self) -> dict[str, Any]:
        """Every setting's built-in default."""
        return dict(self._defaults_dict)

    def check(self, values: Mapping[str, Any], where: str = "") -> dict[str, Any]:
        """``values`` validated as setting overrides (known names, in range, JSON types);
        ``{name: value or None}`` for the names given.

        Raises:
            InvalidRequest: an unknown name or a bad value (400, code ``invalid_value`` as
                the routes' other body errors, ``param`` is the name, the message starts
                with ``where``).
        """
        try:
            patch = self.patch.model_validate(dict(values))
        except ValidationError as exc:
            err = exc.errors()[0]
            name = str(err["loc"][0]) if err["loc"] else None
            msg = str(err["msg"]).removeprefix("Value error, ")
            reason = "unknown setting" if err["type"] == "extra_forbidden" else msg[:1].lower() + msg[1:]
            known = f" (known: {', '.join(self.names)})" if err["type"] == "extra_forbidden" else ""
            raise InvalidRequest(f"{where}{name}: {reason}{known}", param=name, code="invalid_value") from None
        return {name: getattr(patch, name) for name in patch.model_fields_set}

    def parse_assignments(self, pairs: Iterable[str], where: str = "") -> dict[str, Any]:
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
        return self.check(raw, where)

    def check_config(self, config: SettingsConfig, where: str = "settings") -> None:
        """``settings.defaults`` and ``settings.locked`` of gateway.yaml against this schema.

        Raises:
            InvalidRequest: the first bad default or unknown locked name, the message
                starting with its path (``settings.defaults.recall_rounds: ...``).
        """
        self.check(config.defaults, f"{where}.defaults.")
        unknown = [n for n in config.locked if n not in self.names]
        if unknown:
            raise InvalidRequest(
                f"{where}.locked: unknown setting(s) {unknown} (known: {', '.join(self.names)})", param="locked")

    def effective(
        self, config: SettingsConfig, key_overrides: Mapping[str, Any], stored: Mapping[str, Any]
    ) -> tuple[dict[str, Any], frozenset[str]]:
        """The effective settings (``{name: value}``, every name, valid for :attr:`model`)
        and the names set at some layer (yaml default, key, user), by the precedence in the
        module docstring. Values that no longer validate (bounds changed, a plugin's field
        gone) are ignored, field by field (one field check each, not a model's)."""
        values = dict(self._defaults_dict)
        explicit: set[str] = set()
        locked = set(config.locked)
        for layer, lockable in ((config.defaults, False), (key_overrides, True), (stored, True)):
            for name, value in layer.items():
                field_check = self._fields.get(name)
                if (lockable and name in locked) or field_check is None or value is None:
                    continue
                try:
                    values[name] = field_check.validate_python(value)
                except ValidationError:
                    continue
                explicit.add(name)
        return values, frozenset(explicit)


#: The core's settings alone (no plugin fields): what a :class:`CallSettings` built outside
#: a gateway, and a :class:`SettingsService` given no schema, use.
CORE = SettingsSchema()


def _core_values() -> Mapping[str, Any]:
    return CORE.defaults()


@dataclass(frozen=True)
class CallSettings:
    """The settings of one chat call, as plugins see them (``call.settings``).

    Attributes:
        values: the effective settings, ``{name: value}``: every name of the gateway's
            :class:`SettingsSchema`.
        explicit: names set at some layer (yaml ``settings.defaults``, the key, the user);
            the others are the built-in defaults.
    """

    values: Mapping[str, Any] = field(default_factory=_core_values)
    explicit: frozenset[str] = frozenset()

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)

    def value(self, name: str, fallback: Any) -> Any:
        """The setting when it was set at some layer, else ``fallback`` (the plugin's own
        config value): built-in defaults never replace a plugin's configuration."""
        return self.values[name] if name in self.explicit else fallback

    def switched_on(self, switches: Iterable[str], defaults: Mapping[str, Any] | None = None) -> bool:
        """True when every named boolean setting is on; a name these values do not carry
        (settings built without the plugin's schema) takes ``defaults[name]`` (its
        declared default), else counts as on."""
        fallback = defaults or {}
        return all(bool(self.values.get(name, fallback.get(name, True))) for name in switches)


def check_names(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` without the ``None`` entries, each name a non-empty string: the shape
    check of ``settings.defaults`` and ``clients[].settings`` at parse time (the names and
    values are checked against the :class:`SettingsSchema` once the plugin table is known)."""
    for name in values:
        if not isinstance(name, str) or not name:
            raise ValueError(f"setting names are non-empty strings, not {name!r}")
    return {k: v for k, v in values.items() if v is not None}


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
        "any of the settings (the core's and the plugins'), validated with their bounds at start-up.",
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
        return check_names(value)  # names and values: SettingsSchema.check_config

    @field_validator("locked")
    @classmethod
    def _once(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class SettingsStore:
    """The stored per-(user, friend) values in Redis (module docstring for the layout).

    Every method raises :class:`MemoryUnavailable` (503) when Redis fails."""

    def __init__(self, redis: aioredis.Redis, prefix: str = "mg") -> None:
        self._redis = redis
        self._prefix = prefix

    def key(self, user_id: str, friend_id: str) -> str:
        return f"{self._prefix}:{{{escape_key_part(user_id)}}}:settings:{escape_key_part(friend_id)}"

    async def read(self, user_id: str, friend_id: str) -> dict[str, Any]:
        """The stored values (``{}`` when none; values that are not JSON are dropped; the
        service drops names its schema does not know)."""
        try:
            raw = await self._redis.hgetall(self.key(user_id, friend_id))
        except Exception as exc:  # redis errors and connection failures alike
            raise MemoryUnavailable(f"settings store unreachable: {exc!r}") from None
        out = {}
        for k, v in raw.items():
            name = k.decode() if isinstance(k, bytes) else k
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
        schema: the gateway's settings (:class:`SettingsSchema`: the core's and its plugins');
            None: the core's alone (:data:`CORE`).
    """

    MAX_CACHE = 50_000

    def __init__(
        self, config: SettingsConfig, store: SettingsStore | None, clock: Callable[[], float] = time.monotonic,
        schema: SettingsSchema | None = None,
    ) -> None:
        self.config = config
        self.schema = schema if schema is not None else CORE
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
        values, explicit = self.schema.effective(self.config, key_overrides, stored)
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
            stored = self._known(await self._store.read(*pair))
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
        stored = self._known(await self._store.read(user_id, friend_id)) if self._store is not None else {}
        self._remember((user_id, friend_id), stored, self.config.cache_ttl_s)
        values, explicit = self.schema.effective(self.config, key_overrides, stored)
        in_use = {name: dict(used) for name, used in (fallbacks or {}).items() if name not in explicit and used}
        return SettingsView(
            user_id=user_id, friend_id=friend_id, settings=values, overrides=stored,
            locked=list(self.config.locked), bounds=self.schema.bounds, in_use=in_use,
        )

    def _known(self, stored: dict[str, Any]) -> dict[str, Any]:
        """``stored`` without the names the schema does not know (a plugin since removed)."""
        return {name: value for name, value in stored.items() if name in self.schema.names}

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
        changes = self.schema.check(body, "")
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
