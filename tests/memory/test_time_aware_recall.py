"""Time-aware recall through the real store (issue 11 item 3): a question naming a period
finds the memory of that period first, relative to the time of the request (en + zh)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gateway.memory.records import MemoryType, NewMemory, Scope, Tenant

BOB = Tenant("bob-time", "pal")


def event(text: str, at: datetime) -> NewMemory:
    return NewMemory(scope=Scope.EVENT, type=MemoryType.EPISODIC, text=text, occurred_at=at)


async def test_a_named_month_puts_that_month_first(store):
    july = await store.add(BOB, event("We went hiking in the hills with the dog", datetime(2023, 7, 9, tzinfo=UTC)))
    may = await store.add(BOB, event("We went hiking in the hills", datetime(2023, 5, 14, tzinfo=UTC)))
    hits = await store.search(BOB, "Where did we go hiking in May 2023?", top_k=2)
    assert [h.record.id for h in hits] == [may.id, july.id]
    hits = await store.search(BOB, "Where did we go hiking in July 2023?", top_k=2)
    assert [h.record.id for h in hits] == [july.id, may.id]


async def test_last_week_and_two_months_ago_in_chinese_are_relative_to_the_request_time(store):
    now = datetime.now(UTC)
    monday = (now - timedelta(days=now.weekday())).replace(hour=12, minute=0, second=0, microsecond=0)
    long_ago = await store.add(BOB, event("我们去公园野餐了", monday - timedelta(days=45)))
    last_week = await store.add(BOB, event("我们去公园野餐了，还带了狗", monday - timedelta(days=4)))
    hits = await store.search(BOB, "上周我们去哪里野餐了？", top_k=2)
    assert [h.record.id for h in hits] == [last_week.id, long_ago.id]
    hits = await store.search(BOB, "两个月前我们去哪里野餐了？", top_k=2)
    assert [h.record.id for h in hits] == [long_ago.id, last_week.id]
