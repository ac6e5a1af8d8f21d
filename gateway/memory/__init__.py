"""Long-term memory store of memgate: records, tenancy, two Redis backends.

Entry point: ``async with open_memory(config.memory, upstream_base_url=...) as store``;
``store`` follows :class:`MemoryStore`.
"""

from gateway.memory.config import EmbeddingConfig, MemoryConfig
from gateway.memory.factory import BackendUnavailable, open_memory, open_store
from gateway.memory.maintenance import record_to_jsonl, records_from_jsonl
from gateway.memory.meta import REEMBED_COMMAND, StoreMismatch
from gateway.memory.records import (
    MemoryPage,
    MemoryPatch,
    MemoryRecord,
    MemoryType,
    NewMemory,
    Scope,
    ScoredMemory,
    Source,
    Tenant,
)
from gateway.memory.store import MemoryStore

__all__ = [
    "REEMBED_COMMAND",
    "BackendUnavailable",
    "EmbeddingConfig",
    "MemoryConfig",
    "MemoryPage",
    "MemoryPatch",
    "MemoryRecord",
    "MemoryStore",
    "MemoryType",
    "NewMemory",
    "Scope",
    "ScoredMemory",
    "Source",
    "StoreMismatch",
    "Tenant",
    "open_memory",
    "open_store",
    "record_to_jsonl",
    "records_from_jsonl",
]
