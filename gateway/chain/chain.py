"""The plugin chain: builds plugins from ``gateway.yaml`` and runs every hook.

The chain owns every loop, time budget, span and fail-open rule; plugins (see
:mod:`gateway.chain.sdk`) stay plain code. Order (Envoy/Starlette onion): request hooks run in
``plugins:`` order; response, stream and completion hooks in reverse. A plugin's
``runs_after`` / ``runs_before`` are checked at start-up and a bad order is refused with a
message naming both entries; the chain never reorders silently. A plugin's
``conflicts_with`` names plugins it must never share a chain with (e.g. ``tool_splice``
and ``hybrid_injection``, two ways to inject the same memories): any chain, the default
one or a key's variant, holding both is refused at start-up.

Budgets (``budget_ms`` of the entry, else the ``chain:`` default):

=====================  ==========================================  ====================
hook                   budget                                      on failure / overrun
=====================  ==========================================  ====================
``rewrite_request``    ``hook_budget_ms``, and the phase deadline  ``request_fallback`` if
                       ``request_deadline_ms`` (3 s, seed 002)     the plugin has one, else
                                                                   the entry's ``on_failure``
                                                                   (``original`` | ``skip``)
``filter_response``    ``reply_budget_ms``                         ``response_fallback``
``on_chunk``           ``chunk_budget_ms`` per chunk               ``stream_fallback``
``on_stream_end``      ``reply_budget_ms`` for the whole iteration ``stream_fallback``
``on_complete``        ``completion_budget_ms``                    logged and counted
=====================  ==========================================  ====================

Every failure is counted (``memgate_plugin_failures_total{plugin,hook,reason}``, reason
without the exception type), logged, set on the hook's span (``memgate.degraded``) and
named in ``x-memgate-degraded`` as ``plugin:reason`` (``timeout``, ``deadline``,
``error:<ExceptionType>``; each entry the reply carries is counted once more in
``memgate_degraded_total{plugin,reason}``, by :mod:`gateway.routes.chat`). A hook that raises
:class:`~gateway.chain.sdk.Skipped` is not a failure: its change is dropped, the call goes on,
and ``plugin:reason`` is counted in ``memgate_plugin_skips_total`` and named the same way.

Request phase: each hook's change (the request it returns and what it put in
``call.injection``) is kept only if the hook succeeds; after the last hook the chain
renders ``call.injection`` into the request once (:func:`gateway.chain.injection.render`).
A request rewriter may declare ``request_fallback(call, request) -> ChatRequest``
(:class:`~gateway.chain.sdk.RequestRewriter`): when its hook raised ``Skipped``, failed or
overran its budget, the chain goes on with the fallback of the hook's input instead of
dropping the change (``Skipped``) or applying ``on_failure`` (seed 004: a context
selector that fails falls back to the most recent messages, never to everything).
Past the deadline the original request always goes.

Reply phase: a response filter that fails is replaced by its ``response_fallback`` of its
input; a stream filter that fails calls ``stream_fallback`` once, which either ends the
client's stream with the chunks it returns or lets the rest pass unchanged. Spans: one per
request hook and response filter, one per stream filter per stream (not per chunk), one per
completion hook.

Completion observers run after the client has the whole reply, in tasks owned by the
app's lifespan (:class:`CompletionRunner`); beyond ``chain.max_pending_completions`` in
flight, new runs are shed and counted.

Per-user settings (:mod:`gateway.settings.memory_settings`): a plugin may declare fields of
its own (a nested ``Settings`` class, a :class:`~gateway.chain.sdk.UserSettings`); the
factory merges every plugin of the plugin table's with the core's into the gateway's
:class:`~gateway.settings.memory_settings.SettingsSchema` (:func:`settings_schema`). A plugin
may declare ``settings_switches``, names of boolean memory settings; for a call where one of
them is off (``call.settings``), none of that plugin's hooks run (request, reply, stream,
completion), as if it were not in the chain for this call. The chain reads the declarations
only; what a setting means is the plugin's business.

Only ``Exception`` is caught, never ``BaseException``: a client disconnect (task
cancellation) always propagates.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from gateway.chain.injection import render
from gateway.chain.sdk import (
    AssembledReply,
    BackgroundWorkers,
    CallContext,
    CompletionObserver,
    ConversationIngester,
    Forgetter,
    Lifecycle,
    RequestRejected,
    RequestRewriter,
    ResponseFilter,
    Services,
    Skipped,
    StreamFilter,
    Warmup,
)
from gateway.config import GatewayConfig
from gateway.proxy.wire import ChatRequest, Chunk
from gateway.runtime.config import ChainConfig, ConfigError, PluginEntry, PluginOverride, format_validation_error
from gateway.runtime.errors import InvalidRequest
from gateway.runtime.principal import Principal
from gateway.runtime.telemetry import Telemetry
from gateway.settings.memory_settings import SettingsSchema

__all__ = ["ChainFactory", "CompletionRunner", "LoadedPlugin", "PluginChain", "check_key_overrides", "check_order", "check_settings", "plugin_config",
           "resolve_plugin_class", "settings_schema", "validate_key_plugins"]

log = logging.getLogger("memgate.chain")


@dataclass(frozen=True)
class LoadedPlugin:
    """A built plugin and its chain entry settings (budgets in seconds)."""

    name: str
    instance: Any
    budget_s: float
    reply_budget_s: float
    on_failure: str
    #: Boolean memory settings that must all be on for this plugin to run for a call
    #: (the plugin class's ``settings_switches``).
    switches: tuple[str, ...] = ()
    #: The declared defaults of :attr:`switches`, for settings that do not carry them.
    switch_defaults: Mapping[str, Any] = field(default_factory=dict)

    def runs_for(self, call: CallContext) -> bool:
        """False when one of :attr:`switches` is off in ``call.settings``."""
        return not self.switches or call.settings.switched_on(self.switches, self.switch_defaults)


def resolve_plugin_class(name: str, registry: Mapping[str, type]) -> type:
    """A built-in plugin by name, or ``package.module:Class``.

    Raises:
        ConfigError: unknown name or import failure.
    """
    if name in registry:
        return registry[name]
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"plugins: cannot import {name!r}: {exc}") from None
    raise ConfigError(f"plugins: unknown plugin {name!r} (built-ins: {', '.join(sorted(registry))})")


def settings_schema(entries: Sequence[PluginEntry], registry: Mapping[str, type]) -> SettingsSchema:
    """The gateway's per-user settings: the core's and the fields every plugin of the plugin
    table declares (its ``Settings`` class): the ``registry``'s plugins, then those
    ``entries`` name by import path, in that order. Each plugin's ``settings_switches`` must
    name boolean settings of the result.

    Raises:
        ConfigError: an import fails, a declaration clashes (a core name, two plugins
            declaring one name differently, no default) or a switch is not a boolean setting.
    """
    classes = dict(registry)
    for entry in entries:
        if entry.name not in classes:
            classes[entry.name] = resolve_plugin_class(entry.name, registry)
    declared: dict[str, type[BaseModel]] = {}
    for name, cls in classes.items():
        model = getattr(cls, "Settings", None)
        if isinstance(model, type) and issubclass(model, BaseModel):
            declared[name] = model
    try:
        schema = SettingsSchema(declared)
    except ValueError as exc:
        raise ConfigError(f"plugins: {exc}") from None
    for name, cls in classes.items():
        for switch in getattr(cls, "settings_switches", ()):
            info = schema.model.model_fields.get(switch)
            if info is None or info.annotation is not bool:
                raise ConfigError(f"plugins: {name!r} declares settings switch {switch!r}, which is not a boolean "
                                  f"setting (boolean settings: {[n for n, i in schema.model.model_fields.items() if i.annotation is bool]})")
    return schema


def check_settings(config: GatewayConfig, schema: SettingsSchema) -> None:
    """``settings.defaults``, ``settings.locked`` and every ``clients[].settings`` of
    ``config`` against ``schema`` (names known, values in range).

    Raises:
        ConfigError: the first problem, naming its path (``clients.0.settings.profile_topk``).
    """
    try:
        schema.check_config(config.settings)
        for i, client in enumerate(config.clients):
            schema.check(client.settings, f"clients.{i}.settings.")
    except InvalidRequest as exc:
        raise ConfigError(f"invalid config: {exc.message}") from None


def plugin_config(cls: type, raw: Mapping[str, Any], path: str) -> Any:
    """``cls.Config`` validated from ``raw``.

    Raises:
        ConfigError: naming the dotted path of each bad key (``plugins.2.config.limit``).
    """
    try:
        return cls.Config.model_validate(dict(raw))  # type: ignore[attr-defined]  # every plugin class has Config
    except ValidationError as exc:
        raise ConfigError(f"invalid plugin config: {format_validation_error(exc, path)}") from None


def check_order(names: Sequence[str], classes: Sequence[type]) -> None:
    """Refuse an order that breaks a plugin's ``runs_after`` / ``runs_before``.

    Raises:
        ConfigError: naming both entries and their positions.
    """
    position = {n: i for i, n in enumerate(names)}
    for i, cls in enumerate(classes):
        for other in getattr(cls, "runs_after", ()):
            if other in position and position[other] > i:
                raise ConfigError(
                    f"plugins: {names[i]!r} (entry {i}) must run after {other!r} "
                    f"(entry {position[other]}); move it below"
                )
        for other in getattr(cls, "runs_before", ()):
            if other in position and position[other] < i:
                raise ConfigError(
                    f"plugins: {names[i]!r} (entry {i}) must run before {other!r} "
                    f"(entry {position[other]}); move it above"
                )


def check_conflicts(names: Sequence[str], classes: Sequence[type], where: str = "plugins") -> None:
    """Refuse a chain of enabled plugins ``names`` where one declares (``conflicts_with``)
    another (checked in both directions).

    Raises:
        ConfigError: naming both plugins and ``where`` (``plugins`` or a key's path).
    """
    present = set(names)
    for name, cls in zip(names, classes, strict=True):
        for other in getattr(cls, "conflicts_with", ()):
            if other in present:
                raise ConfigError(
                    f"{where}: {name!r} and {other!r} cannot be enabled together ({name!r} "
                    f"declares conflicts_with {other!r}); enable only one of them"
                )


def enabled_entries(
    entries: Sequence[PluginEntry], classes: Sequence[type], overrides: Mapping[str, Any]
) -> list[tuple[PluginEntry, type]]:
    """The ``(entry, class)`` pairs enabled once a key's ``overrides`` apply (an
    override's ``enabled`` wins over the entry's)."""
    out = []
    for entry, cls in zip(entries, classes, strict=True):
        override = overrides.get(entry.name)
        enabled = entry.enabled if override is None or override.enabled is None else override.enabled
        if enabled:
            out.append((entry, cls))
    return out


class ChainFactory:
    """Validates plugin entries at start-up and hands out the chain for each principal.

    Per-key overrides (``enabled``, ``config`` merged over the global config) produce a
    chain variant, built once and cached by the override set. Instances are shared by
    config: two variants with the same config for a plugin share its instance.
    """

    def __init__(
        self,
        entries: Sequence[PluginEntry],
        registry: Mapping[str, type],
        services: Services,
        config: ChainConfig,
        telemetry: Telemetry,
        runner: CompletionRunner,
    ) -> None:
        self._entries = list(entries)
        self._registry = registry
        self._services = services
        self._config = config
        self._telemetry = telemetry
        self._runner = runner
        self._classes = [resolve_plugin_class(e.name, registry) for e in self._entries]
        check_order([e.name for e in self._entries], self._classes)
        #: The gateway's per-user settings (:func:`settings_schema`).
        self.settings_schema = settings_schema(self._entries, registry)
        self._switch_defaults = self.settings_schema.defaults()
        self._instances: dict[tuple[type, str], Any] = {}
        self._cache: dict[Any, PluginChain] = {}
        self._started: list[Any] = []
        self.default = self._build({})

    @property
    def registry(self) -> Mapping[str, type]:
        """The plugin table the chains are built from (name -> class)."""
        return self._registry

    def validate_overrides(self, overrides: Mapping[str, Any], where: str) -> None:
        """Build the chain for a set of overrides now, so errors surface at start-up."""
        self._chain_for(overrides, where)

    def for_principal(self, principal: Principal) -> PluginChain:
        """The chain for this caller (the default chain when it has no overrides)."""
        if not principal.plugins:
            return self.default
        return self._chain_for(principal.plugins, f"key {principal.key_id}")

    def _chain_for(self, overrides: Mapping[str, Any], where: str) -> PluginChain:
        cache_key = tuple(sorted((k, v.model_dump_json()) for k, v in overrides.items()))
        chain = self._cache.get(cache_key)
        if chain is None:
            unknown = set(overrides) - {e.name for e in self._entries}
            if unknown:
                raise ConfigError(f"{where}: overrides unknown plugin(s) {sorted(unknown)}")
            chain = self._cache[cache_key] = self._build(overrides, where)
        return chain

    def _build(self, overrides: Mapping[str, Any], where: str = "plugins") -> PluginChain:
        loaded = []
        enabled_pairs = enabled_entries(self._entries, self._classes, overrides)
        check_conflicts([e.name for e, _ in enabled_pairs], [c for _, c in enabled_pairs], where)
        for index, (entry, cls) in enumerate(zip(self._entries, self._classes, strict=True)):
            override = overrides.get(entry.name)
            enabled = entry.enabled if override is None or override.enabled is None else override.enabled
            if not enabled:
                continue
            raw = {**entry.config, **(override.config if override else {})}
            path = f"{where}.{index}.config" if not override else f"{where}.plugins.{entry.name}.config"
            instance = self._instance(cls, raw, path)
            loaded.append(LoadedPlugin(
                entry.name, instance,
                budget_s=(entry.budget_ms or self._config.hook_budget_ms) / 1000.0,
                reply_budget_s=(entry.budget_ms or self._config.reply_budget_ms) / 1000.0,
                on_failure=entry.on_failure,
                switches=tuple(getattr(cls, "settings_switches", ())), switch_defaults=self._switch_defaults,
            ))
        return PluginChain(loaded, self._config, self._telemetry, self._runner)

    def _instance(self, cls: type, raw: dict[str, Any], path: str) -> Any:
        key = (cls, repr(sorted(raw.items(), key=lambda kv: kv[0])))
        if key not in self._instances:
            self._instances[key] = cls(plugin_config(cls, raw, path), self._services)
        return self._instances[key]

    def forgetters(self) -> list[Forgetter]:
        """Instances with a ``forget_user`` hook (every variant: each may keep state)."""
        return [i for i in self._instances.values() if isinstance(i, Forgetter)]

    def ingester_for(self, principal: Principal) -> ConversationIngester | None:
        """The first plugin of this caller's chain that forms memories from a
        conversation chunk (``POST /v1/memories`` with ``messages``), or None."""
        return next((p.instance for p in self.for_principal(principal).plugins
                     if isinstance(p.instance, ConversationIngester)), None)

    def workers(self) -> list[BackgroundWorkers]:
        """The default chain's instances that run background workers."""
        return [p.instance for p in self.default.plugins if isinstance(p.instance, BackgroundWorkers)]

    async def start(self) -> None:
        """Start the default chain's :class:`~gateway.chain.sdk.Lifecycle` plugins, in order."""
        for plugin in self.default.plugins:
            if isinstance(plugin.instance, Lifecycle):
                await plugin.instance.start()
                self._started.append(plugin.instance)

    async def warm(self) -> list[str]:
        """Call :meth:`~gateway.chain.sdk.Warmup.warm` of every built instance (every key
        variant), each in a worker thread; a failure is collected, not raised. Returns
        ``"<plugin>: <error type>: <message>"`` per failure (empty: all warm)."""
        failures = []
        for instance in list(self._instances.values()):
            if isinstance(instance, Warmup):
                try:
                    await asyncio.to_thread(instance.warm)
                except Exception as exc:  # reported by /readyz, the gateway still serves
                    failures.append(f"{instance.name}: {type(exc).__name__}: {exc}")
        return failures

    async def aclose(self) -> None:
        """Stop started plugins (reverse order), then close those holding resources."""
        while self._started:
            await self._started.pop().stop()
        for instance in self._instances.values():
            close = getattr(instance, "aclose", None)
            if close is not None:
                await close()


