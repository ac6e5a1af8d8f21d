"""Prometheus metrics of one gateway or ``memgate worker`` process, on ``prometheus_client``.

Each :class:`Metrics` owns a ``CollectorRegistry`` of its own (not the process-wide
default), so several gateways in one process (the tests) never share or clash. Every
family is declared with HELP text and fixed label names: the request path's and the
chain's up front (:data:`COUNTERS`, :data:`HISTOGRAMS`); every other owner (a plugin, the
memorization service) declares its own (:class:`CounterFamily`, :class:`HistogramFamily`,
:class:`GaugeFamily`, :meth:`Metrics.declare`) before using them;
call sites use a small facade:

- ``inc(name, amount=1, **labels)``: a counter (``name`` ends in ``_total``);
- ``observe(name, value, **labels)``: a histogram (seconds unless its name says otherwise);
- ``register_gauges(key, read)``: gauges read at scrape time (``read()`` returns, or
  awaits to, ``{gauge_name: value}``; a reader that fails leaves its gauges out);
- ``get(name, **labels)``: one sample's value (tests).

A name that is not declared, or labels other than the family's, raise ``ValueError``
(a programming error, found by the tests, never a client's input).

Exposition (:meth:`Metrics.render`): ``prometheus_client.exposition.choose_encoder``
picks the format from the scraper's ``Accept`` header, as prometheus_client's own servers
do: by default the Prometheus text format 0.0.4 (``text/plain; version=0.0.4;
charset=utf-8``, values as Go floats: ``1234567.0``), OpenMetrics when asked for.
``_created`` series are not exported (``disable_created_metrics``: they would double the
families and carry nothing a scraper needs).

Workers (:meth:`Metrics.serving`): prometheus_client's ``start_http_server`` on
127.0.0.1 in a thread; scrape-time gauges are read on the worker's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, start_http_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

__all__ = [
    "COUNTERS", "HISTOGRAMS", "LATENCY_BUCKETS", "CounterFamily", "GaugeFamily", "HistogramFamily", "MetricFamily",
    "Metrics", "StatusRecorder", "bounded_method", "observe_http_request",
]

log = logging.getLogger("memgate.metrics")

#: Counters: name -> (HELP, label names).
COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "memgate_plugin_failures_total": (
        "Plugin hooks that failed open (reason: error, timeout, deadline).", ("plugin", "hook", "reason")),
    "memgate_plugin_skips_total": (
        "Plugin hooks that raised Skipped: their change dropped, the call went on.", ("plugin", "hook", "reason")),
    "memgate_degraded_total": (
        "Entries named in x-memgate-degraded on replies, one per entry "
        "(reason as in the header: timeout, deadline, error:<Type>, a Skipped reason).", ("plugin", "reason")),
    "memgate_client_disconnects_total": ("Proxied requests whose client went away before the reply ended.", ()),
    "memgate_upstream_errors_total": (
        "Chat calls the upstream failed (502/504 or one mid-stream error event), by error code.", ("code",)),
    "memgate_completions_shed_total": (
        "Completion-hook runs shed past chain.max_pending_completions.", ()),
}

#: Latency buckets in seconds: sub-millisecond gateway work up to long streamed replies.
#: From 1 ms to 3 s each bound is at most 1.5x the one below, so a quantile read as a
#: bucket bound (the console's Stats page, ``histogram_quantile``) is within 1.5x of the
#: true value where recall and proxy overhead live (a 29 ms phase reads "<= 30 ms", not
#: "<= 50 ms"); coarser past 3 s (upstream replies).
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075,
    0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 120.0,
)

#: Histograms: name -> (HELP, label names, buckets).
HISTOGRAMS: dict[str, tuple[str, tuple[str, ...], tuple[float, ...]]] = {
    "memgate_http_request_duration_seconds": (
        "HTTP requests served, by route template, method and status (499: the client went away "
        "before a response started); seconds from arrival to the last byte.",
        ("route", "method", "status"), LATENCY_BUCKETS),
    "memgate_upstream_duration_seconds": (
        "Upstream calls, by endpoint and status (error: no response); seconds from sending the "
        "request to the upstream's response head.", ("endpoint", "status"), LATENCY_BUCKETS),
    "memgate_request_phase_seconds": (
        "The plugin chain's request phase per chat request (recall, injection, budgets; bounded "
        "by chain.request_deadline_ms), seconds.", (), LATENCY_BUCKETS),
}


@dataclass(frozen=True)
class CounterFamily:
    """A counter its owner declares (:meth:`Metrics.declare`): ``name`` ends in ``_total``;
    ``help`` is the HELP text; ``labels`` the label names every sample carries."""

    name: str
    help: str
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class HistogramFamily:
    """A histogram its owner declares: values in the unit its name says (seconds with the
    default :data:`LATENCY_BUCKETS`)."""

    name: str
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = LATENCY_BUCKETS


@dataclass(frozen=True)
class GaugeFamily:
    """A gauge without labels whose value a reader gives at scrape time
    (:meth:`Metrics.register_gauges`)."""

    name: str
    help: str


MetricFamily = CounterFamily | HistogramFamily | GaugeFamily

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _multiprocess_mode() -> bool:
    """True when prometheus_client keeps values in per-process files (its value class was
    chosen at import from ``PROMETHEUS_MULTIPROC_DIR``)."""
    from prometheus_client import values

    return values.ValueClass is not values.MutexValue


def bounded_method(method: str) -> str:
    """The method as a label value: a standard method, else ``other`` (bounded cardinality)."""
    return method if method in _METHODS else "other"


class StatusRecorder:
    """An ASGI ``send`` that passes every message on and remembers the response status
    (:attr:`status`: 0 until ``http.response.start`` is sent)."""

    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self._send = send
        self.status = 0

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        await self._send(message)


def observe_http_request(metrics: Metrics, scope: Mapping[str, Any], route: str, started: float, status: int) -> None:
    """One observation of ``memgate_http_request_duration_seconds``: the seconds since
    ``started`` (``time.perf_counter``), labelled by the scope's ``path_template`` (else
    ``route``), :func:`bounded_method` and ``status`` (0: none was sent, the client left:
    499)."""
    metrics.observe(
        "memgate_http_request_duration_seconds", time.perf_counter() - started,
        route=scope.get("path_template") or route, method=bounded_method(scope["method"]),
        status=str(status or 499),
    )


GaugeReader = Callable[[], "Mapping[str, float] | Awaitable[Mapping[str, float]]"]


class _Readings(Collector):
    """The scrape-time gauges: the values of the last :meth:`Metrics.refresh`."""

    def __init__(self) -> None:
        self.values: dict[str, float] = {}
        self.declared: dict[str, str] = {}  # name -> HELP

    def collect(self) -> Iterable[Metric]:
        values = self.values  # replaced whole by refresh: safe from the scrape thread
        for name, value in values.items():
            yield GaugeMetricFamily(name, self.declared[name], value=value)


class Metrics:
    """The metric families of one process part (module docstring)."""

    def __init__(self) -> None:
        disable_created_metrics()  # before any family is built (module docstring)
        self.registry = CollectorRegistry()
        self._counters: dict[str, Counter] = {}
        self._histograms: dict[str, Histogram] = {}
        for name, (help_, labels) in COUNTERS.items():
            self.counter(name, help_, labels)
        for name, (help_, labels, buckets) in HISTOGRAMS.items():
            self._histograms[name] = Histogram(name, help_, labels, registry=self.registry, buckets=buckets)
        self._readings = _Readings()
        self.registry.register(self._readings)
        self._readers: dict[str, GaugeReader] = {}
        # (name, label items) -> the labelled child: labels() validates and locks on every
        # call (~5 us); the cache holds no more entries than the families have children
        self._children: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}

    def _child(self, family: Any, name: str, labels: dict[str, str]) -> Any:
        key = (name, tuple(labels.items()))
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = family.labels(**labels) if labels or family._labelnames else family
        return child

    def declare(self, *families: MetricFamily) -> None:
        """Declare the families of their owner (a plugin, a core service); declaring the
        same family again is a no-op.

        Raises:
            ValueError: as :meth:`counter`, :meth:`histogram`, :meth:`gauge`.
        """
        for family in families:
            if isinstance(family, CounterFamily):
                self.counter(family.name, family.help, family.labels)
            elif isinstance(family, HistogramFamily):
                self.histogram(family.name, family.help, family.labels, family.buckets)
            else:
                self.gauge(family.name, family.help)

    def gauge(self, name: str, help_: str) -> None:
        """Declare a scrape-time gauge (no labels); declaring it again is a no-op.

        Raises:
            ValueError: the name is a counter's or a histogram's.
        """
        if name in self._counters or name in self._histograms:
            raise ValueError(f"metric {name!r} is declared as another type")
        self._readings.declared.setdefault(name, help_)

    def counter(self, name: str, help_: str, labels: Sequence[str] = ()) -> None:
        """Declare a counter (``name`` ends in ``_total``); declaring the same family again
        is a no-op.

        Raises:
            ValueError: the name is taken with other labels, or does not end in ``_total``.
        """
        existing = self._counters.get(name)
        if existing is not None:
            if tuple(existing._labelnames) != tuple(labels):
                raise ValueError(f"metric {name!r} is declared with labels {existing._labelnames}, not {tuple(labels)}")
            return
        if not name.endswith("_total"):
            raise ValueError(f"counter {name!r}: counter names end in _total")
        self._counters[name] = Counter(name, help_, tuple(labels), registry=self.registry)

    def histogram(
        self, name: str, help_: str, labels: Sequence[str] = (), buckets: Sequence[float] = LATENCY_BUCKETS
    ) -> None:
        """Declare a histogram (plugins' own; values in the unit its name says, seconds by
        default buckets); declaring the same family again is a no-op.

        Raises:
            ValueError: the name is taken with other labels or buckets, or ends in
                ``_total`` (a counter's suffix).
        """
        existing = self._histograms.get(name)
        if existing is not None:
            if tuple(existing._labelnames) != tuple(labels) or tuple(existing._upper_bounds[:-1]) != tuple(buckets):
                raise ValueError(f"metric {name!r} is declared with other labels or buckets")
            return
        if name.endswith("_total"):
            raise ValueError(f"histogram {name!r}: _total is a counter's suffix")
        self._histograms[name] = Histogram(name, help_, tuple(labels), registry=self.registry, buckets=tuple(buckets))

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        """Add ``amount`` (>= 0) to a declared counter.

        Raises:
            ValueError: unknown counter, labels other than the family's, negative amount.
        """
        family = self._counters.get(name)
        if family is None:
            raise ValueError(f"unknown counter {name!r}; declared: {', '.join(sorted(self._counters))}")
        self._child(family, name, labels).inc(amount)

    def observe(self, name: str, seconds: float, **labels: str) -> None:
        """Record one observation in a declared histogram.

        Raises:
            ValueError: unknown histogram or labels other than the family's.
        """
        family = self._histograms.get(name)
        if family is None:
            raise ValueError(f"unknown histogram {name!r}; declared: {', '.join(sorted(self._histograms))}")
        self._child(family, name, labels).observe(seconds)

    def register_gauges(self, key: str, read: GaugeReader) -> None:
        """Gauges read at scrape time; ``read()`` returns (or awaits to) ``{name: value}``
        with names declared by :meth:`gauge`. Registering ``key`` again replaces its reader."""
        self._readers[key] = read

    async def refresh(self) -> None:
        """Call every gauge reader now (on the caller's event loop)."""
        values: dict[str, float] = {}
        for key, read in list(self._readers.items()):
            try:
                result = read()
                if inspect.isawaitable(result):
                    result = await result
                for name, value in result.items():
                    if name not in self._readings.declared:
                        raise ValueError(f"gauge reader {key!r}: undeclared gauge {name!r}")
                    values[name] = float(value)
            except Exception as exc:  # a scrape never fails because one reader did
                log.warning("metrics: gauge reader %s failed: %r", key, exc)
        self._readings.values = values

    def get(self, name: str, **labels: str) -> float:
        """One sample's value (a counter's ``..._total``, a histogram's ``..._count`` /
        ``..._sum``, a gauge); 0.0 when it has no sample yet."""
        value = self.registry.get_sample_value(name, labels)
        return 0.0 if value is None else value

    async def render(self, accept: str | None = None) -> tuple[bytes, str]:
        """``(body, content type)`` for a scrape with this ``Accept`` header (module
        docstring); gauges are read first."""
        await self.refresh()
        encode, content_type = choose_encoder(accept or "")
        return encode(self.exposed()), content_type

    def exposed(self) -> CollectorRegistry:
        """What a scrape shows: this registry; in prometheus_client's multiprocess mode
        (``PROMETHEUS_MULTIPROC_DIR`` set before prometheus_client was imported, as
        ``server.workers`` > 1 does: :mod:`gateway.cli.server`) the counters and histograms of
        every process writing to that directory, added up (``MultiProcessCollector``),
        plus this process's scrape-time gauges."""
        if not _multiprocess_mode():
            return self.registry
        combined = CollectorRegistry()
        MultiProcessCollector(combined)
        combined.register(self._readings)
        return combined

    @contextlib.contextmanager
    def serving(self, port: int, loop: asyncio.AbstractEventLoop, host: str = "127.0.0.1") -> Iterator[int]:
        """Serve ``GET /metrics`` (any path) on ``host:port`` in a thread
        (prometheus_client's ``start_http_server``) until exit; yields the bound port
        (``port`` 0: any free one). Gauges are read on ``loop`` at each scrape (up to 5 s;
        the last values otherwise). Must not be scraped from ``loop``'s own thread.

        Raises:
            OSError: the port cannot be bound.
        """
        server, thread = start_http_server(port, host, registry=_ScrapeTime(self, loop))
        try:
            yield server.server_address[1]
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)


class _ScrapeTime(Collector):
    """The registry as seen from the scrape thread: gauges refreshed on the loop first."""

    def __init__(self, metrics: Metrics, loop: asyncio.AbstractEventLoop) -> None:
        self._metrics = metrics
        self._loop = loop

    def _refresh(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self._metrics.refresh(), self._loop).result(5.0)
        except Exception as exc:  # loop closed or busy: serve the last values
            log.warning("metrics: gauges not refreshed: %r", exc)

    def collect(self) -> Iterable[Metric]:
        self._refresh()
        return self._metrics.registry.collect()

    def restricted_registry(self, names: Iterable[str]) -> Any:
        self._refresh()
        return self._metrics.registry.restricted_registry(names)
