"""Admission control for memory searches (issue 10, item 2): the sans-IO queue with a
literal clock, the asyncio wrapper with events, and how GuardedMemory classifies overload
(never a breaker failure) against store errors (breaker failures)."""

import asyncio

import pytest

from gateway.chain.recall import GuardedMemory
from gateway.chain.sdk import MemoryUnavailable, RecallSkipped
from gateway.memory.embeddings.batching import EmbeddingOverloaded
from gateway.memory.records import Tenant
from gateway.runtime.admission import Admission, AdmissionConfig, AdmissionQueue, Overloaded
from gateway.runtime.breaker import BreakerConfig, CircuitBreaker

TENANT = Tenant("alice", "bot")


def queue(limit=2, waiting=10, ewma=0.1):
    q = AdmissionQueue(AdmissionConfig(max_concurrent=limit, max_waiting=waiting))
    q.ewma_s = ewma
    return q


def test_admits_up_to_the_limit_then_queues_in_fifo_order():
    q = queue()
    assert q.arrive(0.0, 1.0) == ("admit", None)
    assert q.arrive(0.0, 1.0) == ("admit", None)
    d1, t1 = q.arrive(0.0, 1.0)
    d2, t2 = q.arrive(0.0, 1.0)
    assert (d1, d2) == ("wait", "wait") and q.in_flight == 2
    assert q.release(0.1, 0.1) == [t1] and t1.state == "admit" and t2.state == "wait"
    assert q.release(0.2, 0.1) == [t2] and t2.state == "admit" and q.in_flight == 2


def test_sheds_a_newcomer_whose_predicted_wait_passes_its_deadline():
    q = queue(limit=2, ewma=0.1)
    q.arrive(0.0, 9.0), q.arrive(0.0, 9.0)
    # all slots busy: one wave (0.1 s) of wait + one service (0.1 s) = 0.2 s needed
    assert q.arrive(0.0, 0.15)[0] == "shed"
    assert q.arrive(0.0, 0.25)[0] == "wait"
    q.arrive(0.0, 9.0)  # two waiting now: a third wave... still the first (2 per wave)
    assert q.arrive(0.0, 0.25)[0] == "shed"  # 2 waiting -> second wave: 0.2 + 0.1 > 0.25
    assert q.shed_count == 2


def test_sheds_at_once_when_the_deadline_has_passed_or_the_queue_is_full():
    q = queue(limit=1, waiting=1, ewma=0.0)
    assert q.arrive(5.0, 5.0)[0] == "shed"
    q.arrive(5.0, 9.0)
    assert q.arrive(5.0, 9.0)[0] == "wait"
    assert q.arrive(5.0, 9.0)[0] == "shed"


def test_a_waiter_whose_deadline_no_longer_leaves_one_service_is_shed_not_admitted():
    q = queue(limit=1, ewma=0.1)
    q.arrive(0.0, 9.0)
    _, late = q.arrive(0.0, 0.5)
    _, fine = q.arrive(0.0, 9.0)
    settled = q.release(0.45, 0.1)  # 0.05 s left for `late` < one service time
    assert settled == [late, fine] and late.state == "shed" and fine.state == "admit"
    assert q.in_flight == 1


def test_giving_up_frees_the_queue_place_or_passes_on_a_slot_just_handed_over():
    q = queue(limit=1)
    q.arrive(0.0, 9.0)
    _, a = q.arrive(0.0, 9.0)
    _, b = q.arrive(0.0, 9.0)
    assert q.give_up(a, 0.1) == [] and list(q.waiting) == [b]
    assert q.release(0.2, 0.1) == [b]
    assert q.give_up(b, 0.2) == [] and q.in_flight == 0  # admitted but gone: slot freed


def test_service_time_is_a_moving_average():
    q = AdmissionQueue(AdmissionConfig(max_concurrent=4, ewma_alpha=0.5))
    q.arrive(0.0, 1.0), q.arrive(0.0, 1.0)
    q.release(0.1, 0.1)
    assert q.ewma_s == pytest.approx(0.1)
    q.release(0.3, 0.3)
    assert q.ewma_s == pytest.approx(0.2)


