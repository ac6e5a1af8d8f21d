"""The OpenAPI document's component schemas, from pydantic itself (:func:`apply_pydantic_schemas`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from gateway.api.admin.users import ForgetResult, ImportResult
from gateway.api.memories import MemoryBody, SearchRequest, SearchResponse
from gateway.api.responses import ErrorResponse
from gateway.lorebook.model import LoreEntry
from gateway.lorebook.upload import BookSummary, EntryBody, ImportReport, LorebookUpload
from gateway.memorization.ingest import IngestResult, NewConversation
from gateway.memory.records import MemoryPage, MemoryPatch, MemoryRecord, NewMemory, ScoredMemory

__all__ = ["REPLY_MODELS", "REQUEST_MODELS", "apply_pydantic_schemas"]


#: The HTTP APIs' models whose OpenAPI component schemas come from pydantic itself
#: (request bodies in validation mode, replies in serialization mode). Litestar's own
#: generator drops ``extra="forbid"`` (``additionalProperties: false``) and zero-valued
#: bounds (``ge=0``), so the served schema would not match what the API enforces.
#: The settings routes' models depend on the plugin table: ``create_app`` passes them
#: (:meth:`gateway.settings.memory_settings.SettingsSchema.openapi_models`).
REQUEST_MODELS: tuple[type[BaseModel], ...] = (
    MemoryBody, NewMemory, NewConversation, MemoryPatch, SearchRequest, LorebookUpload, EntryBody)
REPLY_MODELS: tuple[type[BaseModel], ...] = (
    MemoryRecord, MemoryPage, ScoredMemory, SearchResponse, ImportResult, ForgetResult, ErrorResponse,
    ImportReport, BookSummary, LoreEntry, IngestResult,
)


def apply_pydantic_schemas(
    openapi: dict[str, Any], requests: tuple[type[BaseModel], ...] = (), replies: tuple[type[BaseModel], ...] = (),
) -> None:
    """Replace, in a served OpenAPI document (a dict), the component schemas of
    :data:`REQUEST_MODELS` and :data:`REPLY_MODELS` (and of other routes' ``requests``
    and ``replies`` models, e.g. :mod:`gateway.api.admin.console_api`'s) with pydantic's JSON Schemas
    (nested models and enums hoisted into components too)."""
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    template = "#/components/schemas/{model}"
    modes: tuple[tuple[tuple[type[BaseModel], ...], Literal['validation', 'serialization']], ...] = (
        ((*REPLY_MODELS, *replies), "serialization"), ((*REQUEST_MODELS, *requests), "validation"),
    )
    for models, mode in modes:
        for model in models:
            schema = model.model_json_schema(ref_template=template, mode=mode)
            for name, nested in schema.pop("$defs", {}).items():
                schemas.setdefault(name, nested) if name in _OWN_NAMES else schemas.__setitem__(name, nested)
            schemas[model.__name__] = schema


_OWN_NAMES = frozenset(m.__name__ for m in (*REQUEST_MODELS, *REPLY_MODELS))
