"""Authenticated pass-through routes: ``POST /v1/embeddings`` and ``GET /v1/models``.

Embeddings: the body goes upstream as sent (``encoding_format`` untouched: the SDK asks
for ``base64`` by default and decodes it itself; ``dimensions`` honoured by the upstream),
and the reply comes back byte for byte (openai-compat item 24).

Models: the upstream's ``{"object": "list", "data": [...]}`` filtered to the models the
key may use (item 23); any other upstream status is returned unchanged.
"""

from __future__ import annotations

import asyncio
import json

from gateway.proxy.asgi import ClientGone, DisconnectWatcher, Receive, Scope, Send, read_body, request_headers, send_bytes, send_error
from gateway.proxy.auth import Authenticator
from gateway.config import GatewayConfig
from gateway.errors import InvalidRequest, MemgateError, PermissionDenied
from gateway.proxy.upstream import UpstreamPool, forward_headers, open_stream, relay_headers


class Passthrough:
    """Shared plumbing: auth, disconnect watching, error envelope."""

    method = "POST"

    def __init__(self, config: GatewayConfig, auth: Authenticator, upstreams: UpstreamPool) -> None:
        self._config = config
        self._auth = auth
        self._upstreams = upstreams

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != self.method:
            await send_error(send, InvalidRequest(f"use {self.method}", code="method_not_allowed"))
            return
        headers = request_headers(scope)
        task = asyncio.current_task()
        assert task is not None
        try:
            body = await read_body(receive, self._config.server.max_body_bytes)
            principal = await self._auth.authenticate(headers.get("authorization"))
        except MemgateError as exc:
            await send_error(send, exc)
            return
        except ClientGone:
            return
        watcher = DisconnectWatcher(receive, task)
        try:
            await self.handle(principal, body, headers, send)
        except MemgateError as exc:
            await send_error(send, exc)
        except asyncio.CancelledError:
            if not watcher.fired:
                raise
            task.uncancel()
        finally:
            watcher.stop()

    async def handle(self, principal, body: bytes, headers: dict[str, str], send: Send) -> None:  # noqa: ANN001
        raise NotImplementedError


class Embeddings(Passthrough):
    async def handle(self, principal, body: bytes, headers: dict[str, str], send: Send) -> None:  # noqa: ANN001
        try:
            model = json.loads(body).get("model")
        except (ValueError, AttributeError):
            raise InvalidRequest("request body must be a JSON object") from None
        if not isinstance(model, str):
            raise InvalidRequest("you must provide a model parameter", param="model")
        if not principal.may_use(model):
            raise PermissionDenied(f"this key may not use model {model!r}", code="model_not_allowed")
        upstream = self._upstreams.for_model(model)
        async with asyncio.timeout(upstream.config.total_timeout):
            async with open_stream(upstream, "POST", "/embeddings", body, forward_headers(headers, upstream)) as resp:
                data = await resp.aread()
        await send_bytes(send, resp.status_code, data, relay_headers(resp.raw_headers))


class Models(Passthrough):
    method = "GET"

    async def handle(self, principal, body: bytes, headers: dict[str, str], send: Send) -> None:  # noqa: ANN001
        upstream = self._upstreams.default
        async with asyncio.timeout(upstream.config.total_timeout):
            async with open_stream(upstream, "GET", "/models", None, forward_headers(headers, upstream)) as resp:
                data = await resp.aread()
        if resp.status_code == 200:
            try:
                listing = json.loads(data)
                listing["data"] = [m for m in listing.get("data", []) if principal.may_use(str(m.get("id")))]
                data = json.dumps(listing).encode()
            except (ValueError, AttributeError, TypeError):
                pass  # not the documented shape: relay as is
        await send_bytes(send, resp.status_code, data, relay_headers(resp.raw_headers))
