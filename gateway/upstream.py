"""Upstream model providers: pooled clients, routing by model glob, error translation.

Each upstream gets one ``httpx.AsyncClient`` over the aiohttp transport
(``httpx-aiohttp``): on this 2-core machine a minimal litestar proxy reached 718 req/s at
concurrency 64 with httpx's own pool (p99 346 ms, the pool contends) and 2,814 req/s with
the aiohttp transport (issue 2 measurements), so the gateway uses the latter. Pool size
is ``pool_size``; ``connect_timeout`` and ``idle_timeout`` (no byte for that long,
before the first byte or between chunks) are enforced by the transport, the
``total_timeout`` of a call by the caller (:func:`total_deadline`).

httpx errors are translated here, once: timeouts -> :class:`UpstreamTimeout` (504),
other transport errors -> :class:`UpstreamError` (502).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_aiohttp import AiohttpTransport

from gateway.config import UpstreamConfig, UpstreamTarget
from gateway.errors import UpstreamConnectError, UpstreamError, UpstreamTimeout

# Request headers never forwarded: hop-by-hop (RFC 9110 §7.6.1), the client's gateway
# key, framing the transport recomputes, and the gateway's own headers.
_DROP_REQUEST = frozenset(
    {
        "authorization", "host", "content-length", "connection", "keep-alive",
        "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization",
        "proxy-connection", "accept-encoding", "x-memgate-user", "x-memgate-friend",
        "cookie",
    }
)
# Response headers never relayed: hop-by-hop and framing (the server recomputes them).
DROP_RESPONSE = frozenset(
    {
        "connection", "keep-alive", "transfer-encoding", "content-length",
        "content-encoding", "te", "trailer", "upgrade", "proxy-connection",
        "date", "server",
    }
)


@dataclass
class Upstream:
    """One configured upstream and its client."""

    config: UpstreamTarget
    client: httpx.AsyncClient
    base_url: str

    def url(self, path: str) -> str:
        return self.base_url + path

    def supports_tools(self, model: str) -> bool:
        return any(fnmatch.fnmatchcase(model, g) for g in self.config.supports_tools)


def _client(target: UpstreamTarget) -> httpx.AsyncClient:
    limits = httpx.Limits(
        max_connections=target.pool_size, max_keepalive_connections=target.pool_size
    )
    timeout = httpx.Timeout(
        connect=target.connect_timeout,
        read=target.idle_timeout,
        write=target.idle_timeout,
        pool=target.connect_timeout,
    )
    return httpx.AsyncClient(
        transport=AiohttpTransport(limits=limits, trust_env=False),
        timeout=timeout,
        trust_env=False,
    )


class UpstreamPool:
    """Every upstream of the config; :meth:`for_model` picks one by model glob."""

    def __init__(self, config: UpstreamConfig) -> None:
        self.config = config
        self.default = Upstream(config, _client(config), config.base_url.rstrip("/"))
        self.routes = [
            (tuple(r.models), Upstream(r, _client(r), r.base_url.rstrip("/")))
            for r in config.routes
        ]

    def for_model(self, model: str) -> Upstream:
        for globs, upstream in self.routes:
            if any(fnmatch.fnmatchcase(model, g) for g in globs):
                return upstream
        return self.default

    def all(self) -> list[Upstream]:
        return [self.default, *(u for _, u in self.routes)]

    async def aclose(self) -> None:
        for upstream in self.all():
            await upstream.client.aclose()


def forward_headers(
    client_headers: Mapping[str, str], upstream: Upstream, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Headers for the upstream call: the client's (minus the dropped set), the
    configured extras, ``accept-encoding: identity`` (bodies are relayed as is) and the
    upstream key as ``Authorization``."""
    headers = {k: v for k, v in client_headers.items() if k not in _DROP_REQUEST}
    headers.update(upstream.config.headers)
    if extra:
        headers.update(extra)
    headers["accept-encoding"] = "identity"
    if upstream.config.api_key:
        headers["authorization"] = f"Bearer {upstream.config.api_key}"
    return headers


def relay_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """Upstream response headers to pass on to the client (rate limits, request ids...)."""
    return [(k.lower(), v) for k, v in headers if k.lower().decode("latin-1") not in DROP_RESPONSE]


@contextlib.contextmanager
def translate_errors() -> Any:
    """Map httpx errors to the gateway's error tree."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise UpstreamTimeout(f"upstream timed out: {exc or type(exc).__name__}") from None
    except httpx.ConnectError as exc:
        raise UpstreamConnectError(f"cannot connect to upstream: {exc}") from None
    except (httpx.TransportError, httpx.StreamError) as exc:
        raise UpstreamError(f"upstream connection failed: {exc or type(exc).__name__}") from None


@contextlib.asynccontextmanager
async def open_stream(
    upstream: Upstream, method: str, path: str, body: bytes | None, headers: Mapping[str, str]
) -> AsyncIterator[httpx.Response]:
    """Send a request and yield the response with its body unread; always closed.

    Raises:
        UpstreamTimeout, UpstreamError: the call failed before a response arrived.
    """
    request = upstream.client.build_request(method, upstream.url(path), content=body, headers=headers)
    with translate_errors():
        response = await upstream.client.send(request, stream=True)
    try:
        yield response
    finally:
        await response.aclose()


async def iter_body(response: httpx.Response) -> AsyncIterator[bytes]:
    """The raw body as it arrives, with errors translated."""
    with translate_errors():
        async for part in response.aiter_raw():
            yield part


async def read_body(response: httpx.Response) -> bytes:
    with translate_errors():
        return await response.aread()


class UpstreamCaller:
    """Further upstream calls made on behalf of one client call (plugin tool loops).

    Uses the same upstream, headers and trace context as the client's call.
    """

    def __init__(self, upstream: Upstream, headers: Mapping[str, str]) -> None:
        self.upstream = upstream
        self._headers = dict(headers)
        self.calls = 0

    async def complete(self, body: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """A non-stream chat completion; returns the parsed body.

        Raises:
            UpstreamError: non-2xx status (message carries the upstream body), bad JSON,
                or transport failure; UpstreamTimeout past ``timeout`` seconds.
        """
        self.calls += 1
        payload = json.dumps({**body, "stream": False}).encode()
        async with asyncio.timeout(timeout or self.upstream.config.total_timeout):
            async with open_stream(self.upstream, "POST", "/chat/completions", payload, self._headers) as resp:
                raw = await read_body(resp)
        if resp.status_code >= 400:
            raise UpstreamError(f"upstream answered {resp.status_code}: {raw[:500]!r}")
        try:
            return json.loads(raw)
        except ValueError:
            raise UpstreamError("upstream answered with invalid JSON") from None

    @contextlib.asynccontextmanager
    async def stream(self, body: dict[str, Any]) -> AsyncIterator[httpx.Response]:
        """A streamed chat completion; yields the response (status not checked)."""
        self.calls += 1
        payload = json.dumps({**body, "stream": True}).encode()
        async with open_stream(self.upstream, "POST", "/chat/completions", payload, self._headers) as resp:
            yield resp


def monotonic_ms(since: float) -> float:
    """Milliseconds since a ``time.perf_counter()`` reading."""
    return (time.perf_counter() - since) * 1000.0
