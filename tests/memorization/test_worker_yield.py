"""The in-serve worker yields to a saturated request path for at most
``worker.yield_max_lag_s``; the queue lag is a gauge; a batched write is all or nothing."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from gateway.memorization.jobs import Job, Turn
from gateway.memorization.observe import register_queue_gauges
from gateway.memorization.processor import JobProcessor
from gateway.memorization.queue import entry_ms, parse_ref
from gateway.memorization.runtime import queue_for, run_workers, wait_drained
from gateway.memorization.worker import Worker
from gateway.memory.records import MemoryType, NewMemory, Scope, Tenant, build_record
from gateway.runtime.errors import UnprocessableInput
from tests.memorization.conftest import memorize_config

REDIS_MODES = ["single"]


def job(user_id: str, text: str) -> Job:
    now = datetime.now(UTC)
    turn = Turn(role="user", text=text, hash=uuid.uuid4().hex, at=now, index=0)
    return Job(job_id=uuid.uuid4().hex, user_id=user_id, friend_id="tutor", conversation_id="c1",
               enqueued_at=now, turns=(turn,))


def test_a_worker_yields_only_while_the_request_path_is_busy_and_its_oldest_job_is_young():
    config = memorize_config("verbatim", worker={"yield_max_lag_s": 2.0})
    busy = [True]
    worker = Worker.__new__(Worker)
    worker.config, worker.busy = config.worker, lambda: busy[0]
    entries = [("1000-0", {}), ("1500-3@2", {})]  # the oldest: 1000 ms
    assert worker.yields(entries, now_ms=2999)  # 1.999 s old
    assert not worker.yields(entries, now_ms=3000)  # 2 s: works regardless (the lag is bounded)
    busy[0] = False
    assert not worker.yields(entries, now_ms=1001)
    worker.busy = None  # a `memgate worker` process: no request path to yield to
    assert not worker.yields(entries, now_ms=1001)


async def test_a_busy_request_path_delays_a_job_by_at_most_the_lag_bound(env):
    config = memorize_config("verbatim", worker={"yield_max_lag_s": 0.4, "yield_pause_ms": 10})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    user = "u-" + uuid.uuid4().hex[:8]
    entry = await queue.push(job(user, "I keep bees on the roof."))
    polled = []

    def busy() -> bool:  # the request path stays saturated the whole time
        polled.append(time.time())
        return True

    async with run_workers(config, env.redis, store, n=1, stop_grace_s=5, busy=busy):
        await wait_drained(queue, 30)
    stored = (await store.list(Tenant(user, "tutor"))).items
    assert [r.text for r in stored] == ["I keep bees on the roof."]
    # the worker held back while the job was younger than the bound, then stored it anyway
    assert polled and (stored[0].created_at.timestamp() * 1000 - entry_ms(parse_ref(entry)[1])) >= 400


async def test_the_lag_gauge_is_the_age_of_the_oldest_job_waiting(env):
    config = memorize_config("verbatim")
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    first = await queue.push(job("u-" + uuid.uuid4().hex[:8], "I keep bees."))
    await queue.push(job("u-" + uuid.uuid4().hex[:8], "I grow tomatoes."))
    born = entry_ms(parse_ref(first)[1])
    assert (await queue.stats(now_ms=born + 5000)).lag_seconds == pytest.approx(5.0)
    await queue.read("c", 10, None)  # delivered, not acked: still counted
    assert (await queue.stats(now_ms=born + 7000)).lag_seconds == pytest.approx(7.0)

    class Metrics:
        def declare(self, *families: Any) -> None:
            self.declared = {f.name for f in families}

        def register_gauges(self, key: str, read: Any) -> None:
            self.read = read

    metrics = Metrics()
    register_queue_gauges(metrics, queue)
    gauges = await metrics.read()
    assert set(gauges) <= metrics.declared  # the gauges' owner declares them
    assert gauges["memgate_memorize_queue_up"] == 1.0
    assert gauges["memgate_memorize_lag_seconds"] >= (time.time() * 1000 - born) / 1000 - 1.0
    assert gauges["memgate_memorize_queue_length"] == 2.0


async def test_a_batched_write_with_one_bad_record_writes_nothing(env):
    store = await env.store("t" + uuid.uuid4().hex[:12])
    tenant = Tenant("u-" + uuid.uuid4().hex[:8], "tutor")
    now = datetime.now(UTC)

    def record(text: str) -> Any:
        memory = NewMemory(scope=Scope.PROFILE, type=MemoryType.SEMANTIC, text=text)
        return build_record(tenant, memory, uuid.uuid4().hex, now)

    good = np.ones(store.dimensions, dtype=np.float32)
    with pytest.raises(UnprocessableInput):
        await store.import_embedded([[(record("I keep bees."), good)],
                                     [(record("I grow tomatoes."), good), (record("I swim."), good[:3])]])
    assert await store.count(tenant) == 0
    assert await store.import_embedded([[(record("I keep bees."), good)], [(record("I swim."), good)]]) == 2
    assert sorted(r.text for r in (await store.list(tenant)).items) == ["I keep bees.", "I swim."]


async def test_a_worker_group_writes_each_job_once_with_the_batch_path(env):
    # the batched path and the one-job path store the same records for the same jobs
    config = memorize_config("verbatim", worker={"batch": 16, "concurrency": 8})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    users = ["u-" + uuid.uuid4().hex[:8] for _ in range(2)]
    jobs = [job(u, "I moved to Porto last year and I work at a bakery.") for u in users]
    worker = Worker(JobProcessor(config, store, queue), config.worker)
    batched = await worker.processor.run_batch([jobs[0]])
    single = await worker.processor.run(jobs[1])
    assert batched[0][0] == single[0] == "done"
    texts = [sorted(r.text for r in (await store.list(Tenant(u, "tutor"))).items) for u in users]
    assert texts[0] == texts[1] and texts[0]
