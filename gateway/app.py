"""The composition root: :func:`compose` builds the whole gateway once; :func:`create_app`
serves it with litestar. Nothing exists at import time.

``compose`` builds, in order, inside one exit stack (closed in reverse): telemetry, Redis
(:func:`gateway.memory.factory.open_redis`: the embedded server when ``memory.redis_url``
is empty), the upstream pool, the memory store (:func:`gateway.memory.factory.open_store`,
the same composition the tests use), the key store and authenticator, the completion
runner, the plugin :class:`~gateway.chain.sdk.Services`, the chain (every plugin built and
validated, key overrides included), then starts the plugins' lifecycles (memorization
workers), and finally the proxy routes. The result, :class:`Gateway`, has every part
set: nothing is filled in later.

Litestar serves the app. The proxy routes (chat completions, embeddings, models) are raw
ASGI handlers (byte-exact relay, disconnect watching); health, metrics and the memory API
(:mod:`gateway.api.memories`, a litestar Controller with guards and dependency injection)
are ordinary litestar handlers. ``/mcp`` serves the memory as MCP tools over Streamable
HTTP (:mod:`gateway.api.mcp`; the SDK's session manager runs in the lifespan, inside
the composed gateway). Everything bound to the event loop is created in the lifespan, on
the server's loop. The lifespan then warms the models (:meth:`Gateway.warm`: embedder,
calibration, tokenizers, each run once) before uvicorn accepts a connection, so the first
request finds them loaded; ``/readyz`` reports them as ``checks.models``.

``GET /metrics`` serves the gateway's own registry (:mod:`gateway.runtime.metrics`) in the
format the scraper's ``Accept`` asks for (Prometheus text 0.0.4 by default). Every routed
request is measured once: the proxy routes by :class:`~gateway.proxy.handler.ProxyRoute`,
the litestar handlers by the :class:`_HttpMetrics` middleware.

Unknown paths, including unknown ``/v1/*`` paths, get 404 in the OpenAI error envelope:
the gateway proxies only the endpoints it understands (openai-compat item 26).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from litestar import Litestar, Request, Response, get
from litestar.enums import ScopeType
from litestar.exceptions import HTTPException, ValidationException
from litestar.handlers import asgi
from litestar.middleware import ASGIMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, SecurityScheme
from litestar.routes import HTTPRoute
from opentelemetry.sdk.trace.export import SpanExporter

from gateway import __version__
from gateway.api.admin.console_api import ADMIN_REPLY_MODELS, ADMIN_REQUEST_MODELS, admin_controllers, prompt_tokens
from gateway.api.admin.users import AdminUsersController
from gateway.api.console import console_router
from gateway.api.guards import MemoryApi
from gateway.api.lorebooks import LorebooksController
from gateway.api.mcp import McpHttpEndpoint, open_http_endpoint
from gateway.api.memories import MemoriesController
from gateway.api.openapi import apply_pydantic_schemas
from gateway.api.responses import param_name
from gateway.api.settings import MemorySettingsController
from gateway.chain.chain import ChainFactory, CompletionRunner, check_settings, settings_schema
from gateway.chain.forget import forget_user
from gateway.chain.services import PluginServices
from gateway.config import GatewayConfig
from gateway.lorebook.repository import LorebookRepository
from gateway.memorization.service import Memorization
from gateway.memory.factory import is_cluster, open_redis, open_store
from gateway.memory.keys import KeySpace, escape_key_part
from gateway.memory.store import MemoryStore
from gateway.proxy.auth import Authenticator
from gateway.proxy.keystore import RedisKeyStore
from gateway.proxy.passthrough import Embeddings, Models
from gateway.proxy.responses_owners import ResponseOwners
from gateway.proxy.upstream import UpstreamPool, forward_headers, open_stream
from gateway.routes.chat import ChatCompletions
from gateway.routes.responses import Responses
from gateway.runtime.breaker import BreakerRegistry
from gateway.runtime.errors import MemgateError, error_envelope
from gateway.runtime.metrics import Metrics, StatusRecorder, observe_http_request
from gateway.runtime.telemetry import Telemetry
from gateway.settings.memory_settings import SettingsService, SettingsStore

__all__ = ["Gateway", "Warmth", "compose", "create_app", "default_registry"]

log = logging.getLogger("memgate")


#: How long one readiness probe may spend warming models again after a failed warm.
REWARM_TIMEOUT_S = 2.0


@dataclass
class Warmth:
    """Whether every model the gateway serves with has run once (:meth:`Gateway.warm`).

    Attributes:
        state: True once warm; else ``"cold: <why>"`` (``/readyz`` ``checks.models``).
        seconds: wall time of the last warm-up, seconds.
        warmed: how many warm-ups succeeded (0 until the first does; then 1).
    """

    state: Any = "cold: not warmed yet"
    seconds: float = 0.0
    warmed: int = 0


@dataclass(frozen=True)
class Gateway:
    """Everything one running gateway owns (built by :func:`compose`)."""

    config: GatewayConfig
    telemetry: Telemetry
    redis: aioredis.Redis
    upstreams: UpstreamPool
    store: MemoryStore
    auth: Authenticator
    runner: CompletionRunner
    services: PluginServices
    chains: ChainFactory
    chat: ChatCompletions
    embeddings: Embeddings
    models: Models
    lorebooks: LorebookRepository
    responses: Responses
    settings: SettingsService
    #: Every memorization the plugins asked :meth:`~gateway.chain.sdk.Services.memorization` for, in order
    #: (the admin console's queue status and dead letters).
    memorizations: list[Memorization] = field(default_factory=list)
    warmth: Warmth = field(default_factory=Warmth)

    async def forget_user(self, user_id: str) -> int:
        """Erase every memory of ``user_id``, the user's own lorebooks (their
        conversation timers too), memory settings and Responses tenancy records; every
        plugin's forget hook and the Responses records' run first
        (:func:`gateway.chain.forget.forget_user`). Then the same for every user the memory
        store knows under ``<user_id>/``: a group key's speakers are ``<namespace>/<name>``
        (:mod:`gateway.speakers.group`), so forgetting a group's namespace forgets its speakers
        (one read of the store's users set). Returns the memory records erased."""
        erased = await self._forget_one(user_id)
        for speaker in await self._users_under(user_id):
            erased += await self._forget_one(speaker)
        return erased

    async def _forget_one(self, user_id: str) -> int:
        erased = await forget_user([*self.chains.forgetters(), self.responses.owners], self.store, user_id)
        await self.lorebooks.forget_user(user_id)
        await self.settings.forget_user(user_id)
        return erased

    async def _users_under(self, namespace: str) -> list[str]:
        """Users of the memory store whose id starts with ``<namespace>/``, sorted."""
        prefix = namespace + "/"
        members: Any = await self.redis.smembers(KeySpace(self.config.memory.key_prefix).users)
        names = (m.decode() if isinstance(m, bytes) else m for m in members)
        return sorted(n for n in names if n.startswith(prefix))

    def memory_api(self) -> MemoryApi:
        """What the memory API's dependencies resolve to."""
        return MemoryApi(auth=self.auth, store=self.store, forget_user=self.forget_user,
                         ingester_for=self.chains.ingester_for, settings=self.settings)

    async def warm(self) -> Any:
        """Load and run once every model the request path uses, so the first request
        pays no first use: the store's embedder and calibration
        (:meth:`~gateway.memory.tenant_store.TenantMemoryStore.warm`), the console's
        token counter (:func:`gateway.api.admin.console_api.prompt_tokens`) and every plugin's
        :class:`~gateway.chain.sdk.Warmup` (tokenizers). Heavy work runs off the event loop.
        A failure is logged (warning, ``memgate`` logger) and kept in :attr:`warmth`
        (``/readyz`` reports it); the gateway serves anyway, loading on first use.
        Returns :attr:`Warmth.state`."""
        started = time.perf_counter()
        problems = []
        try:
            await self.store.warm()
        except Exception as exc:  # reported, the gateway still serves
            problems.append(f"embedder: {type(exc).__name__}: {exc}")
        try:
            await asyncio.to_thread(prompt_tokens, [{"role": "user", "content": "warm"}], None)
        except Exception as exc:  # reported, the gateway still serves
            problems.append(f"tokenizer: {type(exc).__name__}: {exc}")
        problems += await self.chains.warm()
        self.warmth.seconds = time.perf_counter() - started
        if problems:
            self.warmth.state = "cold: " + "; ".join(problems)
            log.warning("models not warm after %.1f s, the first requests load them: %s",
                        self.warmth.seconds, self.warmth.state)
        else:
            self.warmth.state = True
            self.warmth.warmed += 1
            log.info("models warm in %.1f s", self.warmth.seconds)
        return self.warmth.state

    async def ready(self) -> dict[str, Any]:
        """Readiness: Redis answers PING, the default upstream accepts a connection and
        every model is warm (``models``: True, else why not; a failed warm-up is tried
        again, up to :data:`REWARM_TIMEOUT_S`, by each probe until it succeeds)."""
        checks: dict[str, Any] = {}
        try:
            checks["redis"] = bool(await self.redis.ping())
        except Exception as exc:  # readiness reports, never raises
            checks["redis"] = f"down: {type(exc).__name__}"
        checks["upstream"] = await self._upstream_reachable()
        if self.warmth.state is not True:
            try:
                async with asyncio.timeout(REWARM_TIMEOUT_S):
                    await self.warm()
            except TimeoutError:
                pass  # still cold: reported below, tried again by the next probe
        checks["models"] = self.warmth.state
        return checks

    async def _upstream_reachable(self) -> Any:
        upstream = self.upstreams.default
        try:
            async with open_stream(upstream, "GET", "/models", None, forward_headers({}, upstream), timeout=2.0) as response:
                status = response.status_code
            return status < 500 or f"status {status}"
        except Exception as exc:  # readiness reports, never raises
            return f"down: {type(exc).__name__}"


#: Hosts that always want a bearer key: calls without one can only fail with 401.
KEYED_HOSTS = ("api.openai.com",)


def warn_missing_upstream_keys(config: GatewayConfig) -> list[str]:
    """Log a warning (``memgate`` logger) for each upstream (the default and every route)
    that points at OpenAI's API without an ``api_key``: the gateway would then send no
    ``Authorization`` header and every call would fail with 401 (an unset
    ``OPENAI_API_KEY`` in the default ``gateway.yaml`` gives this); the message names both
    fixes, the key and the upstream URL (``MEMGATE_UPSTREAM_URL`` of the default
    ``gateway.yaml``). Returns the messages."""
    targets: list[tuple[str, Any]] = [("upstream", config.upstream)]
    targets += [(f"upstream.routes.{i}", r) for i, r in enumerate(config.upstream.routes)]
    messages = []
    for path, target in targets:
        host = urlsplit(target.base_url).hostname or ""
        if target.api_key is None and host in KEYED_HOSTS:
            messages.append(
                f"{path}.api_key is empty but {path}.base_url is {target.base_url}: every call "
                "will be refused with 401 (set OPENAI_API_KEY, or point base_url at a server "
                "that needs no key: MEMGATE_UPSTREAM_URL with the default gateway.yaml, e.g. "
                "http://127.0.0.1:8000/v1)"
            )
    for message in messages:
        log.warning(message)
    return messages


def slot_owner(client: Any) -> Any:
    """``shard_of`` for the recall breakers on a Redis Cluster
    (:class:`gateway.runtime.breaker.ShardedBreaker`): the ``host:port`` of the node serving the
    user's hash slot (the ``{<escaped user>}`` tag of every key of the user,
    :mod:`gateway.memory.keys`) in the client's current slot table, which the client
    refreshes itself after a failover (MOVED, connection errors)."""
    from redis.crc import key_slot

    def shard_of(user_id: str) -> str:
        slot = key_slot(("{" + escape_key_part(user_id) + "}").encode())
        return str(client.nodes_manager.get_node_from_slot(slot).name)

    return shard_of


def default_registry() -> Mapping[str, type]:
    """The built-in plugins by name (the one place the core asks the plugins package)."""
    from plugins import builtin_plugins

    return builtin_plugins()


@contextlib.asynccontextmanager
async def compose(
    config: GatewayConfig,
    *,
    span_exporter: SpanExporter | None = None,
    registry: Mapping[str, type] | None = None,
    embedder: Any = None,
    start_plugins: bool = True,
    lazy_embedder: bool = False,
    warn_upstream: bool = True,
) -> AsyncIterator[Gateway]:
    """Build the gateway (module docstring); close everything on exit.

    Args:
        span_exporter: receives every span synchronously (tests).
        registry: replaces the built-in plugin table (tests).
        embedder: a loaded embedding model to share (tests), else one is loaded.
        start_plugins: False for CLI commands (forget, workers) that need the plugins
            but not their in-serve background work.
        lazy_embedder: load the embedding model only when something is embedded (CLI
            commands such as forget; :class:`gateway.memory.factory.LazyEmbedder`).
        warn_upstream: False for CLI commands that never call the upstream (settings,
            forget): no warning about a missing upstream key
            (:func:`warn_missing_upstream_keys`).

    Raises:
        ConfigError: an invalid plugin entry or key override.
        BackendUnavailable, StoreMismatch, MemoryUnavailable: see
            :func:`gateway.memory.factory.open_store`.
    """
    if warn_upstream:
        warn_missing_upstream_keys(config)
    telemetry = Telemetry(config.telemetry, span_exporter)
    try:
        async with contextlib.AsyncExitStack() as stack:
            redis = await stack.enter_async_context(open_redis(config.memory))
            upstreams = UpstreamPool(config.upstream)
            stack.push_async_callback(upstreams.aclose)
            store = await stack.enter_async_context(open_store(
                redis, config.memory, upstream_base_url=config.upstream.base_url,
                upstream_api_key=config.upstream.api_key, embedder=embedder,
                lazy_embedder=lazy_embedder,
            ))
            auth = Authenticator(
                config.clients, RedisKeyStore(redis, config.memory.key_prefix), config.auth.cache_ttl_s
            )
            runner = await stack.enter_async_context(
                CompletionRunner(config.chain.max_pending_completions, telemetry)
            )
            lorebooks = LorebookRepository(redis, config.memory.key_prefix)
            memorizations: list[Memorization] = []
            services = PluginServices(memorizations=memorizations,
                redis=redis, memory=store, upstreams=upstreams, telemetry=telemetry,
                key_prefix=config.memory.key_prefix, embedder=store.embedder, lorebooks=lorebooks,
                breakers=BreakerRegistry(shard_of=slot_owner(redis) if is_cluster(redis) else None),
            )
            chains = ChainFactory(
                config.plugins, registry if registry is not None else default_registry(), services,
                config.chain, telemetry, runner,
            )
            stack.push_async_callback(chains.aclose)
            check_settings(config, chains.settings_schema)
            for i, client in enumerate(config.clients):
                if client.plugins:
                    chains.validate_overrides(client.plugins, f"clients.{i}")
            if start_plugins:
                await chains.start()
            settings = SettingsService(
                config.settings, SettingsStore(redis, config.memory.key_prefix), schema=chains.settings_schema)
            yield Gateway(
                config=config, telemetry=telemetry, redis=redis, upstreams=upstreams, store=store,
                auth=auth, runner=runner, services=services, chains=chains,
                chat=ChatCompletions(config, auth, chains, upstreams, telemetry, settings),
                embeddings=Embeddings(config, auth, upstreams, telemetry),
                models=Models(config, auth, upstreams, telemetry),
                lorebooks=lorebooks,
                responses=Responses(config, auth, chains, upstreams, telemetry, settings, ResponseOwners(
                    redis, config.memory.key_prefix, config.upstream.responses_retention_s,
                    config.upstream.conversation_claims_ttl_s)),
                settings=settings, memorizations=memorizations,
            )
    finally:
        telemetry.shutdown()


def _envelope_response(status: int, message: str, type_: str, code: str | None) -> Response[Any]:
    return Response(error_envelope(message, type_, code), status_code=status)


def _http_exception(_: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    code = {404: "not_found", 405: "method_not_allowed"}.get(status)
    kind = "invalid_request_error" if status < 500 else "server_error"
    return Response(
        error_envelope(str(exc.detail), kind, code), status_code=status, headers=dict(exc.headers or {})
    )


def _validation_exception(_: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    """Litestar's request validation (body, query and path parameters) as a 400 in the
    OpenAI envelope: ``param`` is the first field at fault and the message names each
    field and its reason (``text: field required``)."""
    problems = [e for e in exc.extra if isinstance(e, dict)] if isinstance(exc.extra, list) else []
    parts = []
    for problem in problems[:5]:
        reason = str(problem.get("message") or "invalid value")
        reason = reason[:1].lower() + reason[1:]
        key = problem.get("key")
        key = param_name(key) if isinstance(key, str) else key
        problem["key"] = key
        parts.append(f"{key}: {reason}" if key else reason)
    param = next((str(p["key"]) for p in problems if p.get("key")), None)
    message = "; ".join(parts) or str(exc.detail)
    return Response(error_envelope(message, "invalid_request_error", "invalid_value", param), status_code=400)


def _memgate_exception(_: Request[Any, Any, Any], exc: MemgateError) -> Response[Any]:
    if exc.status >= 500:
        log.warning("%s: %s", exc.code, exc.message)  # details stay in the log
    return Response(exc.envelope(), status_code=exc.status, headers=exc.headers())


def _internal_exception(_: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.exception("unhandled error", exc_info=exc)
    return _envelope_response(500, "internal error in the gateway", "server_error", None)


def _options_allow(app: Litestar) -> Any:
    """A ``before_send`` hook that makes ``Allow`` on OPTIONS replies list every method of
    the path: litestar builds the automatic OPTIONS handler with the first handler's route
    only (``Allow: OPTIONS, POST`` for ``/v1/memories``, which also has GET)."""
    def plain(path: str) -> str:
        return re.sub(r"\{(\w+):[^}]*\}", r"{\1}", path)

    methods = {
        plain(route.path): ", ".join(sorted(route.methods))
        for route in app.routes
        if isinstance(route, HTTPRoute)
    }

    async def before_send(message: Any, scope: Any) -> None:
        if message["type"] == "http.response.start" and scope.get("method") == "OPTIONS":
            allow = methods.get(plain(scope.get("path_template", "")))
            if allow:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"allow"]
                message["headers"] = [*headers, (b"allow", allow.encode())]

    return before_send


class _Running:
    """The gateway and its MCP endpoint of a running app (set in the lifespan, before any request)."""

    gateway: Gateway
    mcp: McpHttpEndpoint


#: Route option that keeps a handler out of :class:`_HttpMetrics` (the proxy routes
#: measure themselves: :class:`gateway.proxy.handler.ProxyRoute`).
MEASURES_ITSELF = "measures_itself"


class _HttpMetrics(ASGIMiddleware):
    """``memgate_http_request_duration_seconds{route,method,status}`` for the litestar
    handlers (health, metrics, memory API). An exception leaving the handler is counted
    with the status the app's exception handlers give it (its ``status_code`` /
    ``status``, else 500). Unmatched paths (404) never reach a route's middleware."""

    scopes = (ScopeType.HTTP,)
    exclude_opt_key = MEASURES_ITSELF

    def __init__(self, running: _Running) -> None:
        self._running = running

    async def handle(self, scope: Any, receive: Any, send: Any, next_app: Any) -> None:
        started = time.perf_counter()
        tracked = StatusRecorder(send)
        try:
            await next_app(scope, receive, tracked)
        except Exception as exc:
            tracked.status = tracked.status or getattr(exc, "status_code", None) or getattr(exc, "status", None) or 500
            raise
        finally:
            metrics: Metrics = self._running.gateway.telemetry.metrics
            observe_http_request(metrics, scope, "unmatched", started, tracked.status)


#: Where the OpenAPI document (``openapi.json``) and its interactive UI are served.
OPENAPI_PATH = "/openapi"
#: Swagger UI's files (the swagger-ui-bundle-v2 package ships the swagger-ui-dist build):
#: served by the gateway itself, so ``/openapi`` renders with no network (no CDN).
OPENAPI_ASSETS = OPENAPI_PATH + "/ui"


def openapi_render_plugins() -> list[Any]:
    """The interactive UI at ``/openapi`` (and ``/openapi/swagger``): Swagger UI whose
    script, stylesheet and icon are the gateway's own files (:func:`openapi_assets_router`);
    litestar's defaults load them from a CDN. ``/openapi/openapi.json`` is litestar's."""
    from litestar.openapi.plugins import SwaggerRenderPlugin

    return [SwaggerRenderPlugin(
        path=["/", "/swagger"],
        js_url=f"{OPENAPI_ASSETS}/swagger-ui-bundle.js",
        css_url=f"{OPENAPI_ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{OPENAPI_ASSETS}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{OPENAPI_ASSETS}/favicon-32x32.png'>",
    )]


def openapi_assets_router() -> Any:
    """``GET /openapi/ui/<file>``: the swagger-ui-bundle package's Swagger UI build."""
    from litestar.static_files import create_static_files_router
    from swagger_ui_bundle import swagger_ui_path

    return create_static_files_router(
        path=OPENAPI_ASSETS, directories=[Path(str(swagger_ui_path))], name="openapi-ui", include_in_schema=False,
    )


def create_app(
    config: GatewayConfig,
    *,
    span_exporter: SpanExporter | None = None,
    registry: Mapping[str, type] | None = None,
    embedder: Any = None,
) -> Litestar:
    """The litestar app for ``config`` (arguments as :func:`compose`). The built
    :class:`Gateway` is ``app.state.gateway`` once the lifespan has started."""
    running = _Running()

    async def chat(scope: Any, receive: Any, send: Any) -> None:
        await running.gateway.chat(scope, receive, send)

    async def embeddings(scope: Any, receive: Any, send: Any) -> None:
        await running.gateway.embeddings(scope, receive, send)

    async def models(scope: Any, receive: Any, send: Any) -> None:
        await running.gateway.models(scope, receive, send)

    async def responses(scope: Any, receive: Any, send: Any) -> None:
        await running.gateway.responses(scope, receive, send)

    @get("/healthz", sync_to_thread=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @get("/readyz")
    async def readyz() -> Response[Any]:
        checks = await running.gateway.ready()
        ok = all(v is True for v in checks.values())
        return Response({"ready": ok, "checks": checks}, status_code=200 if ok else 503)

    @get("/metrics")
    async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
        body, content_type = await running.gateway.telemetry.metrics.render(request.headers.get("accept"))
        return Response(body, headers={"content-type": content_type})  # as is: no second charset

    async def mcp(scope: Any, receive: Any, send: Any) -> None:
        await running.mcp(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with (
            compose(config, span_exporter=span_exporter, registry=registry, embedder=embedder) as gateway,
            open_http_endpoint(gateway.store, gateway.auth, gateway.settings, config.mcp) as mcp_endpoint,
        ):
            await gateway.warm()  # before uvicorn accepts connections: the first request finds every model run once
            running.gateway = gateway
            running.mcp = mcp_endpoint
            app.state.gateway = gateway
            app.state.memory_api = gateway.memory_api()
            app.state.lorebooks = gateway.lorebooks
            yield

    itself = {MEASURES_ITSELF: True}
    route_handlers: list[Any] = [
        asgi(path=["/v1/chat/completions", "/chat/completions"], copy_scope=False, opt=itself)(chat),
        asgi(path=["/v1/embeddings", "/embeddings"], copy_scope=False, opt=itself)(embeddings),
        # mounted: litestar cannot route an ASGI handler with a path parameter (KeyError
        # in its routing trie), so the handler reads the model id from the raw path
        asgi(path=["/v1/models", "/models"], is_mount=True, copy_scope=False, opt=itself)(models),
        # mounted as models: POST /v1/responses and the stored-response routes under it
        asgi(path=["/v1/responses", "/responses"], is_mount=True, copy_scope=False, opt=itself)(responses),
        # memory as MCP tools, Streamable HTTP (gateway.api.mcp; Bearer key as every route)
        asgi(path="/mcp", copy_scope=False)(mcp),
        healthz,
        readyz,
        metrics,
        MemoriesController,
        AdminUsersController,
        MemorySettingsController,
        LorebooksController,
        *admin_controllers(),  # the web console's admin API (gateway.api.admin.console_api)
        console_router(),  # GET /console/: the web console (gateway.api.console)
        openapi_assets_router(),  # GET /openapi/ui/...: Swagger UI's files, from the swagger-ui-bundle package
    ]
    app = Litestar(
        route_handlers=route_handlers,
        lifespan=[lifespan],
        logging_config=None,  # logging is the CLI's (quiet by default); litestar's would set the root logger to INFO
        middleware=[_HttpMetrics(running)],
        exception_handlers={
            HTTPException: _http_exception,
            ValidationException: _validation_exception,
            MemgateError: _memgate_exception,
            Exception: _internal_exception,
        },
        openapi_config=OpenAPIConfig(
            title="memgate", version=__version__, path=OPENAPI_PATH, render_plugins=openapi_render_plugins(),
            description="The memory API of memgate (the proxied OpenAI routes follow the OpenAI API reference). "
            "Errors use the OpenAI error envelope (ErrorResponse); request bodies reject unknown fields.",
            components=Components(security_schemes={
                "bearer": SecurityScheme(type="http", scheme="bearer", description="A memgate key.")
            }),
        ),
    )
    app.before_send.append(_options_allow(app))
    # the settings routes' shapes: the core's settings and the plugin table's (checked again by compose)
    schema = settings_schema(config.plugins, registry if registry is not None else default_registry())
    requests, replies = schema.openapi_models()
    apply_pydantic_schemas(  # cached, served as is
        app.plugins.get("OpenAPIPlugin").provide_openapi_schema(), (*ADMIN_REQUEST_MODELS, *requests),
        (*ADMIN_REPLY_MODELS, *replies))
    return app
