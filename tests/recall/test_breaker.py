"""Circuit breaker state machine, with a literal clock."""

import time

from gateway.runtime.breaker import BreakerConfig, BreakerRegistry, CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def breaker(clock, threshold=3, cooldown=10.0):
    return CircuitBreaker(BreakerConfig(failure_threshold=threshold, cooldown_s=cooldown), clock)


def test_opens_after_the_threshold_of_consecutive_failures():
    b = breaker(Clock())
    b.failure(), b.failure()
    assert b.state == "closed" and b.allow()
    b.failure()
    assert b.state == "open" and not b.allow()


def test_a_success_resets_the_failure_count():
    b = breaker(Clock())
    b.failure(), b.failure(), b.success(), b.failure(), b.failure()
    assert b.state == "closed"


def test_half_opens_after_the_cooldown_and_lets_one_probe_through():
    clock = Clock()
    b = breaker(clock)
    for _ in range(3):
        b.failure()
    clock.now += 9.9
    assert not b.allow()
    clock.now += 0.1
    assert b.state == "half_open"
    assert b.allow() and not b.allow()  # one probe at a time


def test_a_successful_probe_closes_a_failed_one_reopens():
    clock = Clock()
    b = breaker(clock)
    for _ in range(3):
        b.failure()
    clock.now += 10
    assert b.allow()
    b.failure()
    assert b.state == "open" and not b.allow()
    clock.now += 10
    assert b.allow()
    b.success()
    assert b.state == "closed" and b.allow() and b.allow()


def test_an_open_breaker_refuses_every_call_until_the_cooldown():
    # (its cost per refused call is measured by `python -m bench recall`, not timed here)
    b = breaker(time.monotonic, threshold=1, cooldown=60)
    b.failure()
    assert not any(b.allow() for _ in range(1000))


def test_plugins_of_one_gateway_share_the_breaker_of_a_config():
    breakers = BreakerRegistry()
    a = breakers.get(BreakerConfig())
    assert breakers.get(BreakerConfig()) is a
    assert breakers.get(BreakerConfig(cooldown_s=1)) is not a
    assert BreakerRegistry().get(BreakerConfig()) is not a


def test_an_abandoned_probe_lets_the_next_call_probe():
    clock = Clock()
    b = breaker(clock)
    for _ in range(3):
        b.failure()
    clock.now += 10
    assert b.allow() and not b.allow()
    b.abandon()  # the probe was cancelled by the chain's deadline
    assert b.allow()


def test_a_sharded_breaker_opens_only_the_failing_shard_and_a_moved_user_starts_closed():
    from gateway.runtime.breaker import ShardedBreaker

    shards = {"ana": "node-1", "ben": "node-2"}
    sharded = BreakerRegistry(Clock(), shard_of=shards.__getitem__).get(BreakerConfig(failure_threshold=2))
    assert isinstance(sharded, ShardedBreaker)
    sharded.for_user("ana").failure(), sharded.for_user("ana").failure()
    assert not sharded.for_user("ana").allow()  # node-1 is down for ana
    assert sharded.for_user("ben").allow()  # ben's node is fine
    shards["ana"] = "node-4"  # a replica of node-1 was promoted: ana's slots moved
    assert sharded.for_user("ana").allow()
    shards.pop("ben")  # topology unknown: the "" shard, not an error
    assert sharded.for_user("ben").allow()


async def test_guarded_memory_keeps_serving_the_users_of_healthy_shards():
    from gateway.chain.recall import GuardedMemory
    from gateway.chain.sdk import MemoryUnavailable, RecallSkipped, Tenant

    class HalfDownStore:
        async def search(self, tenant, query, **options):
            if tenant.user_id == "ana":
                raise MemoryUnavailable("node-1 is down")
            return []

    shards = {"ana": "node-1", "ben": "node-2"}
    registry = BreakerRegistry(shard_of=shards.__getitem__)
    memory = GuardedMemory(HalfDownStore(), registry.get(BreakerConfig(failure_threshold=2)), timeout_s=5)
    reasons = []
    for _ in range(3):
        try:
            await memory.search(Tenant("ana", "tutor"), "q", 5, 0.0)
        except RecallSkipped as exc:
            reasons.append(exc.reason)
    assert reasons == ["memory_unavailable", "memory_unavailable", "breaker_open"]
    assert await memory.search(Tenant("ben", "tutor"), "q", 5, 0.0) == []  # not breaker_open
