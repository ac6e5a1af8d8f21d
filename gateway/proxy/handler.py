"""The skeleton every proxied route shares (chat completions, embeddings, models).

One request, in order: the method is checked (405 with ``Allow``), the body read under
``server.max_body_bytes`` (413), then a :class:`~gateway.proxy.asgi.DisconnectWatcher`
starts and the route's :meth:`ProxyRoute.handle` runs. A :class:`MemgateError` raised
before the response started becomes the OpenAI error envelope with its status; a client
disconnect cancels ``handle`` (and with it the upstream call, freeing its pool slot) and is
counted in ``memgate_client_disconnects_total``. Routes never repeat this plumbing.

Every request is measured here, once, in ``memgate_http_request_duration_seconds{route,
method,status}`` (route: litestar's path template, else the route's :attr:`ProxyRoute.route`;
status: the one sent, 499 when the client went away before a response started), and each
upstream call in ``memgate_upstream_duration_seconds{endpoint,status}``
(:meth:`ProxyRoute.upstream_call`; status ``error`` when no response came).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, ClassVar

from gateway.config import GatewayConfig
from gateway.proxy.asgi import ClientGone, DisconnectWatcher, Receive, Scope, Send, read_body, request_headers, send_error
from gateway.proxy.auth import Authenticator
from gateway.proxy.upstream import Upstream, UpstreamPool, open_stream
from gateway.runtime.errors import MemgateError, MethodNotAllowed
from gateway.runtime.metrics import StatusRecorder, observe_http_request
from gateway.runtime.telemetry import Telemetry

__all__ = ["Incoming", "ProxyRoute"]

log = logging.getLogger("memgate.proxy")


@dataclass
class Incoming:
    """One request as the route sees it.

    Attributes:
        scope: the ASGI scope.
        headers: request headers, lower-case names.
        body: the whole request body (bytes, at most ``server.max_body_bytes``).
        started: ``time.perf_counter()`` when the request arrived.
        watcher: fires (and cancels the handler task) when the client goes away.
        responded: set by the route once the response head went out.
    """

    scope: Scope
    headers: dict[str, str]
    body: bytes
    started: float
    watcher: DisconnectWatcher
    responded: bool = False


class ProxyRoute:
    """Base of the raw ASGI proxy routes; subclasses implement :meth:`handle`."""

    methods: ClassVar[tuple[str, ...]] = ("POST",)
    #: The route label when the scope has no ``path_template`` (a bare ASGI mount).
    route: ClassVar[str] = "proxy"
    #: The upstream endpoint label of :meth:`upstream_call`.
    endpoint: ClassVar[str] = "proxy"

    def __init__(self, config: GatewayConfig, auth: Authenticator, upstreams: UpstreamPool, telemetry: Telemetry) -> None:
        self._config = config
        self._auth = auth
        self._upstreams = upstreams
        self._telemetry = telemetry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        tracked = StatusRecorder(send)
        try:
            await self._serve(scope, receive, tracked, started)
        finally:
            observe_http_request(self._telemetry.metrics, scope, self.route, started, tracked.status)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, started: float) -> None:
        if scope["method"] not in self.methods:
            await send_error(send, MethodNotAllowed(scope["method"], self.methods))
            return
        headers = request_headers(scope)
        try:
            body = await read_body(receive, self._config.server.max_body_bytes)
        except MemgateError as exc:
            await send_error(send, exc)
            return
        except ClientGone:
            return
        task = asyncio.current_task()
        assert task is not None
        incoming = Incoming(scope, headers, body, started, DisconnectWatcher(receive, task))
        try:
            await self.handle(incoming, send)
        except MemgateError as exc:
            if exc.status >= 500:
                log.warning("%s: %s", exc.code, exc.message)  # details stay in the log
            if not incoming.responded:
                await send_error(send, exc)
        except asyncio.CancelledError:
            if not incoming.watcher.fired:
                raise
            task.uncancel()
            self._telemetry.metrics.inc("memgate_client_disconnects_total")
        finally:
            incoming.watcher.stop()

    @contextlib.asynccontextmanager
    async def upstream_call(
        self, upstream: Upstream, method: str, suffix: str, body: bytes | None, headers: dict[str, str],
    ) -> AsyncIterator[Any]:
        """:func:`gateway.proxy.upstream.open_stream`, timed to the response head (module
        docstring); errors propagate unchanged."""
        started = time.perf_counter()
        answered = False
        try:
            async with open_stream(upstream, method, suffix, body, headers) as response:
                answered = True
                self._telemetry.metrics.observe(
                    "memgate_upstream_duration_seconds", time.perf_counter() - started,
                    endpoint=self.endpoint, status=str(response.status_code),
                )
                yield response
        except Exception:
            if not answered:
                self._telemetry.metrics.observe(
                    "memgate_upstream_duration_seconds", time.perf_counter() - started,
                    endpoint=self.endpoint, status="error",
                )
            raise

    async def handle(self, incoming: Incoming, send: Send) -> None:
        """Answer one request; raise :class:`MemgateError` for an error reply.

        Set ``incoming.responded`` once the response head is sent: errors after that are
        the route's to report (e.g. one SSE error event)."""
        raise NotImplementedError
