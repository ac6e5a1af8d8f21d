"""``GET /metrics`` on prometheus_client (issue 9, item 9): declared families with HELP and
TYPE, exact values, request / upstream / request-phase histograms, every
``x-memgate-degraded`` entry counted, and a ``memgate worker`` process serving its own."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx
import openai
import redis.asyncio as aredis
from prometheus_client.parser import text_string_to_metric_families

from gateway.chain.sdk import CallContext
from gateway.chain.services import PluginServices
from gateway.proxy.assembly import reply_from_completion
from gateway.proxy.wire import ChatRequest
from gateway.runtime.principal import Principal
from plugins.memorize import MemorizePlugin
from tests.memorization.conftest import memorize_config
from tests.support import plugins as tp
from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import completion

ROOT = Path(__file__).resolve().parent.parent


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of a scrape by (name, labels), parsed by prometheus_client's parser."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(text: str, name: str, **labels: str) -> float | None:
    return samples(text).get((name, frozenset(labels.items())))


def test_metrics_are_prometheus_text_with_help_and_type_for_every_family(start_gateway, upstream):
    gw = start_gateway()
    response = httpx.get(gw.url + "/metrics", timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = response.text
    for family, kind in [("memgate_degraded_total", "counter"), ("memgate_plugin_failures_total", "counter"),
                         ("memgate_client_disconnects_total", "counter"),
                         ("memgate_http_request_duration_seconds", "histogram"),
                         ("memgate_upstream_duration_seconds", "histogram"),
                         ("memgate_request_phase_seconds", "histogram")]:
        assert re.search(rf"^# HELP {family} \S", text, re.M), family
        assert f"\n# TYPE {family} {kind}\n" in text, family
    assert {f.name for f in text_string_to_metric_families(text)} >= {"memgate_degraded", "memgate_http_request_duration_seconds"}


def test_counter_values_are_exact(start_gateway, upstream):
    gw = start_gateway()
    gw.gateway.telemetry.metrics.inc("memgate_completions_shed_total", 1_234_567)
    gw.gateway.telemetry.metrics.inc("memgate_client_disconnects_total", 123_456)
    text = httpx.get(gw.url + "/metrics", timeout=30).text
    # Go float formatting, as every Prometheus client writes it: every digit kept
    assert "\nmemgate_completions_shed_total 1.234567e+06\n" in text
    assert "\nmemgate_client_disconnects_total 123456.0\n" in text
    assert value(text, "memgate_completions_shed_total") == 1_234_567.0  # not 1.23457e+06 (= 1234570)


def test_requests_are_counted_by_route_and_status_with_latency(start_gateway, upstream):
    gw = start_gateway()
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    bad = openai.OpenAI(base_url=gw.base_url, api_key="sk-unknown", max_retries=0)
    try:
        bad.chat.completions.create(model="gpt-4o", messages=[])
    except openai.AuthenticationError:
        pass
    assert httpx.get(gw.url + "/v1/memories", timeout=30).status_code == 401  # a litestar handler, no key
    assert httpx.get(gw.url + "/healthz", timeout=30).status_code == 200
    text = httpx.get(gw.url + "/metrics", timeout=30).text
    chat = {"route": "/v1/chat/completions", "method": "POST"}
    assert value(text, "memgate_http_request_duration_seconds_count", **chat, status="200") == 1.0
    assert value(text, "memgate_http_request_duration_seconds_sum", **chat, status="200") > 0
    assert value(text, "memgate_http_request_duration_seconds_bucket", **chat, status="200", le="+Inf") == 1.0
    assert value(text, "memgate_http_request_duration_seconds_count", **chat, status="401") == 1.0
    assert value(text, "memgate_http_request_duration_seconds_count",
                 route="/v1/memories", method="GET", status="401") == 1.0
    assert value(text, "memgate_http_request_duration_seconds_count", route="/healthz", method="GET", status="200") == 1.0
    assert value(text, "memgate_upstream_duration_seconds_count", endpoint="chat.completions", status="200") == 1.0


def test_upstream_latency_of_pass_through_routes_and_failures(start_gateway, upstream):
    gw = start_gateway(upstream={"base_url": "http://127.0.0.1:9/v1"})  # nothing listens: 502
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    try:
        client.models.list()
    except openai.APIStatusError as exc:
        assert exc.status_code == 502
    text = httpx.get(gw.url + "/metrics", timeout=30).text
    assert value(text, "memgate_upstream_duration_seconds_count", endpoint="models", status="error") == 1.0
    assert value(text, "memgate_http_request_duration_seconds_count",
                 route="/v1/models", method="GET", status="502") == 1.0


def test_every_degraded_entry_is_counted_once_with_the_request_phase(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[
        {"name": "raising", "on_failure": "skip"}, {"name": "sleeping", "budget_ms": 50}])
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}
    for _ in range(2):
        response = httpx.post(gw.base_url + "/chat/completions", json=body,
                              headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=20)
        assert response.headers["x-memgate-degraded"] == "raising:error:RuntimeError,sleeping:timeout"
    text = httpx.get(gw.url + "/metrics", timeout=30).text
    assert value(text, "memgate_degraded_total", plugin="raising", reason="error:RuntimeError") == 2.0
    assert value(text, "memgate_degraded_total", plugin="sleeping", reason="timeout") == 2.0
    assert value(text, "memgate_plugin_failures_total", plugin="sleeping", hook="rewrite_request", reason="timeout") == 2.0
    assert value(text, "memgate_request_phase_seconds_count") == 2.0
    assert value(text, "memgate_request_phase_seconds_sum") >= 2 * 0.05  # both ran past the 50 ms budget


async def enqueue_one(redis: aredis.Redis, config, text: str) -> str | None:
    plugin = MemorizePlugin(config, PluginServices(redis=redis))
    call = CallContext(request_id="req_" + uuid.uuid4().hex, principal=Principal("k", "wally", "tutor"),
                       original=ChatRequest(model="gpt-4o-mini", messages=[{"role": "user", "content": text}]),
                       headers={}, upstream=None)  # type: ignore[arg-type]  # no upstream calls
    return await plugin.memorization.enqueue(call, reply_from_completion(completion("Noted.")), datetime.now(UTC))


class StderrDrain:
    """Reads a child's stderr to the end in a background task, line by line, so the child
    never blocks on a full pipe however much it logs; ``port`` resolves with the first
    ``metrics at http://<host>:<port>/metrics`` line (None when the child exits first)."""

    def __init__(self, stream: asyncio.StreamReader, host: bytes) -> None:
        self.lines: list[str] = []
        self.port: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self._pattern = re.compile(rb"metrics at http://" + host + rb":(\d+)/metrics")
        self.task = asyncio.create_task(self._read(stream))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        try:
            while line := await stream.readline():
                self.lines.append(line.decode(errors="replace"))
                match = self._pattern.search(line)
                if match and not self.port.done():
                    self.port.set_result(int(match.group(1)))
        finally:
            if not self.port.done():
                self.port.set_result(None)

    def text(self) -> str:
        return "".join(self.lines)[-2000:]