@dataclass
class _StreamState:
    """Per-stream bookkeeping of :meth:`PluginChain.filter_stream`."""

    spans: dict[int, Any] = field(default_factory=dict)
    bypassed: set[int] = field(default_factory=set)
    ended: bool = False


class PluginChain:
    """The enabled plugins for one principal, grouped by capability once."""

    def __init__(
        self,
        plugins: Sequence[LoadedPlugin],
        config: ChainConfig,
        telemetry: Telemetry,
        runner: CompletionRunner,
    ) -> None:
        self.plugins = list(plugins)
        self._config = config
        self._telemetry = telemetry
        self._runner = runner
        self.rewriters = [p for p in plugins if isinstance(p.instance, RequestRewriter)]
        reverse = list(reversed(plugins))
        self.response_filters = [p for p in reverse if isinstance(p.instance, ResponseFilter)]
        self.stream_filters = [p for p in reverse if isinstance(p.instance, StreamFilter)]
        self.observers = [p for p in reverse if isinstance(p.instance, CompletionObserver)]

    def setting_fallbacks(self) -> dict[str, dict[str, Any]]:
        """For each memory setting, what the plugins of this chain use when nobody set it
        (their own config; the optional plugin method ``setting_fallbacks()``, see
        :class:`gateway.chain.sdk.CallContext`): ``{setting: {plugin: value}}``."""
        used: dict[str, dict[str, Any]] = {}
        for plugin in self.plugins:
            method = getattr(plugin.instance, "setting_fallbacks", None)
            if callable(method):
                for name, value in method().items():
                    used.setdefault(name, {})[plugin.name] = value
        return used

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.plugins]

    # -- bookkeeping -------------------------------------------------------------------

    def _failed(self, call: CallContext, name: str, hook: str, reason: str, span: Any = None) -> None:
        call.degrade(name, reason)
        self._telemetry.metrics.inc("memgate_plugin_failures_total", plugin=name, hook=hook, reason=reason.split(":")[0])
        if span is not None and span.is_recording():
            span.set_attribute("memgate.degraded", reason)

    def _skipped(self, call: CallContext, name: str, hook: str, reason: str, span: Any = None) -> None:
        call.degrade(name, reason)
        self._telemetry.metrics.inc("memgate_plugin_skips_total", plugin=name, hook=hook, reason=reason)
        if span is not None and span.is_recording():
            span.set_attribute("memgate.skipped", reason)

    # -- request phase -----------------------------------------------------------------

    async def rewrite(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        """Run every request hook in order under budgets, then render ``call.injection``
        once; returns the request to send (``request`` itself when nothing changed). See
        the module docstring for the failure rules. The phase's duration (recall latency)
        goes to ``memgate_request_phase_seconds`` (not when the client left)."""
        started = time.perf_counter()
        result = await self._rewrite(call, request)
        self._telemetry.metrics.observe("memgate_request_phase_seconds", time.perf_counter() - started)
        return result

    async def _rewrite(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        current = request
        for plugin in self.rewriters:
            if not plugin.runs_for(call):
                continue
            left = call.time_left()
            if left <= 0:
                self._failed(call, plugin.name, "rewrite_request", "deadline")
                return self._original(call, request)
            budget = min(plugin.budget_s, left)
            before = call.injection
            reason = None
            with self._telemetry.span(f"plugin {plugin.name}.rewrite_request") as span:
                try:
                    async with asyncio.timeout(budget):
                        result = await plugin.instance.rewrite_request(call, current)
                    if not isinstance(result, ChatRequest):
                        raise TypeError(f"rewrite_request returned {type(result).__name__}")
                    current = result
                    continue
                except RequestRejected:
                    raise  # the client's input is bad: a 400, not a degraded reply
                except Skipped as skip:
                    call.injection = before
                    self._skipped(call, plugin.name, "rewrite_request", skip.reason, span)
                    current = self._request_fallback(call, plugin, current, span)
                    continue
                except TimeoutError:
                    reason = "deadline" if budget < plugin.budget_s else "timeout"
                except Exception as exc:  # fail open; BaseException propagates
                    reason = f"error:{type(exc).__name__}"
                    log.warning("plugin %s rewrite_request failed: %r", plugin.name, exc)
                call.injection = before
                self._failed(call, plugin.name, "rewrite_request", reason, span)
                if reason != "deadline" and _has_request_fallback(plugin.instance):
                    current = self._request_fallback(call, plugin, current, span)
                    continue
            if reason == "deadline" or plugin.on_failure == "original":
                return self._original(call, request)
        final = render(current, call.injection)
        call.sent = final
        return final

    def _request_fallback(self, call: CallContext, plugin: LoadedPlugin, current: ChatRequest, span: Any) -> ChatRequest:
        """``current`` through the plugin's ``request_fallback`` when it has one (else
        ``current``); a fallback that raises or returns something else is counted as a
        failure of ``request_fallback`` and ``current`` goes on."""
        if not _has_request_fallback(plugin.instance):
            return current
        try:
            result = plugin.instance.request_fallback(call, current)
            if not isinstance(result, ChatRequest):
                raise TypeError(f"request_fallback returned {type(result).__name__}")
            return result
        except Exception as exc:  # the fallback must not raise; belt and braces
            log.warning("plugin %s request_fallback failed: %r", plugin.name, exc)
            self._failed(call, plugin.name, "request_fallback", f"error:{type(exc).__name__}", span)
            return current

    @staticmethod
    def _original(call: CallContext, request: ChatRequest) -> ChatRequest:
        call.injection = type(call.injection)()
        call.sent = request
        return request

    # -- response phase ----------------------------------------------------------------

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        """Run non-stream response filters in reverse order under budgets; a failing one
        is replaced by its ``response_fallback`` of its input."""
        current = body
        for plugin in self.response_filters:
            if not plugin.runs_for(call):
                continue
            with self._telemetry.span(f"plugin {plugin.name}.filter_response") as span:
                reason = None
                try:
                    async with asyncio.timeout(plugin.reply_budget_s):
                        current = await plugin.instance.filter_response(call, current)
                    continue
                except Skipped as skip:
                    self._skipped(call, plugin.name, "filter_response", skip.reason, span)
                    reason = "skipped"
                except TimeoutError:
                    self._failed(call, plugin.name, "filter_response", "timeout", span)
                    reason = "timeout"
                except Exception as exc:
                    log.warning("plugin %s filter_response failed: %r", plugin.name, exc)
                    self._failed(call, plugin.name, "filter_response", f"error:{type(exc).__name__}", span)
                    reason = "error"
                if reason:
                    current = plugin.instance.response_fallback(call, current)
        return current

    async def filter_stream(self, call: CallContext, source: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
        """Chunks through every stream filter (reverse order), then each ``on_stream_end``.

        ``[DONE]`` is not shown to filters; the relay writes it after this ends. When a
        filter's fallback ends the stream, the rest of ``source`` is not relayed.
        """
        filters = [p for p in self.stream_filters if p.runs_for(call)]
        state = _StreamState()
        try:
            async for chunk in source:
                for out in await self._through(call, filters, state, 0, chunk):
                    yield out
                if state.ended:
                    return
            for i, plugin in enumerate(filters):
                if i in state.bypassed:
                    continue
                ending = plugin.instance.on_stream_end(call)
                deadline = asyncio.get_running_loop().time() + plugin.reply_budget_s
                try:
                    while True:
                        # the budget covers the hook's own work, not the relay's writes to
                        # the client between two of its chunks (a slow client is not the
                        # plugin's overrun)
                        async with asyncio.timeout_at(deadline):
                            try:
                                chunk = await anext(ending)
                            except StopAsyncIteration:
                                break
                        for out in await self._through(call, filters, state, i + 1, chunk):
                            yield out
                        if state.ended:
                            return
                except Exception as exc:  # TimeoutError included
                    for out in self._stream_failed(call, plugin, i, state, "on_stream_end", exc):
                        yield out
                    if state.ended:
                        return
                finally:
                    await ending.aclose()
        finally:
            for span in state.spans.values():
                span.end()

    def _span_for(self, state: _StreamState, i: int, plugin: LoadedPlugin) -> Any:
        span = state.spans.get(i)
        if span is None:
            span = state.spans[i] = self._telemetry.start_span(f"plugin {plugin.name}.stream")
        return span

    def _stream_failed(
        self, call: CallContext, plugin: LoadedPlugin, i: int, state: _StreamState, hook: str, exc: Exception
    ) -> list[Chunk]:
        span = self._span_for(state, i, plugin)
        if isinstance(exc, Skipped):
            self._skipped(call, plugin.name, hook, exc.reason, span)
        elif isinstance(exc, TimeoutError):
            self._failed(call, plugin.name, hook, "timeout", span)
        else:
            log.warning("plugin %s %s failed: %r", plugin.name, hook, exc)
            self._failed(call, plugin.name, hook, f"error:{type(exc).__name__}", span)
        state.bypassed.add(i)
        ending = plugin.instance.stream_fallback(call)
        if ending is None:
            return []
        state.ended = True
        return list(ending)

    async def _through(
        self, call: CallContext, filters: Sequence[LoadedPlugin], state: _StreamState, start: int, chunk: Chunk
    ) -> list[Chunk]:
        chunks = [chunk]
        budget = self._config.chunk_budget_ms / 1000.0
        for i in range(start, len(filters)):
            if i in state.bypassed:
                continue
            plugin = filters[i]
            self._span_for(state, i, plugin)
            out: list[Chunk] = []
            for c in chunks:
                if i in state.bypassed:
                    out.append(c)
                    continue
                try:
                    async with asyncio.timeout(budget):
                        out.extend(await plugin.instance.on_chunk(call, c))
                except Exception as exc:  # TimeoutError included
                    ending = self._stream_failed(call, plugin, i, state, "on_chunk", exc)
                    if state.ended:
                        return ending
                    out.append(c)
            chunks = out
        return chunks

    # -- completion phase --------------------------------------------------------------

    def complete(self, call: CallContext, reply: AssembledReply) -> None:
        """Hand the whole reply to completion observers in the background."""
        if any(p.runs_for(call) for p in self.observers):
            self._runner.submit(self._observe(call, reply))

    async def _observe(self, call: CallContext, reply: AssembledReply) -> None:
        budget = self._config.completion_budget_ms / 1000.0
        for plugin in self.observers:
            if not plugin.runs_for(call):
                continue
            with self._telemetry.span(f"plugin {plugin.name}.on_complete") as span:
                try:
                    async with asyncio.timeout(budget):
                        await plugin.instance.on_complete(call, reply)
                except Skipped as skip:
                    self._skipped(call, plugin.name, "on_complete", skip.reason, span)
                except TimeoutError:
                    self._failed(call, plugin.name, "on_complete", "timeout", span)
                except Exception as exc:
                    log.warning("plugin %s on_complete failed: %r", plugin.name, exc)
                    self._failed(call, plugin.name, "on_complete", f"error:{type(exc).__name__}", span)


def _has_request_fallback(instance: Any) -> bool:
    return callable(getattr(instance, "request_fallback", None))


class CompletionRunner:
    """Background work owned by the app lifespan, with a bound on work in flight.

    ``submit`` never blocks: past ``max_pending`` the work is shed and counted
    (``memgate_completions_shed_total``) so reply capture cannot slow the relay.
    """

    def __init__(self, max_pending: int, telemetry: Telemetry) -> None:
        self._max = max_pending
        self._telemetry = telemetry
        self._group: asyncio.TaskGroup | None = None
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def __aenter__(self) -> CompletionRunner:
        self._group = asyncio.TaskGroup()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        group, self._group = self._group, None
        if group is not None:
            try:
                await group.__aexit__(*exc)
            except BaseExceptionGroup as errors:
                # The TaskGroup wraps an error raised inside the ``async with`` (a refused
                # config during start-up) in an ExceptionGroup: let it through as itself.
                if exc[1] is None or list(errors.exceptions) != [exc[1]]:
                    raise

    @property
    def pending(self) -> int:
        return self._pending

    def submit(self, work: Any) -> bool:
        """Schedule a coroutine; False (and the coroutine closed) if shed."""
        if self._group is None or self._pending >= self._max:
            work.close()
            self._telemetry.metrics.inc("memgate_completions_shed_total")
            log.warning("completion hooks shed: %d already in flight (chain.max_pending_completions)", self._pending)
            return False
        self._pending += 1
        self._idle.clear()
        self._group.create_task(self._run(work))
        return True

    async def _run(self, work: Any) -> None:
        try:
            await work
        except Exception as exc:  # observers are already guarded; belt and braces
            log.warning("completion work failed: %r", exc)
        finally:
            self._pending -= 1
            if self._pending == 0:
                self._idle.set()

    async def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until no completion work is in flight (tests, shutdown)."""
        async with asyncio.timeout(timeout):
            await self._idle.wait()


def check_key_overrides(
    config: GatewayConfig, classes: Mapping[str, type], ordered: list[type], overrides: Mapping[str, PluginOverride],
    where: str,
) -> None:
    """Per-key plugin overrides against the chain of ``config`` (``classes``: name ->
    plugin class; ``ordered``: the chain's classes in order); see :func:`validate_key_plugins`.

    Raises:
        ConfigError: an unknown plugin, an invalid merged config or a conflict, naming ``where``.
    """
    for name, override in overrides.items():
        found = next((e for e in config.plugins if e.name == name), None)
        if found is None:
            raise ConfigError(f"{where}.{name}: no such plugin in `plugins:` of gateway.yaml")
        merged = {**found.config, **override.config}
        plugin_config(classes[name], merged, f"{where}.{name}.config")
    if overrides:
        on = enabled_entries(config.plugins, ordered, dict(overrides))
        check_conflicts([e.name for e, _ in on], [c for _, c in on], where)


def validate_key_plugins(
    config: GatewayConfig, overrides: Mapping[str, PluginOverride], where: str, registry: Mapping[str, type],
) -> None:
    """Check a minted key's plugin overrides (``memgate keys create --plugin``, ``POST
    /v1/admin/keys``) as start-up checks a config key's: each names a plugin of the chain,
    its config merged over the chain's is valid, and the key's chain has no conflict.

    Raises:
        ConfigError: the first problem, naming ``<where>.<plugin>``.
    """
    classes = {e.name: resolve_plugin_class(e.name, registry) for e in config.plugins}
    check_key_overrides(config, classes, [classes[e.name] for e in config.plugins], overrides, where)
