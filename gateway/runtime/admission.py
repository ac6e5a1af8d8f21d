"""Admission control for memory-store searches: shed load per request.

Why: recall is a queue in front of one embedding thread and one Redis. Without a limit,
at 64 concurrent users every search waits behind every other, all of them pass the
recall time limit together, the circuit breaker counts those self-inflicted timeouts as
store failures and opens, and *every* reply goes out without memory. With admission
control, at most ``max_concurrent`` searches are in flight; the others wait in a FIFO
with their own deadline, and a request is shed (``Skipped("overloaded")``, recorded in
``x-memgate-degraded``) only when it cannot be served before its deadline. The breaker
is left to what it is for: errors of Redis or the model (:mod:`gateway.runtime.breaker`).

Two layers:

- :class:`AdmissionQueue`: the sans-IO state machine (time passed in, no event loop):
  in-flight count, FIFO of waiting tickets with absolute deadlines, and an exponentially
  weighted moving average (EWMA) of the service time of one admitted search. A newcomer
  is shed at once when the predicted wait plus one service time would pass its deadline,
  the queue is full, or its deadline has passed; a waiter whose deadline no longer
  leaves one service time when a slot frees is shed instead of admitted.
- :class:`Admission`: the asyncio wrapper (one per gateway and config, shared by every
  recall plugin through ``services.recall(breaker, timeout_s, admission)``, like the breakers).

Prediction: with ``k`` tickets waiting ahead and all slots busy, a newcomer starts after
about ``(k // max_concurrent + 1) * ewma`` seconds (slots free in waves of one service
time). Rough on purpose: it only has to tell "hopeless" from "maybe"; the waiter's own
deadline settles the rest.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Decision = Literal["admit", "wait", "shed"]


class AdmissionConfig(BaseModel):
    """Admission settings of a recall plugin (``admission:`` in its config)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_concurrent: int = Field(
        32, ge=1, description="Memory searches in flight at once per gateway. 32: the embedding "
        "batcher's default batch_max, so the admitted queries fit one forward pass and a "
        "search waits for at most one batch ahead of its own inside the store.",
    )
    max_waiting: int = Field(
        1024, ge=0, description="Searches waiting for a slot; more are shed at once (bounds memory).",
    )
    reserve_ms: float = Field(
        50.0, ge=0, description="Time of the request phase's deadline kept for the rest of the "
        "chain and the upstream call: a search may use at most time_left - reserve_ms.",
    )
    fair_ms: float = Field(
        250.0, gt=0, description="A search that times out after it was admitted with at least "
        "min(fair_ms, timeout_ms / 2) left counts as a store failure for the breaker (the store "
        "had a fair chance: normal searches take ~10-50 ms); one admitted with less counts "
        "as overload (its time went to waiting).",
    )
    ewma_alpha: float = Field(
        0.2, gt=0, le=1, description="Weight of the newest service time in the moving average.",
    )


class Overloaded(Exception):
    """The search cannot be served before its deadline; it was not sent to the store."""


@dataclass(eq=False, slots=True)
class Ticket:
    """One waiting search: its absolute ``deadline`` (the queue's clock, seconds)."""

    deadline: float
    state: Decision = "wait"


