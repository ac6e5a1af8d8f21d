"""Authenticated pass-through routes: ``POST /v1/embeddings``, ``GET /v1/models`` and
``GET /v1/models/{id}``.

Embeddings: the body goes upstream as sent (``encoding_format`` untouched: the SDK asks
for ``base64`` by default and decodes it itself; ``dimensions`` honoured by the upstream),
and the reply comes back byte for byte (openai-compat item 24).

Models: the upstream's ``{"object": "list", "data": [...]}`` filtered to the models the
key may use (item 23); any other upstream status is returned unchanged. One model
(``models.retrieve``): 404 in the envelope when the key may not use it, else the
upstream's answer unchanged.

Every upstream failure, the total timeout included, is mapped in
:func:`gateway.proxy.upstream.open_stream` (502 / 504).
"""

from __future__ import annotations

import json
from urllib.parse import quote, unquote

from gateway.proxy.asgi import Send, send_bytes
from gateway.proxy.handler import Incoming, ProxyRoute
from gateway.proxy.upstream import forward_headers, relay_headers
from gateway.runtime.errors import InvalidRequest, NotFound, PermissionDenied
from gateway.runtime.json_input import parse_json_object

__all__ = ["Embeddings", "Models"]


class Embeddings(ProxyRoute):
    """``POST /v1/embeddings``, relayed byte for byte."""

    route = "/v1/embeddings"
    endpoint = "embeddings"

    async def handle(self, incoming: Incoming, send: Send) -> None:
        principal = await self._auth.authenticate(incoming.headers.get("authorization"))
        model = parse_json_object(incoming.body).get("model")
        if not isinstance(model, str):
            raise InvalidRequest("model: must be a string naming the embedding model", param="model")
        if not principal.may_use(model):
            raise PermissionDenied(f"this key may not use model {model!r}", code="model_not_allowed")
        upstream = self._upstreams.for_model(model)
        headers = forward_headers(incoming.headers, upstream)
        async with self.upstream_call(upstream, "POST", "/embeddings", incoming.body, headers) as resp:
            data = await resp.aread()
        incoming.responded = True
        await send_bytes(send, resp.status_code, data, relay_headers(resp.raw_headers))


def model_path_tail(scope: dict) -> str:
    """What follows ``/models/`` in the request path, still percent-encoded ("" for the
    listing). Read from ``raw_path`` (the route is a mount, which rewrites ``path``)."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if raw else scope["path"]
    return path.split("?", 1)[0].split("/models", 1)[1].strip("/")


#: Characters a path segment may carry unencoded (RFC 3986 pchar, besides unreserved).
_SEGMENT_SAFE = ":@!$&'()*+,;="


def model_id(tail: str) -> str:
    """The model id a percent-encoded path tail names, or "" when it names none: not
    UTF-8, or a ``/``-separated part that is empty, ``.`` or ``..`` (ids such as
    ``meta-llama/Llama-3-8B`` keep their slash; nothing may climb out of ``/models/``)."""
    try:
        model = unquote(tail, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        return ""
    return "" if any(part in ("", ".", "..") for part in model.split("/")) else model


def model_path(model: str) -> str:
    """``model`` as upstream path segments, each percent-encoded (:func:`model_id`)."""
    return "/".join(quote(part, safe=_SEGMENT_SAFE) for part in model.split("/"))


class Models(ProxyRoute):
    """``GET /v1/models`` (filtered by the key's ``allowed_models``) and
    ``GET /v1/models/{id}``."""

    methods = ("GET",)
    route = "/v1/models"
    endpoint = "models"

    async def handle(self, incoming: Incoming, send: Send) -> None:
        principal = await self._auth.authenticate(incoming.headers.get("authorization"))
        tail = model_path_tail(incoming.scope)
        model = model_id(tail) if tail else None
        if model is not None and not principal.may_use(model):
            raise NotFound(f"The model {model!r} does not exist or you do not have access to it.", code="model_not_found")
        if model == "":
            raise NotFound("The model does not exist or you do not have access to it.", code="model_not_found")
        upstream = self._upstreams.for_model(model) if model else self._upstreams.default
        suffix = "/models" + (f"/{model_path(model)}" if model else "")
        async with self.upstream_call(upstream, "GET", suffix, None, forward_headers(incoming.headers, upstream)) as resp:
            data = await resp.aread()
        if resp.status_code == 200 and model is None:
            try:
                listing = json.loads(data)
                listing["data"] = [m for m in listing.get("data", []) if principal.may_use(str(m.get("id")))]
                data = json.dumps(listing).encode()
            except (ValueError, AttributeError, TypeError):
                pass  # not the documented shape: relay as is
        incoming.responded = True
        await send_bytes(send, resp.status_code, data, relay_headers(resp.raw_headers))