async def test_waiters_run_when_slots_free_and_time_out_as_overloaded():
    admission = Admission(AdmissionConfig(max_concurrent=1))
    loop = asyncio.get_running_loop()
    inside, leave = asyncio.Event(), asyncio.Event()
    order = []

    async def holder():
        async with admission.slot(loop.time() + 30):
            inside.set()
            await leave.wait()
            order.append("holder")

    async def waiter():
        async with admission.slot(loop.time() + 30):
            order.append("waiter")

    first = asyncio.create_task(holder())
    await inside.wait()
    second = asyncio.create_task(waiter())
    with pytest.raises(Overloaded):  # the slot stays taken past this one's short deadline
        async with admission.slot(loop.time() + 0.05):
            pass
    leave.set()
    await asyncio.gather(first, second)
    assert order == ["holder", "waiter"] and admission.queue.in_flight == 0 and not admission.queue.waiting


class Store:
    """The memory store's ``search`` as GuardedMemory sees it: raises ``error`` or waits
    for ``release`` (a hanging Redis)."""

    def __init__(self, error=None):
        self.error = error
        self.release = asyncio.Event()
        self.entered = asyncio.Event()

    async def search(self, tenant, query, **kwargs):
        self.entered.set()
        if self.error is not None:
            raise self.error
        await self.release.wait()
        return []


def guarded(store, timeout_s=0.2, limit=1, threshold=1):
    breaker = CircuitBreaker(BreakerConfig(failure_threshold=threshold))
    admission = Admission(AdmissionConfig(max_concurrent=limit, reserve_ms=0, fair_ms=250))
    return GuardedMemory(store, breaker, timeout_s, admission), breaker


async def test_a_full_embedding_queue_is_overload_not_a_breaker_failure():
    memory, breaker = guarded(Store(EmbeddingOverloaded("queue full")))
    with pytest.raises(RecallSkipped) as skipped:
        await memory.search(TENANT, "q", 5, 0.3)
    assert skipped.value.reason == "overloaded" and breaker.state == "closed"


async def test_a_store_error_is_a_breaker_failure():
    memory, breaker = guarded(Store(MemoryUnavailable("redis down")))
    with pytest.raises(RecallSkipped) as skipped:
        await memory.search(TENANT, "q", 5, 0.3)
    assert skipped.value.reason == "memory_unavailable" and breaker.state == "open"


async def test_a_hanging_store_admitted_at_once_is_a_breaker_failure():
    memory, breaker = guarded(Store(), timeout_s=0.05, limit=2)
    with pytest.raises(RecallSkipped) as skipped:
        await memory.search(TENANT, "q", 5, 0.3)
    assert skipped.value.reason == "memory_timeout" and breaker.state == "open"


async def test_time_spent_waiting_for_admission_is_overload_and_keeps_the_breaker_closed():
    store = Store()
    memory, breaker = guarded(store, timeout_s=5.0, limit=1)
    holder = asyncio.create_task(memory.search(TENANT, "q", 5, 0.3))
    await store.entered.wait()
    with pytest.raises(RecallSkipped) as skipped:  # its whole 0.1 s goes to waiting
        await memory.search(TENANT, "q", 5, 0.3, time_left=0.1)
    assert skipped.value.reason == "overloaded" and breaker.state == "closed"
    store.release.set()
    assert await holder == [] and breaker.state == "closed"


async def test_a_timeout_while_every_slot_is_taken_is_overload():
    store = Store()
    memory, breaker = guarded(store, timeout_s=5.0, limit=2)
    holder = asyncio.create_task(memory.search(TENANT, "q", 5, 0.3))
    await store.entered.wait()
    with pytest.raises(RecallSkipped) as skipped:  # admitted at once, the second slot
        await memory.search(TENANT, "q", 5, 0.3, time_left=0.6)
    assert skipped.value.reason == "overloaded" and breaker.state == "closed"
    store.release.set()
    assert await holder == []


async def test_the_request_deadline_cuts_the_time_limit():
    memory, breaker = guarded(Store(), timeout_s=5.0)
    with pytest.raises(RecallSkipped) as skipped:
        await memory.search(TENANT, "q", 5, 0.3, time_left=0.0)
    assert skipped.value.reason == "overloaded" and breaker.state == "closed"
