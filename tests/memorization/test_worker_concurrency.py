"""One worker handles the jobs of a read batch together: verbatim jobs of different
conversations are processed as one batch and written in one call, each job's records a
group of their own, and each stored exactly once; jobs of one conversation still run one
after the other, in stream order (a later one sees the earlier one's write); a batch that
fails is handled job by job."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from gateway.memorization.jobs import Job, Turn
from gateway.memorization.processor import JobProcessor
from gateway.memorization.runtime import queue_for
from gateway.memorization.worker import Worker
from gateway.memory.records import Tenant
from tests.memorization.conftest import memorize_config

REDIS_MODES = ["single", "cluster"]  # every test once on one node, once on the local cluster


def job(user_id: str, conversation_id: str, text: str) -> Job:
    now = datetime.now(UTC)
    turn = Turn(role="user", text=text, hash=uuid.uuid4().hex, at=now, index=0)
    return Job(job_id=uuid.uuid4().hex, user_id=user_id, friend_id="tutor", conversation_id=conversation_id,
               enqueued_at=now, turns=(turn,))


class WriteProbe:
    """Wraps ``store.import_embedded`` (the worker's batched write): records, per call, the
    texts of each group it was given."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.original = store.import_embedded
        self.calls: list[list[list[str]]] = []

    async def import_embedded(self, groups: Any) -> int:
        self.calls.append([[record.text for record, _vector in group] for group in groups])
        return await self.original(groups)

    def call_of(self, text: str) -> int:
        return next(n for n, call in enumerate(self.calls) for group in call if text in group)

    def __enter__(self) -> WriteProbe:
        self.store.import_embedded = self.import_embedded
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.import_embedded = self.original


async def test_a_batch_of_jobs_for_different_tenants_is_written_in_one_call_and_stored_exactly_once(env):
    config = memorize_config("verbatim", worker={"batch": 16, "concurrency": 8})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    users = [f"u{i}-{uuid.uuid4().hex[:6]}" for i in range(3)]
    jobs = [job(user, "c1", f"{user} keeps bees on the roof.") for user in users]
    for job_ in jobs:
        await queue.push(job_)
    with WriteProbe(store) as probe:
        await env.drain(config, store)
    # one write for the batch, each job's records its own group (written whole or not at all)
    assert [sorted(map(tuple, call)) for call in probe.calls] == [sorted((f"{u} keeps bees on the roof.",) for u in users)]
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
    with WriteProbe(store) as probe:
        await env.drain(config, store)
    assert probe.call_of(first) == probe.call_of(other)  # the other conversation ran alongside
    assert probe.call_of(second) > probe.call_of(first)  # the second job was written after the first
    assert sorted(r.text for r in (await store.list(Tenant(user, "tutor"))).items) == sorted([first, second, other])


async def test_a_later_job_of_a_conversation_sees_the_earlier_ones_write(env):
    # the repeat is merged into the memory the first job of the same read batch stored
    config = memorize_config("verbatim", worker={"batch": 16, "concurrency": 8})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    user = "u-" + uuid.uuid4().hex[:8]
    await queue.push(job(user, "conv-a", "I am allergic to peanuts."))
    await queue.push(job(user, "conv-a", "I'm allergic to peanuts!"))
    await env.drain(config, store)
    items = (await store.list(Tenant(user, "tutor"))).items
    assert [r.text for r in items] == ["I am allergic to peanuts."]
    assert items[0].metadata["mentions"] == 2


async def test_a_batch_that_fails_is_handled_job_by_job(env):
    config = memorize_config("verbatim", worker={"batch": 16, "concurrency": 8})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    users = [f"u{i}-{uuid.uuid4().hex[:6]}" for i in range(2)]
    await queue.ensure_group()
    for user in users:
        await queue.push(job(user, "c1", f"{user} keeps bees on the roof."))
    processor = JobProcessor(config, store, queue)
    calls = []

    async def broken(jobs: Any) -> Any:
        calls.append(len(jobs))
        raise ConnectionError("lost the reply")

    processor.run_batch = broken  # type: ignore[method-assign]
    worker = Worker(processor, config.worker)
    entries = await queue.read(worker.name, 16, None)
    assert await worker.handle_batch([(e, f, 1) for e, f in entries]) == ["done", "done"]
    assert calls == [2]
    assert [[r.text for r in (await store.list(Tenant(u, "tutor"))).items] for u in users] == \
        [[f"{u} keeps bees on the roof."] for u in users]
    assert await queue.drained()
