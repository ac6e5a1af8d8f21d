"""The cells of ``python -m bench proxy`` and the runner that measures them.

A cell is one request kind (non-stream or stream) at one concurrency. Client cells
(c=1) use :mod:`bench.proxy.loadgen` and pool their samples over rounds; throughput
cells use :mod:`bench.proxy.wrk` (or the Python client with ``C`` connections when wrk
is missing) and report the median round. Targets run interleaved, in an order that
rotates every round, so a noisy neighbour hurts them alike.

Figures of one cell and target (times in seconds): ``rps``; ``total_p50/p90/p99/mean``
(last body byte); for streams ``ttfb_*`` (first body byte); ``cpu_us`` (the target's CPU
time per request, microseconds, see :meth:`Runner.measure`); ``requests``; ``errors``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.proxy.bodies import Bodies
from bench.proxy.loadgen import Samples, run_loadgen
from bench.proxy.process import cpu_seconds
from bench.proxy.stats import latency_figures, median_of
from bench.proxy.targets import Target
from bench.proxy.wrk import WrkResult, run_wrk, write_script

MS = 1000.0


@dataclass(frozen=True)
class Cell:
    """One measurement: a request kind at a concurrency, with its load generator."""

    key: str
    title: str
    stream: bool
    concurrency: int
    high: bool  # throughput cell (wrk, or the Python client with many connections)


@dataclass(frozen=True)
class Plan:
    """The run's settings, from the command line."""

    requests: int
    concurrency: int
    duration: float
    warmup: int
    rounds: int
    high_requests: int


def cells_for(plan: Plan, selected: Sequence[str]) -> list[Cell]:
    c = plan.concurrency
    every = [
        Cell("plain_c1", "non-stream c=1", False, 1, False),
        Cell("plain_cC", f"non-stream c={c}", False, c, True),
        Cell("sse_c1", "stream c=1", True, 1, False),
        Cell("sse_cC", f"stream c={c}", True, c, True),
    ]
    return [cell for cell in every if cell.key in selected]


class Runner:
    """Runs cells against targets; owns the load generators' files."""

    def __init__(self, plan: Plan, bodies: Bodies, workdir: Path, wrk: str | None) -> None:
        self.plan = plan
        self.bodies = bodies
        self.workdir = workdir
        self.wrk = wrk
        self._body_files = {False: workdir / "plain-request.json", True: workdir / "sse-request.json"}
        self._body_files[False].write_bytes(bodies.plain_request)
        self._body_files[True].write_bytes(bodies.sse_request)
        self._scripts: dict[tuple[str, bool], Path] = {}
        self.warmed: set[tuple[str, str]] = set()

    def _body(self, stream: bool) -> bytes:
        return self.bodies.sse_request if stream else self.bodies.plain_request

    def client(self, cell: Cell, target: Target, requests: int, warmup: int) -> Samples:
        path = target.sse_path if cell.stream else target.plain_path
        return run_loadgen(
            "127.0.0.1", target.port, path, self._body(cell.stream), target.headers,
            requests=requests, concurrency=cell.concurrency, warmup=warmup, workdir=self.workdir,
        )

    def wrk_run(self, cell: Cell, target: Target, duration: float) -> WrkResult:
        assert self.wrk is not None
        key = (target.name, cell.stream)
        if key not in self._scripts:
            self._scripts[key] = write_script(
                self.workdir / f"{target.name}-{'sse' if cell.stream else 'plain'}.lua",
                self._body_files[cell.stream], target.headers,
            )
        path = target.sse_path if cell.stream else target.plain_path
        return run_wrk(self.wrk, f"http://127.0.0.1:{target.port}{path}", self._scripts[key],
                       connections=cell.concurrency, duration=duration)

    def measure(self, cell: Cell, target: Target) -> tuple[dict[str, float], Samples | None]:
        """One round of one cell on one target: (figures, raw samples of client cells).

        ``cpu_us`` is the target's CPU time per request (microseconds, its process and
        descendants; warm-ups excluded): a figure a noisy machine disturbs much less
        than requests/s. For ``direct`` it is nginx's (or the built-in server's)."""
        plan = self.plan
        first = (cell.key, target.name) not in self.warmed
        self.warmed.add((cell.key, target.name))
        if cell.high and self.wrk:
            if first:
                self.wrk_run(cell, target, 1.0)
            cpu = cpu_seconds(target.pid) if target.pid else 0.0
            r = self.wrk_run(cell, target, plan.duration)
            cpu = cpu_seconds(target.pid) - cpu if target.pid else 0.0
            return {"rps": r.rps, "total_p50": r.p50, "total_p90": r.p90, "total_p99": r.p99,
                    "requests": r.requests, "errors": r.errors,
                    **({"cpu_us": cpu / r.requests * 1e6} if target.pid and r.requests else {})}, None
        requests = plan.high_requests if cell.high else plan.requests
        warmup = plan.warmup * (cell.concurrency if cell.high else 1)
        if warmup:
            self.client(cell, target, warmup, 0)
        cpu = cpu_seconds(target.pid) if target.pid else 0.0
        s = self.client(cell, target, requests, 0)
        cpu = cpu_seconds(target.pid) - cpu if target.pid else 0.0
        figures = {"rps": len(s.total) / s.elapsed if s.elapsed else 0.0,
                   "requests": len(s.total), "errors": s.errors, **latency_figures(s.total, "total")}
        if target.pid and s.total:
            figures["cpu_us"] = cpu / len(s.total) * 1e6
        if cell.stream:
            figures.update(latency_figures(s.ttfb, "ttfb"))
        if s.errors:
            print(f"  ! {target.name} {cell.title}: {s.errors} errors, first: {s.first_error}", file=sys.stderr)
        return figures, s


