"""The plugin chain: builds plugins from ``gateway.yaml`` and runs their hooks.

Order (Envoy/Starlette onion): request hooks run in ``plugins:`` order; response, stream
and completion hooks in reverse. A plugin's ``runs_after`` / ``runs_before`` are checked
at start-up and a bad order is refused with a message naming both entries; the chain
never reorders silently.

Failure rules (fail open):

- request phase: each rewrite hook has a budget (``budget_ms`` or
  ``chain.hook_budget_ms``) and the whole phase one deadline
  (``chain.request_deadline_ms``, 3 s, seed 002 §6.3). A hook that raises or overruns is
  counted (``memgate_plugin_failures_total``), logged, traced and named in
  ``x-memgate-degraded``; then, by the entry's ``on_failure``, either the client's
  **original** request goes upstream (default) or only that plugin's change is dropped.
  Past the deadline the original request always goes.
- response and stream filters: a filter that raises is bypassed for the rest of the
  reply (its input passes through unchanged); the reply is never cut short by a plugin.
- completion observers run after the client has the whole reply, in tasks owned by the
  app's lifespan (:class:`CompletionRunner`), each under ``chain.completion_budget_s``;
  beyond ``chain.max_pending_completions`` in flight, new runs are shed and counted.

Only ``Exception`` is caught, never ``BaseException``: a client disconnect (task
cancellation) always propagates.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from gateway.proxy.assembly import AssembledReply
from gateway.proxy.wire import ChatRequest, Chunk
from gateway.config import ChainConfig, ConfigError, PluginEntry, format_validation_error
from gateway.plugin import (
    CallContext,
    CompletionObserver,
    RequestRewriter,
    ResponseFilter,
    Services,
    StreamFilter,
)
from gateway.proxy.principal import Principal
from gateway.telemetry import Telemetry

log = logging.getLogger("memgate.chain")


@dataclass(frozen=True)
class LoadedPlugin:
    """A built plugin and its chain entry settings."""

    name: str
    instance: Any
    budget_s: float
    on_failure: str


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


def plugin_config(cls: type, raw: Mapping[str, Any], path: str) -> Any:
    """``cls.Config`` validated from ``raw``.

    Raises:
        ConfigError: naming the dotted path of each bad key (``plugins.2.config.limit``).
    """
    try:
        return cls.Config.model_validate(dict(raw))
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


class ChainFactory:
    """Validates plugin entries at start-up and hands out the chain for each principal.

    Per-key overrides (``enabled``, ``config`` merged over the global config) produce a
    chain variant, built once and cached by the override set.
    """

    def __init__(
        self,
        entries: Sequence[PluginEntry],
        registry: Mapping[str, type],
        services: Services,
        config: ChainConfig,
        telemetry: Telemetry,
        runner: "CompletionRunner",
    ) -> None:
        self._entries = list(entries)
        self._registry = registry
        self._services = services
        self._config = config
        self._telemetry = telemetry
        self._runner = runner
        self._classes = [resolve_plugin_class(e.name, registry) for e in self._entries]
        check_order([e.name for e in self._entries], self._classes)
        self._instances: dict[tuple[str, str], Any] = {}
        self._cache: dict[Any, PluginChain] = {}
        self.default = self._build({})

    def validate_overrides(self, overrides: Mapping[str, Any], where: str) -> None:
        """Build the chain for a set of overrides now, so errors surface at start-up."""
        self._chain_for(overrides, where)

    def for_principal(self, principal: Principal) -> "PluginChain":
        """The chain for this caller (the default chain when it has no overrides)."""
        if not principal.plugins:
            return self.default
        return self._chain_for(principal.plugins, f"key {principal.key_id}")

    def _chain_for(self, overrides: Mapping[str, Any], where: str) -> "PluginChain":
        cache_key = tuple(sorted((k, v.model_dump_json()) for k, v in overrides.items()))
        chain = self._cache.get(cache_key)
        if chain is None:
            unknown = set(overrides) - {e.name for e in self._entries}
            if unknown:
                raise ConfigError(f"{where}: overrides unknown plugin(s) {sorted(unknown)}")
            chain = self._cache[cache_key] = self._build(overrides, where)
        return chain

    def _build(self, overrides: Mapping[str, Any], where: str = "plugins") -> "PluginChain":
        loaded = []
        for index, (entry, cls) in enumerate(zip(self._entries, self._classes)):
            override = overrides.get(entry.name)
            enabled = entry.enabled if override is None or override.enabled is None else override.enabled
            if not enabled:
                continue
            raw = {**entry.config, **(override.config if override else {})}
            instance = self._instance(cls, raw, f"{where}.{index}.config" if not override else f"{where}.plugins.{entry.name}.config")
            budget = (entry.budget_ms or self._config.hook_budget_ms) / 1000.0
            loaded.append(LoadedPlugin(entry.name, instance, budget, entry.on_failure))
        return PluginChain(loaded, self._config, self._telemetry, self._runner)

    def _instance(self, cls: type, raw: dict[str, Any], path: str) -> Any:
        key = (cls.__name__, repr(sorted(raw.items(), key=lambda kv: kv[0])))
        if key not in self._instances:
            self._instances[key] = cls(plugin_config(cls, raw, path), self._services)
        return self._instances[key]

    async def aclose(self) -> None:
        """Close plugins that hold resources (those with an async ``aclose``)."""
        for instance in self._instances.values():
            close = getattr(instance, "aclose", None)
            if close is not None:
                await close()


class PluginChain:
    """The enabled plugins for one principal, grouped by capability once."""

    def __init__(
        self,
        plugins: Sequence[LoadedPlugin],
        config: ChainConfig,
        telemetry: Telemetry,
        runner: "CompletionRunner",
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

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.plugins]

    # -- request phase ---------------------------------------------------------------

    async def rewrite(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        """Run every rewrite hook in order under budgets; see the module docstring."""
        deadline = self._config.request_deadline_ms / 1000.0
        current = request
        for plugin in self.rewriters:
            left = call.deadline_left(deadline)
            if left <= 0:
                self._failed(call, plugin.name, "rewrite_request", "deadline")
                return request
            budget = min(plugin.budget_s, left)
            reason = None
            with self._telemetry.span(f"plugin {plugin.name}.rewrite_request") as span:
                try:
                    async with asyncio.timeout(budget):
                        result = await plugin.instance.rewrite_request(call, current)
                    if not isinstance(result, ChatRequest):
                        raise TypeError(f"rewrite_request returned {type(result).__name__}")
                    current = result
                except TimeoutError:
                    reason = "deadline" if budget < plugin.budget_s else "timeout"
                except Exception as exc:  # fail open; BaseException propagates
                    reason = f"error:{type(exc).__name__}"
                    log.warning("plugin %s rewrite_request failed: %r", plugin.name, exc)
                if reason and span.is_recording():
                    span.set_attribute("memgate.degraded", reason)
            if reason:
                self._failed(call, plugin.name, "rewrite_request", reason)
                if reason == "deadline" or plugin.on_failure == "original":
                    return request
        return current

    def _failed(self, call: CallContext, name: str, hook: str, reason: str) -> None:
        call.degraded.append(f"{name}:{reason}")
        self._telemetry.metrics.inc("memgate_plugin_failures_total", plugin=name, hook=hook, reason=reason.split(":")[0])

    # -- response phase --------------------------------------------------------------

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        """Run non-stream response filters in reverse order; a failing one is bypassed."""
        current = body
        for plugin in self.response_filters:
            with self._telemetry.span(f"plugin {plugin.name}.filter_response"):
                try:
                    current = await plugin.instance.filter_response(call, current)
                except Exception as exc:
                    log.warning("plugin %s filter_response failed: %r", plugin.name, exc)
                    self._failed(call, plugin.name, "filter_response", f"error:{type(exc).__name__}")
        return current

    async def filter_stream(
        self, call: CallContext, source: AsyncIterator[Chunk]
    ) -> AsyncIterator[Chunk]:
        """Chunks through every stream filter (reverse order), then each ``on_stream_end``.

        ``[DONE]`` is not shown to filters; the relay writes it after this ends.
        """
        filters = self.stream_filters
        broken: set[int] = set()
        async for chunk in source:
            for out in await self._through(call, filters, broken, 0, chunk):
                yield out
        for i, plugin in enumerate(filters):
            if i in broken:
                continue
            try:
                async for chunk in plugin.instance.on_stream_end(call):
                    for out in await self._through(call, filters, broken, i + 1, chunk):
                        yield out
            except Exception as exc:
                log.warning("plugin %s on_stream_end failed: %r", plugin.name, exc)
                self._failed(call, plugin.name, "on_stream_end", f"error:{type(exc).__name__}")

    async def _through(
        self,
        call: CallContext,
        filters: Sequence[LoadedPlugin],
        broken: set[int],
        start: int,
        chunk: Chunk,
    ) -> list[Chunk]:
        chunks = [chunk]
        for i in range(start, len(filters)):
            if i in broken:
                continue
            plugin = filters[i]
            out: list[Chunk] = []
            for c in chunks:
                try:
                    out.extend(await plugin.instance.on_chunk(call, c))
                except Exception as exc:
                    log.warning("plugin %s on_chunk failed: %r", plugin.name, exc)
                    self._failed(call, plugin.name, "on_chunk", f"error:{type(exc).__name__}")
                    broken.add(i)
                    out.append(c)
            chunks = out
        return chunks

    # -- completion phase ------------------------------------------------------------

    def complete(self, call: CallContext, reply: AssembledReply) -> None:
        """Hand the whole reply to completion observers in the background."""
        if self.observers:
            self._runner.submit(self._observe(call, reply))

    async def _observe(self, call: CallContext, reply: AssembledReply) -> None:
        for plugin in self.observers:
            with self._telemetry.span(f"plugin {plugin.name}.on_complete"):
                try:
                    async with asyncio.timeout(self._config.completion_budget_s):
                        await plugin.instance.on_complete(call, reply)
                except TimeoutError:
                    self._failed(call, plugin.name, "on_complete", "timeout")
                except Exception as exc:
                    log.warning("plugin %s on_complete failed: %r", plugin.name, exc)
                    self._failed(call, plugin.name, "on_complete", f"error:{type(exc).__name__}")


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

    async def __aenter__(self) -> "CompletionRunner":
        self._group = asyncio.TaskGroup()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        group, self._group = self._group, None
        if group is not None:
            await group.__aexit__(*exc)

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
