"""One error tree for the gateway, mapped once at the HTTP boundary.

Every error the gateway makes itself leaves as the OpenAI error envelope
``{"error": {"message", "type", "param", "code"}}`` (OpenAI API reference, "Errors") with
a status the official SDK retries correctly: it retries 408, 409, 429 and >= 500 and
honours ``x-should-retry`` (openai-python ``_should_retry``).

Errors of the libraries below (aiohttp, httpx, redis) are translated into this tree where they are
caught, never re-raised raw to the HTTP layer.

Errors reveal nothing internal: an error class with a ``public_message``
sends that fixed text to the client instead of its ``message``, which keeps the details
(socket paths, hosts, library messages) for the server log only.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

__all__ = ['AuthenticationFailed', 'InvalidRequest', 'KeyStoreUnavailable', 'MemgateError', 'MemoryModelFailed', 'MemoryUnavailable', 'MethodNotAllowed', 'NotFound', 'PayloadTooLarge', 'PermissionDenied', 'ServiceUnavailable', 'UnprocessableInput', 'UpstreamConnectError', 'UpstreamError', 'UpstreamTimeout', 'error_envelope']


class MemgateError(Exception):
    """Base of every error the gateway reports to a client.

    Attributes:
        status: HTTP status code.
        type: OpenAI envelope ``error.type``.
        code: OpenAI envelope ``error.code`` (machine-readable, or None).
        param: the request field at fault, or None.
    """

    status: ClassVar[int] = 500
    type: ClassVar[str] = "server_error"
    code: ClassVar[str | None] = None
    public_message: ClassVar[str | None] = None

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        if code is not None:
            self.code = code  # type: ignore[misc]

    def envelope(self) -> dict[str, Any]:
        """The OpenAI error envelope as a dict (``public_message`` when the class has one)."""
        return error_envelope(self.public_message or self.message, self.type, self.code, self.param)

    def body(self) -> bytes:
        """The envelope serialized as JSON bytes."""
        return json.dumps(self.envelope(), ensure_ascii=False).encode()

    def headers(self) -> dict[str, str]:
        """Extra response headers (e.g. ``retry-after``)."""
        return {}


def error_envelope(
    message: str, type_: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    """``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


class InvalidRequest(MemgateError):
    """Malformed or invalid input (400)."""

    status = 400
    type = "invalid_request_error"


class UnprocessableInput(InvalidRequest):
    """Well-formed input that fails validation: unknown scope, wrong vector size (422)."""

    status = 422


class AuthenticationFailed(MemgateError):
    """Missing, unknown or revoked key (401). The message never echoes the key."""

    status = 401
    type = "invalid_request_error"
    code = "invalid_api_key"


class PermissionDenied(MemgateError):
    """The key may not do this (403): model not allowed, admin route, naming users."""

    status = 403
    type = "invalid_request_error"
    code = "permission_denied"


class NotFound(MemgateError):
    """Unknown route or record (404)."""

    status = 404
    type = "invalid_request_error"
    code = "not_found"


class PayloadTooLarge(InvalidRequest):
    """Request body or memory text over the configured size (413)."""

    status = 413
    code = "payload_too_large"


class ServiceUnavailable(MemgateError):
    """A dependency (Redis, key store, embedding model) is unreachable (503, retryable)."""

    status = 503
    type = "service_unavailable"
    code = "service_unavailable"
    public_message = "a service the gateway depends on is unavailable; retry shortly"

    def headers(self) -> dict[str, str]:
        return {"retry-after": "1", "x-should-retry": "true"}


class KeyStoreUnavailable(ServiceUnavailable):
    """The Redis key store could not be reached while resolving a key (503, not 401)."""

    code = "key_store_unavailable"
    public_message = "the key store is unavailable; retry shortly"


class MemoryUnavailable(ServiceUnavailable):
    """The memory store (Redis or the embedding model) is unreachable (503)."""

    code = "memory_unavailable"
    public_message = "the memory store is unavailable; retry shortly"


class UpstreamError(MemgateError):
    """The upstream model could not be reached or failed mid-call (502)."""

    status = 502
    type = "upstream_error"
    code = "upstream_error"


class MemoryModelFailed(UpstreamError):
    """The memory model failed or answered unusably during a request (502): its raw output
    and the validation details stay in the server log."""

    code = "memory_model_error"
    public_message = "the memory model failed or answered unusably; the details are in the gateway log"


class UpstreamTimeout(UpstreamError):
    """Connect, total or per-chunk idle timeout towards the upstream (504)."""

    status = 504
    code = "upstream_timeout"


class UpstreamConnectError(UpstreamError):
    """The upstream refused or dropped the connection before answering (502)."""

    code = "upstream_connect_error"
    public_message = "cannot connect to the upstream model server"


class MethodNotAllowed(InvalidRequest):
    """The route exists but not for this HTTP method (405, with ``Allow``)."""

    status = 405
    code = "method_not_allowed"

    def __init__(self, method: str, allowed: tuple[str, ...]) -> None:
        super().__init__(f"{method} is not allowed here; use {', '.join(allowed)}")
        self.allowed = allowed

    def headers(self) -> dict[str, str]:
        return {"allow": ", ".join(self.allowed)}
