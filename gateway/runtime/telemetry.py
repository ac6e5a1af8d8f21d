"""OpenTelemetry spans and in-process counters.

Spans: one per request (``chat {model}``, kind SERVER), one per plugin hook
(``plugin {name}.{hook}``; one per stream for stream filters, not per chunk) and one per
upstream call (``upstream chat {model}``, kind CLIENT). An incoming W3C ``traceparent``
is continued and the upstream call carries ours (W3C Trace Context). Attributes follow
the OpenTelemetry GenAI semantic conventions (``gen_ai.operation.name``,
``gen_ai.request.model``, ``gen_ai.response.model``, ``gen_ai.usage.input_tokens``,
``gen_ai.usage.output_tokens``, ``gen_ai.response.finish_reasons``) plus the tenant
(``memgate.user_id``, ``memgate.friend_id``, ``memgate.key_id``).

Exporter ``none`` (default) uses the API's non-recording tracer: no span cost, but the
client's ``traceparent`` still reaches the upstream unchanged.

Metrics (:class:`gateway.runtime.metrics.Metrics`, on prometheus_client: one registry per
``Telemetry``) are served at ``GET /metrics``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from gateway.runtime.config import TelemetryConfig
from gateway.runtime.metrics import Metrics

__all__ = ["Metrics", "Telemetry", "set_error"]

_PROPAGATOR = TraceContextTextMapPropagator()


class Telemetry:
    """Tracer plus counters for one app; built by ``create_app`` (no global provider)."""

    def __init__(self, config: TelemetryConfig, exporter: SpanExporter | None = None) -> None:
        self.metrics = Metrics()
        self._provider: TracerProvider | None = None
        if exporter is None and config.exporter == "console":
            exporter = ConsoleSpanExporter()
        elif exporter is None and config.exporter == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter(endpoint=config.otlp_endpoint) if config.otlp_endpoint else OTLPSpanExporter()
        if exporter is not None:
            self._provider = TracerProvider(
                resource=Resource.create({"service.name": config.service_name})
            )
            processor = (
                SimpleSpanProcessor(exporter)
                if config.exporter == "none"  # an injected (test) exporter: synchronous
                else BatchSpanProcessor(exporter)
            )
            self._provider.add_span_processor(processor)
            self.tracer: trace.Tracer = self._provider.get_tracer("memgate")
        else:
            self.tracer = trace.NoOpTracer()

    @property
    def recording(self) -> bool:
        return self._provider is not None

    def extract(self, headers: Mapping[str, str]) -> Context:
        """The remote context of an incoming ``traceparent`` (empty context if none)."""
        return _PROPAGATOR.extract(headers)

    def inject(self, headers: dict[str, str], context: Context | None = None) -> None:
        """Write ``traceparent`` for the current (or given) span into ``headers``."""
        if self.recording:
            _PROPAGATOR.inject(headers, context=context)

    @contextmanager
    def span(
        self,
        name: str,
        attributes: Mapping[str, Any] | None = None,
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        context: Context | None = None,
    ) -> Iterator[Span]:
        """A span around a block; an exception is recorded and re-raised."""
        if not self.recording:
            yield trace.INVALID_SPAN
            return
        with self.tracer.start_as_current_span(
            name, context=context, kind=kind, attributes=dict(attributes or {}),
            record_exception=True, set_status_on_exception=True,
        ) as span:
            yield span

    def start_span(self, name: str, attributes: Mapping[str, Any] | None = None) -> Span:
        """A span the caller ends itself (``span.end()``), for work that spans many
        callbacks (one span per stream filter per stream); not made current."""
        if not self.recording:
            return trace.INVALID_SPAN
        return self.tracer.start_span(name, attributes=dict(attributes or {}))

    def shutdown(self) -> None:
        if self._provider is not None:
            self._provider.shutdown()


def set_error(span: Span, message: str) -> None:
    """Mark a span failed without an exception object."""
    if span.is_recording():
        span.set_status(Status(StatusCode.ERROR, message))
