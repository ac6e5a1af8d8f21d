"""One worker handles the jobs of a read batch concurrently (issue 10, item 3): jobs of
different tenants overlap and are each stored exactly once; jobs of one conversation
still run one after the other, in stream order."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timezone
from typing import Any

from gateway.memorization.jobs import Job, Turn
from gateway.memorization.processor import JobProcessor
from gateway.memorization.runtime import queue_for
from gateway.memorization.worker import Worker
from gateway.memory.records import Tenant
from tests.memorization.conftest import memorize_config

#: How long a write waits for the others it expects to overlap with (a deadline, not a
#: delay: with concurrent jobs the wait ends as soon as they arrive).
OVERLAP_DEADLINE_S = 3.0
REDIS_MODES = ["single", "cluster"]  # every test once on one node, once on the local cluster


def job(user_id: str, conversation_id: str, text: str) -> Job:
    now = datetime.now(timezone.utc)
    turn = Turn(role="user", text=text, hash=uuid.uuid4().hex, at=now, index=0)
    return Job(job_id=uuid.uuid4().hex, user_id=user_id, friend_id="tutor", conversation_id=conversation_id,
               enqueued_at=now, turns=(turn,))


class OverlapProbe:
    """Wraps ``store.import_records``: records, per write, which other writes were in
    flight when it started, and holds each write until ``expected`` writes have been in
    flight at once (or the deadline passed)."""

    def __init__(self, store: Any, expected: int) -> None:
        self.store, self.expected = store, expected
        self.original = store.import_records
        self.in_flight: set[str] = set()
        self.started: list[tuple[str, frozenset[str]]] = []
        self.peak = 0
        self.changed = asyncio.Condition()

    async def import_records(self, records: Any) -> int:
        records = list(records)
        name = records[0].text
        async with self.changed:
            self.started.append((name, frozenset(self.in_flight)))
            self.in_flight.add(name)
            self.peak = max(self.peak, len(self.in_flight))
            self.changed.notify_all()
            try:
                async with asyncio.timeout(OVERLAP_DEADLINE_S):
                    await self.changed.wait_for(lambda: self.peak >= self.expected)
            except TimeoutError:
                pass
        try:
            return await self.original(records)
        finally:
            self.in_flight.discard(name)

    def __enter__(self) -> OverlapProbe:
        self.store.import_records = self.import_records
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.import_records = self.original


async def test_a_batch_of_jobs_for_different_tenants_is_processed_concurrently_and_stored_exactly_once(env):
    config = memorize_config("verbatim", worker={"batch": 16, "concurrency": 8})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    users = [f"u{i}-{uuid.uuid4().hex[:6]}" for i in range(3)]
    jobs = [job(user, "c1", f"{user} keeps bees on the roof.") for user in users]
    for job_ in jobs:
        await queue.push(job_)
    with OverlapProbe(store, expected=3) as probe:
        await env.drain(config, store)
    assert probe.peak == 3  # all three writes were in flight at once
    assert sorted(name for name, _ in probe.started) == sorted(f"{u} keeps bees on the roof." for u in users)
    for user in users:
        items = (await store.list(Tenant(user, "tutor"))).items
        assert [r.text for r in items] == [f"{user} keeps bees on the roof."]
    # a redelivered copy of the batch (at-least-once) is recognised, not stored again
    worker = Worker(JobProcessor(config, store, queue), config.worker)
    again = [(f"{i + 1}-0", {"j": job_.model_dump_json()}, 2) for i, job_ in enumerate(jobs)]
    assert await worker.handle_batch(again) == ["duplicate"] * 3
    assert [await store.count(Tenant(u, "tutor")) for u in users] == [1, 1, 1]


async def test_jobs_of_one_conversation_keep_their_order_while_others_run_alongside(env):
    # whole turns are the memories here (the labels name the jobs in the probe)
    config = memorize_config("verbatim", verbatim_formation="turn", worker={"batch": 16, "concurrency": 8})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    user = "u-" + uuid.uuid4().hex[:8]
    first, second, other = "First: I moved to Porto.", "Second: I moved again, to Braga.", "Elsewhere: I like tea."
    await queue.push(job(user, "conv-a", first))
    await queue.push(job(user, "conv-a", second))
    await queue.push(job(user, "conv-b", other))
    with OverlapProbe(store, expected=2) as probe:
        await env.drain(config, store)
    order = [name for name, _ in probe.started]
    assert order.index(first) < order.index(second)
    overlapping = dict(probe.started)
    assert first not in overlapping[second]  # the second job started after the first finished
    assert probe.peak == 2  # the other conversation ran alongside
    assert sorted(r.text for r in (await store.list(Tenant(user, "tutor"))).items) == sorted([first, second, other])
