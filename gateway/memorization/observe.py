"""Observability of memorization.

Every family is declared here (:data:`METRICS`), not in the core's metrics module.
Counters (``Metrics.inc``): ``memgate_memorize_jobs_total{outcome}`` (done, duplicate,
stale, retried, dead), ``memgate_memorize_failures_total{error}``,
``memgate_memorize_job_seconds_total`` (sum of job durations; with the jobs counter it
gives jobs/s and mean seconds per job). Gauges read from Redis at scrape time
(``Metrics.register_gauges``): ``memgate_memorize_queue_length``,
``memgate_memorize_queue_pending``, ``memgate_memorize_retrying``,
``memgate_memorize_dead_letters`` and ``memgate_memorize_lag_seconds`` (age of the
oldest entry on the stream). Every job runs in a span ``memorize job`` (kind CONSUMER,
a new trace) *linked* to the request's span through the job's stored W3C traceparent
(OpenTelemetry messaging conventions: a consumer links to the producer).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags

from gateway.memorization.jobs import Job
from gateway.memorization.queue import JobQueue
from gateway.runtime.metrics import CounterFamily, GaugeFamily, MetricFamily

#: Every metric family of memorization, declared by whatever part counts first
#: (:func:`declare_metrics`: the service, a processor, a worker).
METRICS: tuple[MetricFamily, ...] = (
    CounterFamily("memgate_memorize_jobs_total",
                  "Memorization jobs settled, by outcome (done, duplicate, stale, retried, dead).", ("outcome",)),
    CounterFamily("memgate_memorize_failures_total",
                  "Memorization job attempts that raised, by exception type (loop: the worker loop itself).",
                  ("error",)),
    CounterFamily("memgate_memorize_turns_skipped_total",
                  "Turns verbatim memorization formed no memory from, by reason: request, question, small_talk, "
                  "meta (talk about the conversation), other (memorize.verbatim_formation).", ("reason",)),
    CounterFamily("memgate_memorize_reclaimed_total",
                  "Memorization jobs taken over from a dead or stuck worker (XAUTOCLAIM)."),
    CounterFamily("memgate_memorize_shed_total",
                  "Captured turns never handed to Redis: the in-process buffer overflowed, or the gateway "
                  "stopped with turns still buffered (queue.buffer_max_jobs)."),
    CounterFamily("memgate_memorize_job_seconds_total",
                  "Seconds spent processing memorization jobs that completed (with the jobs counter: mean seconds "
                  "per job)."),
    GaugeFamily("memgate_memorize_queue_up", "1 when the memorization queue's Redis answered this scrape, else 0."),
    GaugeFamily("memgate_memorize_queue_length", "Memorization jobs on the stream (waiting plus delivered, not acked)."),
    GaugeFamily("memgate_memorize_queue_pending", "Memorization jobs delivered to a worker and not acked."),
    GaugeFamily("memgate_memorize_retrying", "Memorization jobs parked for a retry."),
    GaugeFamily("memgate_memorize_dead_letters", "Memorization jobs on the dead-letter stream."),
    GaugeFamily("memgate_memorize_lag_seconds", "Age of the oldest memorization job on the stream, seconds."),
)


def declare_metrics(telemetry: Any) -> None:
    """Declare :data:`METRICS` on ``telemetry``'s metrics (None: nothing to declare)."""
    if telemetry is not None:
        telemetry.metrics.declare(*METRICS)


def link_from_traceparent(traceparent: str | None) -> Link | None:
    """A span link to ``00-<trace>-<span>-<flags>``; None when absent or malformed."""
    if not traceparent:
        return None
    parts = traceparent.strip().split("-")
    if len(parts) != 4 or len(parts[1]) != 32 or len(parts[2]) != 16:
        return None
    try:
        context = SpanContext(int(parts[1], 16), int(parts[2], 16), is_remote=True,
                              trace_flags=TraceFlags(int(parts[3], 16)))
    except ValueError:
        return None
    return Link(context) if context.is_valid else None


@contextlib.contextmanager
def job_span(telemetry: Any, job: Job, entry_id: str) -> Iterator[Any]:
    """The span of one job (no-op without a recording telemetry)."""
    if telemetry is None or not telemetry.recording:
        yield trace.INVALID_SPAN
        return
    link = link_from_traceparent(job.traceparent)
    attributes = {
        "memgate.job_id": job.job_id, "memgate.job_kind": job.kind, "memgate.user_id": job.user_id,
        "memgate.friend_id": job.friend_id, "memgate.attempt": job.attempt,
        "messaging.system": "redis", "messaging.message.id": entry_id,
        "memgate.request_id": job.request_id,
    }
    with telemetry.tracer.start_as_current_span(
        "memorize job", context=Context(), kind=SpanKind.CONSUMER, attributes=attributes,
        links=[link] if link else [], record_exception=True, set_status_on_exception=True,
    ) as span:
        yield span


def register_queue_gauges(metrics: Any, queue: JobQueue) -> None:
    """Queue gauges at ``GET /metrics`` (read from Redis; any gateway shows the shared queue)."""
    metrics.declare(*METRICS)

    async def read() -> Mapping[str, float]:
        try:
            stats = await queue.stats()
        except Exception:  # a scrape must not fail because Redis is down
            return {"memgate_memorize_queue_up": 0.0}
        return {
            "memgate_memorize_queue_up": 1.0,
            "memgate_memorize_queue_length": float(stats.length),
            "memgate_memorize_queue_pending": float(stats.pending),
            "memgate_memorize_retrying": float(stats.retrying),
            "memgate_memorize_dead_letters": float(stats.dead),
            "memgate_memorize_lag_seconds": stats.lag_seconds,
        }

    metrics.register_gauges("memorize_queue", read)