async def test_a_worker_process_serves_its_job_counter_on_its_metrics_port(tmp_path, redis_url, upstream):
    memorize = memorize_config("verbatim")
    settings = {
        "upstream": {"base_url": upstream.url + "/v1", "api_key": "sk-upstream"},
        "memory": {"redis_url": redis_url, "key_prefix": "w" + uuid.uuid4().hex[:10],
                   "embedding": {"provider": "openai", "model": "double-embedding", "dimensions": 8}},
        "plugins": [{"name": "memorize", "config": json.loads(memorize.model_dump_json())}],
    }
    path = tmp_path / "gateway.yaml"
    path.write_text(json.dumps(settings))
    process = await asyncio.create_subprocess_exec(
        # --metrics-host: another loopback address than the default, as a container's 0.0.0.0 would be
        sys.executable, "-m", "gateway.cli", "worker", "--config", str(path), "--metrics-port", "0",
        "--metrics-host", "127.0.0.2", cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    stderr = StderrDrain(process.stderr, rb"127\.0\.0\.2")
    redis = aredis.Redis.from_url(redis_url)
    try:
        # Deadlines bound a hang, they do not pace the test: each phase ends as soon as its
        # condition holds. Start-up (a fresh interpreter importing the gateway) and the job
        # get their own, so a slow start on a busy machine does not eat the job's time.
        async with asyncio.timeout(120):
            port = await stderr.port
        assert port is not None, "worker exited before serving metrics:\n" + stderr.text()
        assert await enqueue_one(redis, memorize, "I keep bees on my roof.") is not None
        deadline = time.monotonic() + 60
        async with httpx.AsyncClient(timeout=30) as client:
            while True:  # the job is handled asynchronously: poll for it, bounded
                assert process.returncode is None, "worker exited:\n" + stderr.text()
                response = await client.get(f"http://127.0.0.2:{port}/metrics")
                assert response.status_code == 200
                text = response.text
                done = value(text, "memgate_memorize_jobs_total", outcome="done")
                # the job is counted when it is settled, then acknowledged: a scrape in
                # between sees it done and still on the stream, so wait for both
                if done == 1.0 and value(text, "memgate_memorize_queue_length") == 0.0:
                    break
                assert time.monotonic() < deadline, f"job counter {done}, queue:\n{text}\n{stderr.text()}"
                await asyncio.sleep(0.05)
        assert "# TYPE memgate_memorize_jobs_total counter" in text
        assert value(text, "memgate_memorize_queue_up") == 1.0  # queue gauges read at scrape time
    finally:
        await redis.aclose()
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
        await asyncio.wait_for(stderr.task, 30)
    assert process.returncode == 0, stderr.text()


def test_the_facade_refuses_undeclared_names_and_labels():
    from gateway.runtime.metrics import Metrics

    metrics = Metrics()
    for bad in (lambda: metrics.inc("memgate_typo_total"),
                lambda: metrics.inc("memgate_degraded_total", plugin="p"),  # reason missing
                lambda: metrics.inc("memgate_client_disconnects_total", route="/x"),
                lambda: metrics.observe("memgate_request_phase_seconds_typo", 0.1),
                lambda: metrics.counter("memgate_degraded_total", "again", ("plugin",)),
                lambda: metrics.counter("memgate_no_suffix", "help")):
        try:
            bad()
        except ValueError:
            continue
        raise AssertionError("accepted an undeclared metric or label set")
    metrics.counter("memgate_plugin_things_total", "A plugin's own counter.", ("kind",))
    metrics.counter("memgate_plugin_things_total", "A plugin's own counter.", ("kind",))  # once per instance: fine
    metrics.inc("memgate_plugin_things_total", 3, kind="a")
    assert metrics.get("memgate_plugin_things_total", kind="a") == 3.0
    assert Metrics().get("memgate_plugin_things_total", kind="a") == 0.0  # one registry per gateway


def test_a_plugin_declares_its_own_histogram_once_and_observes_into_it():
    import pytest

    from gateway.runtime.metrics import Metrics

    metrics = Metrics()
    metrics.histogram("memgate_test_kept_messages", "messages kept", buckets=(1, 5, 10))
    metrics.histogram("memgate_test_kept_messages", "messages kept", buckets=(1, 5, 10))  # again: no-op
    metrics.observe("memgate_test_kept_messages", 4)
    assert metrics.get("memgate_test_kept_messages_bucket", le="5.0") == 1
    assert metrics.get("memgate_test_kept_messages_bucket", le="1.0") == 0
    with pytest.raises(ValueError, match="other labels or buckets"):
        metrics.histogram("memgate_test_kept_messages", "messages kept", buckets=(1, 2))
    with pytest.raises(ValueError, match="_total"):
        metrics.histogram("memgate_test_kept_total", "a counter's name")


async def test_owners_declare_their_families_through_the_sdk_values_and_only_declared_gauges_show():
    import pytest

    from gateway.chain.sdk import CounterFamily, HistogramFamily
    from gateway.chain.services import PluginServices
    from gateway.memorization.observe import declare_metrics
    from gateway.runtime.metrics import GaugeFamily

    services = PluginServices()
    text = (await services.telemetry.metrics.render())[0].decode()
    assert "memgate_memorize_jobs_total" not in text  # the core's module no longer lists them
    services.metrics.declare(CounterFamily("memgate_plugin_widgets_total", "Widgets.", ("kind",)),
                             HistogramFamily("memgate_plugin_widget_seconds", "Widget time.", buckets=(0.1, 1.0)))
    services.metrics.inc("memgate_plugin_widgets_total", 2, kind="a")
    services.metrics.observe("memgate_plugin_widget_seconds", 0.5)
    declare_metrics(services.telemetry)
    metrics = services.telemetry.metrics
    metrics.declare(GaugeFamily("memgate_plugin_widgets_up", "Widgets answered."))
    metrics.register_gauges("w", lambda: {"memgate_plugin_widgets_up": 1.0})
    metrics.register_gauges("bad", lambda: {"memgate_undeclared": 1.0})  # left out, logged
    text = (await metrics.render())[0].decode()
    assert value(text, "memgate_plugin_widgets_total", kind="a") == 2.0
    assert value(text, "memgate_plugin_widget_seconds_count") == 1.0
    assert value(text, "memgate_plugin_widgets_up") == 1.0 and "memgate_undeclared" not in text
    assert "# HELP memgate_memorize_jobs_total Memorization jobs settled" in text
    with pytest.raises(ValueError, match="another type"):
        metrics.declare(GaugeFamily("memgate_plugin_widgets_total", "a counter's name"))


def test_latency_quantiles_read_from_buckets_are_close_to_the_values():
    """The Stats page reads p50/p95/p99 as the bound of the bucket holding them: from 1 ms
    to 3 s that bound is within 1.5x of the value (a 29 ms recall phase is "<= 30 ms")."""
    from gateway.api.admin.console_api import histogram_summary
    from gateway.runtime.metrics import LATENCY_BUCKETS, Metrics

    for ms in range(1, 3000):
        bound = next(b for b in LATENCY_BUCKETS if b >= ms / 1000)
        assert bound <= 1.5 * ms / 1000, (ms, bound)
    metrics = Metrics()
    for seconds in [0.012] * 90 + [0.029] * 8 + [0.18] * 2:
        metrics.observe("memgate_request_phase_seconds", seconds)
    summary = histogram_summary(metrics, "memgate_request_phase_seconds")
    assert (summary["p50_ms"], summary["p95_ms"], summary["p99_ms"]) == (15.0, 30.0, 200.0)
