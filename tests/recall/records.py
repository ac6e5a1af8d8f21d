"""Literal memory records and hits for the recall tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gateway.memory.ids import new_memory_id
from gateway.memory.records import MemoryRecord, ScoredMemory

_counter = iter(range(1, 1_000_000))


def when(day: str) -> datetime:
    """``"2026-01-05"`` -> that day at noon UTC."""
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def record(
    text: str, *, scope: str = "profile", type: str = "semantic", user: str = "alice",
    friend: str | None = None, day: str = "2026-01-05", metadata: dict[str, Any] | None = None,
    keywords: list[str] | None = None,
) -> MemoryRecord:
    moment = when(day)
    return MemoryRecord(
        id=new_memory_id(int(moment.timestamp() * 1000), next(_counter)), user_id=user,
        friend_id=friend if scope == "event" else None, scope=scope, type=type, text=text,
        keywords=keywords or [], importance=0.5, occurred_at=moment, created_at=moment,
        updated_at=moment, source="manual", confidence=1.0, metadata=metadata or {},
    )


def hit(text: str, score: float, **kwargs: Any) -> ScoredMemory:
    return ScoredMemory(record=record(text, **kwargs), score=score)
