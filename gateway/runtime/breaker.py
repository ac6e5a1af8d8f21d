"""A circuit breaker in front of the memory store (Redis and the embedding model).

States (Nygard, "Release It!", the Circuit Breaker pattern):

- ``closed``: calls go through; ``failure_threshold`` consecutive failures open it.
- ``open``: calls are refused at once (:meth:`CircuitBreaker.allow` is one clock read
  and a comparison, far under the 1 ms fail-fast target) for ``cooldown_s`` seconds.
- ``half_open``: after the cool-down one probe call is let through; success closes the
  breaker, failure opens it again for another cool-down. Other calls are refused while
  the probe is out.

Sans-IO: the clock is injected, so the state machine is tested with literal times.

Why the breaker is not per call: it describes the health of Redis for one gateway, which
is per-gateway state by nature. :class:`BreakerRegistry` (behind ``services.recall`` of the
plugin SDK) keeps one breaker per breaker config, so every recall plugin of one gateway,
whatever its per-key config variant, shares it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ['BreakerConfig', 'BreakerRegistry', 'CircuitBreaker', 'ShardedBreaker', 'State']

State = Literal["closed", "open", "half_open"]


class BreakerConfig(BaseModel):
    """Circuit-breaker settings of a recall plugin (``breaker:`` in its config)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    failure_threshold: int = Field(
        5, ge=1, description="Consecutive memory-store failures (errors or timeouts) that "
        "open the breaker. 5: a common default (resilience4j's minimum window is similar)."
    )
    cooldown_s: float = Field(
        10.0, gt=0, description="Seconds the breaker stays open (requests skip memory at "
        "once) before one probe request is let through."
    )


class CircuitBreaker:
    """See module docstring. Not thread-safe; used from one event loop."""

    def __init__(self, config: BreakerConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._clock = clock
        self._state: State = "closed"
        self._failures = 0
        self._opened_at = 0.0
        self._probe_out = False

    @property
    def state(self) -> State:
        """The state now (an open breaker past its cool-down reads ``half_open``)."""
        if self._state == "open" and self._clock() - self._opened_at >= self.config.cooldown_s:
            self._state, self._probe_out = "half_open", False
        return self._state

    def allow(self) -> bool:
        """True if a call may go to the store now (in half-open: the one probe)."""
        state = self.state
        if state == "closed":
            return True
        if state == "half_open" and not self._probe_out:
            self._probe_out = True
            return True
        return False

    def success(self) -> None:
        """The call succeeded: close the breaker and forget past failures."""
        self._state, self._failures, self._probe_out = "closed", 0, False

    def abandon(self) -> None:
        """The call was cancelled before it could tell (e.g. the chain's deadline): it
        counts as neither; a half-open breaker lets the next call probe instead."""
        self._probe_out = False

    def failure(self) -> None:
        """The call failed: count it; open on the threshold, or at once when probing."""
        self._failures += 1
        if self._state == "half_open" or self._failures >= self.config.failure_threshold:
            self._state, self._opened_at, self._probe_out = "open", self._clock(), False


class ShardedBreaker:
    """One :class:`CircuitBreaker` per shard of the memory store, for a store spread over
    several servers (Redis Cluster): a dead shard opens only its own
    breaker, so users whose data lives on the other shards keep their memory, and a
    tenant moved to a new shard (a replica promoted) starts on a closed breaker instead of
    waiting out the old one's cool-down.

    ``shard_of(user_id)`` names the user's shard (the cluster node serving the user's
    hash slot, as the client knows it now); one that raises counts as shard ``""``.
    Shards are the store's servers: a handful, so breakers are never evicted."""

    def __init__(self, config: BreakerConfig, shard_of: Callable[[str], str],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._shard_of = shard_of
        self._clock = clock
        self._breakers: dict[str, CircuitBreaker] = {}

    def for_user(self, user_id: str) -> CircuitBreaker:
        """The breaker of ``user_id``'s shard (created on first use)."""
        try:
            shard = self._shard_of(user_id)
        except Exception:  # topology unknown right now: one breaker for "unknown"
            shard = ""
        breaker = self._breakers.get(shard)
        if breaker is None:
            breaker = self._breakers[shard] = CircuitBreaker(self.config, self._clock)
        return breaker


class BreakerRegistry:
    """One :class:`CircuitBreaker` per distinct :class:`BreakerConfig`, per gateway; with
    ``shard_of`` (a sharded store: Redis Cluster) one :class:`ShardedBreaker` instead."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 shard_of: Callable[[str], str] | None = None) -> None:
        self._clock = clock
        self._shard_of = shard_of
        self._breakers: dict[BreakerConfig, CircuitBreaker | ShardedBreaker] = {}

    def get(self, config: BreakerConfig) -> CircuitBreaker | ShardedBreaker:
        """The shared breaker for ``config`` (created on first use)."""
        breaker = self._breakers.get(config)
        if breaker is None:
            breaker = self._breakers[config] = (
                CircuitBreaker(config, self._clock) if self._shard_of is None
                else ShardedBreaker(config, self._shard_of, self._clock))
        return breaker
