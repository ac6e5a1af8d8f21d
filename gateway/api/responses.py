"""What every HTTP API of the gateway declares about its errors (OpenAPI responses with
the OpenAI error envelope, :class:`ErrorResponse`) and the request field an error names
(:func:`param_name`: the name the client sent, not the handler's argument)."""

from __future__ import annotations

from litestar.openapi.datastructures import ResponseSpec
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BODY_TAGS", "PARAM_ALIASES", "ErrorBody", "ErrorResponse", "errors", "param_name"]


class ErrorBody(BaseModel):
    """``error`` of the OpenAI error envelope (OpenAI API reference, "Errors")."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(description="What went wrong; names the field and the reason.")
    type: str = Field(description="invalid_request_error, service_unavailable, server_error...")
    param: str | None = Field(description="The request field at fault, or null.")
    code: str | None = Field(description="Machine-readable code, or null.")


class ErrorResponse(BaseModel):
    """The OpenAI error envelope every error of the gateway uses."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorBody


_ERROR_DESCRIPTIONS = {
    400: "Invalid input: malformed JSON or UTF-8, a field that fails validation or is unknown "
         "(param names it), a malformed id.",
    401: "Missing, unknown or revoked key.",
    403: "The key may not do this (admin routes need an admin key; a locked setting or `mode: extract` not enabled for the key, param names it).",
    404: "No such memory visible to the caller (or, for a conversation chunk, no memorize plugin).",
    413: "Memory text or query longer than memory.max_text_chars.",
    422: "Well-formed but unusable: an event memory without a friend, a record of another user.",
    502: "The memory model failed or answered unusably (conversation ingest in extract mode).",
    503: "The key store or memory store is unavailable (retryable; retry-after: 1).",
}


def errors(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI responses for these error statuses, all with :class:`ErrorResponse`
    (401 and 503 are added to every route: every call authenticates)."""
    return {
        status: ResponseSpec(data_container=ErrorResponse, description=_ERROR_DESCRIPTIONS[status],
                             generate_examples=False)
        for status in sorted({400, 401, 503, *statuses})
    }


#: Query parameters whose handler argument has another name (``scope`` is reserved by
#: litestar): validation errors name the parameter the client sent.
PARAM_ALIASES = {"memory_scope": "scope", "memory_type": "type", "book_scope": "scope", "book_id": "id"}


#: Tags of :class:`gateway.api.memories.MemoryBody`'s variants, which lead validation error locations
#: (``conversation.messages.0.role``); :func:`param_name` drops them.
BODY_TAGS = ("memory", "conversation")


def param_name(key: str) -> str:
    """The request field a validation error location names: a query parameter's client
    name (:data:`PARAM_ALIASES`), a body field without its union tag (:data:`BODY_TAGS`)."""
    head, _, rest = key.partition(".")
    if head in BODY_TAGS:
        return rest
    return PARAM_ALIASES.get(key, key)
