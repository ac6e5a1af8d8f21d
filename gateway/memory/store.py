"""The ``MemoryStore`` contract every caller uses (REST API, plugins, memorization).

Tenancy by construction (seed 002): every method that reads or writes memories takes a
:class:`~gateway.memory.records.Tenant`; there is no way to search without one. Profile
memories are visible to every friend of their user, event memories only to their
(user, friend) pair. The admin operations (``forget_user``, ``export_user``,
``import_records``, ``reembed``) name users explicitly and are for trusted callers only.

Errors (gateway.runtime.errors): malformed id -> InvalidRequest (400); not visible -> NotFound
(404); text over ``memory.max_text_chars`` -> PayloadTooLarge (413); unknown scope/type,
wrong vector size, event without friend -> UnprocessableInput (422); Redis or the
embedding model unreachable -> MemoryUnavailable (503). The store recovers by itself
when Redis is back.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol, overload

import numpy as np

from gateway.memory.records import (
    MemoryPage,
    MemoryPatch,
    MemoryRecord,
    NewMemory,
    ScoredMemory,
    Tenant,
)

__all__ = ['MemoryStore']


class MemoryStore(Protocol):
    """Long-term memory of every tenant (see module docstring)."""

    backend_name: str
    dimensions: int

    @overload
    async def add(self, tenant: Tenant, memories: NewMemory) -> MemoryRecord: ...
    @overload
    async def add(self, tenant: Tenant, memories: Sequence[NewMemory]) -> list[MemoryRecord]: ...
    async def add(self, tenant, memories):
        """Embed (one batch) and store; returns the stored record(s), ids server-made."""
        ...

    async def add_embedded(
        self, tenant: Tenant, memories: Sequence[NewMemory], vectors: np.ndarray
    ) -> list[MemoryRecord]:
        """Store memories whose vectors the caller already has (shape (n, dimensions))."""
        ...

    async def get(self, tenant: Tenant, memory_id: str) -> MemoryRecord: ...

    async def get_many(self, tenant: Tenant, memory_ids: Sequence[str]) -> builtins.list[MemoryRecord]:
        """The records of ``memory_ids`` that exist and are visible to ``tenant``, in the
        order given, each once, retired ones included; the others left out (no
        NotFound). One round trip; a malformed id -> InvalidRequest."""
        ...

    async def update(self, tenant: Tenant, memory_id: str, patch: MemoryPatch) -> MemoryRecord:
        """Apply ``patch`` in place (re-embeds when the text changes; a new text without new
        metadata drops ``metadata.statements``, the spans of the old text's statements)."""
        ...

    async def delete(self, tenant: Tenant, memory_id: str) -> None:
        """Erase the record and its index entries (not an audit-preserving retire)."""
        ...

    async def warm(self) -> None:
        """Run every model the search path uses once (start-up, before ready)."""
        ...

    async def list(
        self, tenant: Tenant, scope: str | None = None, types: Iterable[str] | None = None,
        cursor: str | None = None, limit: int = 50,
    ) -> MemoryPage:
        """Visible records newest first, retired ones included (audit)."""
        ...

    async def count(self, tenant: Tenant) -> int:
        """Visible records, retired ones included."""
        ...

    async def search(
        self, tenant: Tenant, query: str, top_k: int = 5, threshold: float = 0.0,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
        occurred_after: datetime | None = None, occurred_before: datetime | None = None,
        include_retired: bool = False,
    ) -> builtins.list[ScoredMemory]:
        """Hybrid search, hits in ranking order: ``score`` = the ranking score, ``similarity`` =
        cosine of the vector part in [0, 1], ``threshold`` applies to it (:class:`ScoredMemory`)."""
        ...

    async def search_many(
        self, tenant: Tenant, query: str, searches: Sequence[dict[str, Any]],
    ) -> builtins.list[builtins.list[ScoredMemory]]:
        """One :meth:`search` per entry of ``searches`` (its keyword arguments) for one
        ``query``, embedded once."""
        ...

    async def search_by_vector(
        self, tenant: Tenant, vector: Sequence[float] | np.ndarray, top_k: int = 5,
        threshold: float = 0.0, scopes: Iterable[str] | None = None,
        types: Iterable[str] | None = None, occurred_after: datetime | None = None,
        occurred_before: datetime | None = None, include_retired: bool = False,
        query_text: str | None = None,
    ) -> builtins.list[ScoredMemory]:
        """As :meth:`search` with a ready vector; hybrid only when ``query_text`` is given."""
        ...

    async def supersede(self, tenant: Tenant, old_id: str, new: NewMemory) -> MemoryRecord:
        """Store ``new`` with ``supersedes=old_id``; retire the old one (kept, linked)."""
        ...

    async def retire(self, tenant: Tenant, memory_id: str, reason: str) -> MemoryRecord:
        """Mark a record retired (contradicted): kept and gettable, not searched."""
        ...

    async def forget_user(self, user_id: str) -> int:
        """Erase every key of ``user_id`` (all friends); returns the records deleted."""
        ...

    def export_user(self, user_id: str) -> AsyncIterator[MemoryRecord]:
        """Every record of ``user_id``, partition by partition, oldest first."""
        ...

    async def import_records(self, records: Iterable[MemoryRecord]) -> int:
        """Store records as given (ids and times kept), re-embedded; upserts by id."""
        ...

    async def import_embedded(self, groups: Sequence[Sequence[tuple[MemoryRecord, np.ndarray]]]) -> int:
        """:meth:`import_records` with the vectors given (the store's model's, shape
        (dimensions,) each), one round trip for every group; each group (one user's
        records) is written whole or not at all."""
        ...

    async def reembed(self) -> int:
        """Re-embed every record with the current model, rebuild the index, record the
        model (what ``memgate memories reembed`` runs); returns the records re-embedded."""
        ...
