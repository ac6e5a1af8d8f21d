"""Upstream model providers: pooled clients, routing by model glob, error translation.

Each upstream gets one pooled ``aiohttp.ClientSession`` (``pool_size`` connections,
keep-alive, no cookie jar, no automatic decompression or retries). Measured with
``python -m bench proxy`` on this 2-core machine (nginx upstream, plugins off, c=64):
``httpx.AsyncClient`` over the aiohttp transport (``httpx-aiohttp``) gave 1,437 req/s at
641 us of gateway CPU per request, of which ~25% was httpx's own request/response layer
(``build_request``, cookie extraction, auth/redirect wrappers); calling the aiohttp session
directly gave 2,748 req/s at 355 us (plain httpx with its own pool: 718 req/s).
The proxy path is what the project exists for, so it talks to aiohttp directly;
:class:`UpstreamResponse` exposes the small slice of a response the relay uses.

``connect_timeout_s`` and ``idle_timeout_s`` (no byte for that long, before the first byte or
between chunks) are enforced by the session, the ``total_timeout_s`` of a call by the
caller (``asyncio.timeout``). aiohttp errors are translated here, once: timeouts ->
:class:`UpstreamTimeout` (504), refused connections -> :class:`UpstreamConnectError`
(502), other transport errors -> :class:`UpstreamError` (502).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import aiohttp
from yarl import URL

from gateway.runtime.config import UpstreamConfig, UpstreamTarget
from gateway.runtime.errors import UpstreamConnectError, UpstreamError, UpstreamTimeout

__all__ = ['DROP_RESPONSE', 'Upstream', 'UpstreamCaller', 'UpstreamPool', 'UpstreamResponse', 'forward_headers', 'open_stream', 'relay_headers', 'translate_errors']

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


class UpstreamResponse:
    """An upstream response whose body has not been read yet.

    Attributes:
        status_code: HTTP status.
        raw_headers: ``[(name, value), ...]`` as bytes, in the upstream's order.
    """

    __slots__ = ("_response", "raw_headers", "status_code")

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status
        self.raw_headers = response.raw_headers

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """Body bytes as they arrive (errors translated)."""
        with translate_errors():
            async for part in self._response.content.iter_any():
                yield part

    async def aread(self) -> bytes:
        """The whole body (errors translated)."""
        with translate_errors():
            return await self._response.read()

    def close(self) -> None:
        """Return the connection to the pool, or close it if the body was not read to
        the end (aiohttp closes a connection whose payload is incomplete)."""
        self._response.release()


class Upstream:
    """One configured upstream and its connection pool (created on first use, on the
    running event loop)."""

    def __init__(self, config: UpstreamTarget) -> None:
        self.config = config
        self.base_url = config.base_url.rstrip("/")
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            t = self.config
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=t.pool_size, keepalive_timeout=60),
                timeout=aiohttp.ClientTimeout(
                    total=None, connect=t.connect_timeout_s, sock_connect=t.connect_timeout_s,
                    sock_read=t.idle_timeout_s,
                ),
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                trust_env=False,
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding"),
            )
        return self._session

    def url(self, path: str) -> str:
        return self.base_url + path

    def supports_tools(self, model: str) -> bool:
        return any(fnmatch.fnmatchcase(model, g) for g in self.config.supports_tools)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class UpstreamPool:
    """Every upstream of the config; :meth:`for_model` picks one by model glob."""

    def __init__(self, config: UpstreamConfig) -> None:
        self.config = config
        self.default = Upstream(config)
        self.routes = [(tuple(r.models), Upstream(r)) for r in config.routes]

    def for_model(self, model: str) -> Upstream:
        for globs, upstream in self.routes:
            if any(fnmatch.fnmatchcase(model, g) for g in globs):
                return upstream
        return self.default

    def all(self) -> list[Upstream]:
        return [self.default, *(u for _, u in self.routes)]

    async def aclose(self) -> None:
        for upstream in self.all():
            await upstream.aclose()


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
    """Map aiohttp errors to the gateway's error tree."""
    try:
        yield
    except aiohttp.ServerTimeoutError as exc:  # connect or idle (sock_read) timeout
        raise UpstreamTimeout(f"upstream timed out ({type(exc).__name__})") from None
    except aiohttp.ClientConnectorError as exc:
        raise UpstreamConnectError(f"cannot connect to upstream: {exc}") from None  # public_message to clients
    except aiohttp.ClientError as exc:
        raise UpstreamError(f"upstream connection failed ({type(exc).__name__})") from None


@contextlib.asynccontextmanager
async def open_stream(
    upstream: Upstream,
    method: str,
    path: str,
    body: bytes | None,
    headers: Mapping[str, str],
    *,
    timeout: float | None = None,
) -> AsyncIterator[UpstreamResponse]:
    """Send a request and yield the response with its body unread; always released.

    The whole call, including whatever the caller does with the response inside the
    ``async with`` (reading or relaying the body), runs under ``timeout`` seconds
    (default: the upstream's ``total_timeout_s``). Every failure of the call is mapped here,
    once, for every route and for the gateway's own calls (tool loops, memory model).

    Raises:
        UpstreamTimeout: the total timeout passed (504), or the connect / idle timeout.
        UpstreamConnectError: the connection was refused (502).
        UpstreamError: any other transport failure (502).
    """
    limit = upstream.config.total_timeout_s if timeout is None else timeout
    scope = asyncio.timeout(limit)
    try:
        async with scope:
            with translate_errors():
                # a query string goes as the client wrote it (yarl would re-quote it)
                target = URL(upstream.url(path), encoded=True) if "?" in path else upstream.url(path)
                raw = await upstream.session.request(
                    method, target, data=body, headers=headers, allow_redirects=False,
                    compress=False,
                )
            response = UpstreamResponse(raw)
            try:
                yield response
            finally:
                response.close()
    except TimeoutError:
        if not scope.expired():
            raise
        raise UpstreamTimeout(f"upstream call exceeded its total timeout ({limit} s)") from None


class UpstreamCaller:
    """Further upstream calls made on behalf of one client call (plugin tool loops).

    Uses the same upstream, headers and trace context as the client's call.
    """

    def __init__(self, upstream: Upstream, headers: Mapping[str, str]) -> None:
        self.upstream = upstream
        self._headers = dict(headers)
        self.calls = 0

    def headers(self) -> dict[str, str]:
        """A copy of the headers every call on this client's behalf carries."""
        return dict(self._headers)

    async def complete(self, body: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """A non-stream chat completion; returns the parsed body.

        Raises:
            UpstreamError: non-2xx status (message carries the upstream body), bad JSON,
                or transport failure; UpstreamTimeout past ``timeout`` seconds.
        """
        self.calls += 1
        payload = json.dumps({**body, "stream": False}).encode()
        async with open_stream(self.upstream, "POST", "/chat/completions", payload, self._headers, timeout=timeout) as resp:
            raw = await resp.aread()
        if resp.status_code >= 400:
            raise UpstreamError(f"upstream answered {resp.status_code}: {raw[:500]!r}")
        try:
            return json.loads(raw)
        except ValueError:
            raise UpstreamError("upstream answered with invalid JSON") from None

    @contextlib.asynccontextmanager
    async def stream(self, body: dict[str, Any]) -> AsyncIterator[UpstreamResponse]:
        """A streamed chat completion; yields the response (status not checked)."""
        self.calls += 1
        payload = json.dumps({**body, "stream": True}).encode()
        async with open_stream(self.upstream, "POST", "/chat/completions", payload, self._headers) as resp:
            yield resp