def run_cells(runner: Runner, cells: Sequence[Cell], targets: Sequence[Target], rounds: int) -> dict[str, dict[str, dict[str, Any]]]:
    """``{cell: {target: figures}}``; see the module docstring for pooling over rounds."""
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for cell in cells:
        per_round: dict[str, list[dict[str, float]]] = {t.name: [] for t in targets}
        pooled: dict[str, list[Samples]] = {t.name: [] for t in targets}
        for r in range(rounds):
            order = list(targets[r % len(targets):]) + list(targets[: r % len(targets)])
            for target in order:
                started = time.perf_counter()
                figures, samples = runner.measure(cell, target)
                per_round[target.name].append(figures)
                if samples is not None:
                    pooled[target.name].append(samples)
                print(f"  {cell.title:<17} round {r + 1}/{rounds} {target.name:<8} "
                      f"{figures['rps']:>9.0f} req/s  p50 {figures.get('total_p50', float('nan')) * MS:7.3f} ms"
                      f"  ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
        results[cell.key] = {}
        for target in targets:
            rounds_figures = per_round[target.name]
            if pooled[target.name]:
                summary = _pool(pooled[target.name], cell.stream)
                cpu = median_of([{"cpu_us": f["cpu_us"]} for f in rounds_figures if "cpu_us" in f])
                summary.update(cpu)
            else:
                summary = median_of(rounds_figures)
                summary["requests"] = sum(f["requests"] for f in rounds_figures)
                summary["errors"] = sum(f["errors"] for f in rounds_figures)
            results[cell.key][target.name] = {**summary, "rounds": rounds_figures}
    return results


def _pool(samples: Sequence[Samples], stream: bool) -> dict[str, Any]:
    total = [x for s in samples for x in s.total]
    elapsed = sum(s.elapsed for s in samples)
    figures: dict[str, Any] = {"rps": len(total) / elapsed if elapsed else 0.0, "requests": len(total),
                               "errors": sum(s.errors for s in samples), **latency_figures(total, "total")}
    if stream:
        figures.update(latency_figures([x for s in samples for x in s.ttfb], "ttfb"))
    return figures
