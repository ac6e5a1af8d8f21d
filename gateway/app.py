"""``create_app(config)``: builds the whole gateway; nothing exists at import time.

Litestar serves the app. The proxy routes (chat completions, embeddings, models) are raw
ASGI handlers (byte-exact relay, disconnect watching); health, metrics and the memory
API are ordinary litestar handlers. Everything bound to the event loop (Redis client,
upstream pools, background runner, plugins) is created in the lifespan, on the server's
loop, and closed there.

Unknown paths, including unknown ``/v1/*`` paths, get 404 in the OpenAI error envelope:
the gateway proxies only the endpoints it understands (openai-compat item 26).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import redis.asyncio as aioredis
from litestar import Litestar, Request, Response, get
from litestar.exceptions import HTTPException
from litestar.handlers import asgi
from opentelemetry.sdk.trace.export import SpanExporter

from gateway.proxy.auth import Authenticator
from gateway.chain import ChainFactory, CompletionRunner
from gateway.config import GatewayConfig
from gateway.errors import MemgateError, error_envelope
from gateway.proxy.keystore import RedisKeyStore
from gateway.memory_wiring import MemoryWiring
from gateway.proxy.passthrough import Embeddings, Models
from gateway.plugin import Services
from gateway.proxy.chat import ChatCompletions
from gateway.telemetry import Telemetry
from gateway.proxy.upstream import UpstreamPool, forward_headers, open_stream

log = logging.getLogger("memgate")


class Gateway:
    """Everything one running gateway owns. ``start`` / ``aclose`` run in the lifespan."""

    def __init__(
        self,
        config: GatewayConfig,
        *,
        span_exporter: SpanExporter | None = None,
        registry: Mapping[str, type] | None = None,
        embedder: Any = None,
    ) -> None:
        self.config = config
        self._embedder = embedder
        self.telemetry = Telemetry(config.telemetry, span_exporter)
        self._registry = registry
        self.memory_wiring = MemoryWiring(config.memory)
        self.redis: aioredis.Redis | None = None
        self.upstreams: UpstreamPool | None = None
        self.runner: CompletionRunner | None = None
        self.chains: ChainFactory | None = None
        self.chat: ChatCompletions | None = None
        self.embeddings: Embeddings | None = None
        self.models: Models | None = None
        self.auth: Authenticator | None = None
        self.services: Services | None = None
        self._stack: contextlib.AsyncExitStack | None = None

    async def start(self) -> None:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        self._stack = stack
        try:
            await self._start(stack)
        except BaseException:
            await stack.aclose()
            raise

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        config = self.config
        self.redis = await stack.enter_async_context(self.memory_wiring.redis())
        self.upstreams = UpstreamPool(config.upstream)
        stack.push_async_callback(self.upstreams.aclose)
        memory = await stack.enter_async_context(
            self.memory_wiring.store(self.redis, config.upstream, self._embedder)
        )
        keystore = RedisKeyStore(self.redis, config.memory.key_prefix)
        self.auth = Authenticator(config.clients, keystore, config.auth.cache_ttl_seconds)
        self.runner = await stack.enter_async_context(
            CompletionRunner(config.chain.max_pending_completions, self.telemetry)
        )
        self.services = Services(
            redis=self.redis, memory=memory, upstreams=self.upstreams, metrics=self.telemetry.metrics
        )
        self.chains = ChainFactory(
            config.plugins, self._plugin_registry(), self.services, config.chain,
            self.telemetry, self.runner,
        )
        stack.push_async_callback(self.chains.aclose)
        from gateway.memorization.runtime import memorization_workers

        await stack.enter_async_context(memorization_workers(config, self.services, self.telemetry))
        for i, client in enumerate(config.clients):
            if client.plugins:
                self.chains.validate_overrides(client.plugins, f"clients.{i}")
        self.chat = ChatCompletions(config, self.auth, self.chains, self.upstreams, self.telemetry)
        self.embeddings = Embeddings(config, self.auth, self.upstreams)
        self.models = Models(config, self.auth, self.upstreams)

    def _plugin_registry(self) -> Mapping[str, type]:
        if self._registry is not None:
            return self._registry
        from plugins import builtin_plugins

        return builtin_plugins()

    async def aclose(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()
        self.telemetry.shutdown()

    async def forget_user(self, user_id: str) -> int:
        """Erase every memory of ``user_id`` (see :func:`gateway.forget.forget_user`)."""
        from gateway.forget import forget_user

        assert self.services is not None
        return await forget_user(self.redis, self.services.memory, user_id)

    async def ready(self) -> dict[str, Any]:
        """Readiness: Redis answers PING and the default upstream accepts a connection."""
        checks: dict[str, Any] = {}
        try:
            checks["redis"] = bool(await self.redis.ping()) if self.redis else False
        except Exception as exc:  # readiness reports, never raises
            checks["redis"] = f"down: {type(exc).__name__}"
        checks["upstream"] = await self._upstream_reachable()
        return checks

    async def _upstream_reachable(self) -> Any:
        assert self.upstreams is not None
        upstream = self.upstreams.default
        try:
            async with asyncio.timeout(2.0):
                async with open_stream(upstream, "GET", "/models", None, forward_headers({}, upstream)) as response:
                    status = response.status_code
            return status < 500 or f"status {status}"
        except Exception as exc:  # readiness reports, never raises
            return f"down: {type(exc).__name__}"


def _envelope_response(status: int, message: str, type_: str, code: str | None) -> Response[Any]:
    return Response(error_envelope(message, type_, code), status_code=status)


def _http_exception(_: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    code = {404: "not_found", 405: "method_not_allowed"}.get(status)
    kind = "invalid_request_error" if status < 500 else "server_error"
    return _envelope_response(status, str(exc.detail), kind, code)


def _memgate_exception(_: Request[Any, Any, Any], exc: MemgateError) -> Response[Any]:
    return Response(exc.envelope(), status_code=exc.status, headers=exc.headers())


def _internal_exception(_: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.exception("unhandled error", exc_info=exc)
    return _envelope_response(500, "internal error in the gateway", "server_error", None)


def create_app(
    config: GatewayConfig,
    *,
    span_exporter: SpanExporter | None = None,
    registry: Mapping[str, type] | None = None,
    embedder: Any = None,
) -> Litestar:
    """The litestar app for ``config``. For tests: ``registry`` replaces the built-in
    plugin table, ``span_exporter`` receives every span synchronously, ``embedder`` is a
    loaded embedding model shared across gateways (else each loads its own)."""
    gw = Gateway(config, span_exporter=span_exporter, registry=registry, embedder=embedder)

    async def chat(scope: Any, receive: Any, send: Any) -> None:
        await gw.chat(scope, receive, send)  # type: ignore[misc]

    async def embeddings(scope: Any, receive: Any, send: Any) -> None:
        await gw.embeddings(scope, receive, send)  # type: ignore[misc]

    async def models(scope: Any, receive: Any, send: Any) -> None:
        await gw.models(scope, receive, send)  # type: ignore[misc]

    @get("/healthz", sync_to_thread=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @get("/readyz")
    async def readyz() -> Response[Any]:
        checks = await gw.ready()
        ok = all(v is True for v in checks.values())
        return Response({"ready": ok, "checks": checks}, status_code=200 if ok else 503)

    @get("/metrics", media_type="text/plain; version=0.0.4")
    async def metrics() -> str:
        return await gw.telemetry.metrics.render()

    @contextlib.asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        await gw.start()
        try:
            yield
        finally:
            await gw.aclose()

    route_handlers: list[Any] = [
        asgi(path=["/v1/chat/completions", "/chat/completions"], copy_scope=False)(chat),
        asgi(path=["/v1/embeddings", "/embeddings"], copy_scope=False)(embeddings),
        asgi(path=["/v1/models", "/models"], copy_scope=False)(models),
        healthz,
        readyz,
        metrics,
        *gw.memory_wiring.route_handlers(gw),
    ]
    app = Litestar(
        route_handlers=route_handlers,
        lifespan=[lifespan],
        exception_handlers={
            HTTPException: _http_exception,
            MemgateError: _memgate_exception,
            Exception: _internal_exception,
        },
        openapi_config=gw.memory_wiring.openapi_config(),
    )
    app.state.gateway = gw
    return app
