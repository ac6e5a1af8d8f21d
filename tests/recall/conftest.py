"""Fixtures for the recall end-to-end tests: the recall plugins' registry and a way to
seed the gateway's memory store (a store of our own on the same Redis and key prefix)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.memory.factory import open_memory
from gateway.memory.records import MemoryRecord, NewMemory, Tenant
from plugins.auto_recall import AutoRecall
from plugins.hybrid_injection import HybridInjection
from plugins.personalization import Personalization
from plugins.recall_report import RecallReport
from plugins.token_budget import TokenBudget
from plugins.tool_splice import ToolSplice

REGISTRY = {cls.name: cls for cls in (AutoRecall, HybridInjection, Personalization, ToolSplice, TokenBudget, RecallReport)}

#: The recommended chain (recall_report first: its stream filter then runs last).
CHAIN = [
    {"name": "recall_report", "config": {"show_recall": True}},
    {"name": "auto_recall"},
    {"name": "hybrid_injection"},
    {"name": "personalization"},
    {"name": "token_budget"},
]
#: CHAIN where every hit is low relevance (``relevance`` is calibrated P(related) < 1), so
#: memories are reachable only through the memory_search tool: the tool-loop tests.
#: (Calibrated, "likes science fiction movies" is high relevance, 0.90, for "Recommend me
#: a movie for tonight", as "I'm vegetarian" is for a dinner question.)
TOOL_CHAIN = [CHAIN[0], {"name": "auto_recall", "config": {"high_relevance_threshold": 1.0}}, *CHAIN[2:]]


def memory(text: str, scope: str | None = None, type: str = "episodic", **fields: Any) -> NewMemory:
    """A memory to seed: an episodic event unless told otherwise; preferences and traits
    are profile memories (profile memories always reach the prompt: plugins.auto_recall)."""
    if scope is None:
        scope = "profile" if type in ("preference", "trait") else "event"
    return NewMemory(scope=scope, type=type, text=text, **fields)


@pytest.fixture
def seed(shared_model):
    """``seed(gw, Tenant, *NewMemory) -> [MemoryRecord]``: stores memories for the gateway."""

    def add(gw: Any, tenant: Tenant, *memories: NewMemory) -> list[MemoryRecord]:
        async def run() -> list[MemoryRecord]:
            async with open_memory(gw.config.memory, embedder=shared_model.for_gateway()) as store:
                return await store.add(tenant, list(memories))

        return asyncio.run(run())

    return add