@dataclass
class AdmissionQueue:
    """Sans-IO admission state (see module docstring). Times are seconds on one clock."""

    config: AdmissionConfig
    in_flight: int = 0
    ewma_s: float = 0.0
    waiting: deque[Ticket] = field(default_factory=deque)
    #: Searches shed so far (for tests and metrics).
    shed_count: int = 0

    def predicted_wait(self) -> float:
        """Seconds a newcomer would wait for a slot now (0 when one is free)."""
        if self.in_flight < self.config.max_concurrent and not self.waiting:
            return 0.0
        return (len(self.waiting) // self.config.max_concurrent + 1) * self.ewma_s

    def arrive(self, now: float, deadline: float) -> tuple[Decision, Ticket | None]:
        """A search asks to run by ``deadline``: ``("admit", None)`` (counted in flight),
        ``("wait", ticket)`` (queued; settle it with :meth:`release` / :meth:`give_up`),
        or ``("shed", None)``."""
        left = deadline - now
        if left <= 0:
            return self._shed()
        if self.in_flight < self.config.max_concurrent and not self.waiting:
            self.in_flight += 1
            return "admit", None
        if len(self.waiting) >= self.config.max_waiting or self.predicted_wait() + self.ewma_s > left:
            return self._shed()
        ticket = Ticket(deadline)
        self.waiting.append(ticket)
        return "wait", ticket

    def _shed(self) -> tuple[Decision, None]:
        self.shed_count += 1
        return "shed", None

    def give_up(self, ticket: Ticket, now: float) -> list[Ticket]:
        """A waiter stopped waiting (deadline passed, or cancelled). If a slot had just
        been handed to it, the slot goes on to the next waiters: returns the tickets
        settled by that, as :meth:`release` does."""
        if ticket.state == "wait":
            ticket.state = "shed"
            self.shed_count += 1
            self.waiting.remove(ticket)
        elif ticket.state == "admit":
            ticket.state = "shed"
            return self.release(now, None)
        return []

    def release(self, now: float | None, service_s: float | None) -> list[Ticket]:
        """An admitted search finished after ``service_s`` seconds (None: it did not run
        to an answer; the average is left alone). Frees its slot and hands free slots to
        waiters in FIFO order; returns the tickets settled now (``state`` "admit": run
        it, counted in flight; "shed": its deadline no longer leaves one service time)."""
        self.in_flight -= 1
        if service_s is not None:
            alpha = self.config.ewma_alpha
            self.ewma_s = service_s if self.ewma_s == 0.0 else (1 - alpha) * self.ewma_s + alpha * service_s
        settled: list[Ticket] = []
        while self.waiting and self.in_flight < self.config.max_concurrent:
            ticket = self.waiting.popleft()
            if now is not None and ticket.deadline - now < self.ewma_s:
                ticket.state = "shed"
                self.shed_count += 1
            else:
                ticket.state = "admit"
                self.in_flight += 1
            settled.append(ticket)
        return settled


class Admission:
    """The asyncio side of :class:`AdmissionQueue`; use from one event loop.

    ``async with admission.slot(deadline):`` runs the body once admitted, or raises
    :class:`Overloaded` (``deadline``: :func:`time.monotonic` seconds, or ``clock``'s).
    """

    def __init__(self, config: AdmissionConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.queue = AdmissionQueue(config)
        self._clock = clock
        self._waiters: dict[Ticket, asyncio.Future[None]] = {}

    @asynccontextmanager
    async def slot(self, deadline: float) -> AsyncIterator[None]:
        """Hold one of ``max_concurrent`` slots for the body.

        Raises:
            Overloaded: shed on arrival, or no slot before ``deadline`` (minus one service time).
        """
        decision, ticket = self.queue.arrive(self._clock(), deadline)
        if decision == "shed":
            raise Overloaded("memory searches are queued past this request's deadline")
        if ticket is not None:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters[ticket] = future
            try:
                async with asyncio.timeout(max(0.0, deadline - self._clock())):
                    await future
            except BaseException as exc:
                self._waiters.pop(ticket, None)
                self._settle(self.queue.give_up(ticket, self._clock()))
                if isinstance(exc, TimeoutError):
                    raise Overloaded("no memory-search slot before this request's deadline") from None
                raise
            if ticket.state != "admit":
                raise Overloaded("shed while waiting: the deadline no longer leaves one search")
        started = self._clock()
        service: float | None = None
        try:
            yield
            service = self._clock() - started
        except asyncio.CancelledError:  # not an answer: the average is left alone
            raise
        except BaseException:  # an error or a timeout took this long: still a service time
            service = self._clock() - started
            raise
        finally:
            self._settle(self.queue.release(self._clock(), service))

    def _settle(self, tickets: list[Ticket]) -> None:
        for ticket in tickets:
            future = self._waiters.pop(ticket, None)
            if future is not None and not future.done():
                future.set_result(None)


class AdmissionRegistry:
    """One :class:`Admission` per distinct :class:`AdmissionConfig`, per gateway."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._admissions: dict[AdmissionConfig, Admission] = {}

    def busy(self) -> bool:
        """Whether a memory search waits for a slot now (every slot of some admission is
        taken): the request path is saturated. The in-serve memorization worker pauses
        then (``memorize.worker.yield_max_lag_s``)."""
        return any(admission.queue.waiting for admission in self._admissions.values())

    def get(self, config: AdmissionConfig) -> Admission:
        """The shared admission for ``config`` (created on first use)."""
        admission = self._admissions.get(config)
        if admission is None:
            admission = self._admissions[config] = Admission(config, self._clock)
        return admission
