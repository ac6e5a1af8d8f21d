"""``python -m bench proxy``: what the gateway adds to a fast upstream, and LiteLLM for scale.

Every cell sends the same requests to the fixed-body upstream directly (``direct``),
through memgate with every plugin off (``memgate``) and, when installed, through
LiteLLM's proxy on the same upstream (``litellm``); see :mod:`bench.proxy.targets`.

Cells (``C`` is ``--concurrency``, 64 by default):

==================  =====================  ==========================================
cell                load generator         figures
==================  =====================  ==========================================
non-stream, c=1     Python client          p50/p99 latency, added p50/p99, requests/s
non-stream, c=C     wrk (``--duration``)   requests/s, p50/p99 latency
stream, c=1         Python client          TTFB p50/p99 (first body byte), full p50
stream, c=C         wrk                    requests/s
==================  =====================  ==========================================

Added latency is ``target - direct`` per percentile. Targets are run interleaved, in a
rotating order, for ``--rounds`` rounds (the machine is shared and noisy): client cells
pool their samples over rounds, wrk cells report the median round. The checks printed
at the end are issue 2's targets for the gateway with plugins off: added p50 <= 1 ms and
p99 <= 5 ms at c=1, >= 2,500 requests/s at c=64, stream TTFB p50 within 1 ms of direct.

Upstream: nginx (one worker, bodies compiled into its config) when installed, else the
built-in asyncio server (slower; the output says so). Throughput cells use ``wrk`` when
installed, else the Python client with ``C`` connections (may be the bottleneck).

``--profile OUT`` runs py-spy on the gateway during one extra, unmeasured run of
``--profile-cell`` (default ``plain_cC``) after the measurements (``.svg`` flame graph,
``.json`` speedscope, ``.txt`` collapsed stacks).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import click

from bench.proxy.bodies import DEFAULT_SSE_FIXTURE, load_bodies
from bench.proxy.cells import Cell, Plan, Runner, cells_for, run_cells
from bench.proxy.nginx import nginx_binary, start_nginx
from bench.proxy.process import Child, ChildError, free_port
from bench.proxy.report import added, checks, render_table
from bench.proxy.targets import (
    Target,
    direct_target,
    find_litellm,
    start_gateway,
    start_litellm,
)
from bench.proxy.upstream import start_builtin
from bench.proxy.wrk import wrk_binary


@dataclass(frozen=True)
class Options:
    """One run's settings; defaults are the command line's (``python -m bench proxy --help``)."""

    requests: int = 2000
    concurrency: int = 64
    duration: float = 4.0
    warmup: int = 200
    rounds: int = 2
    high_requests: int = 20000
    targets: str = "direct,memgate,litellm"
    cells: str = "plain_c1,plain_cC,sse_c1,sse_cC"
    litellm_cmd: str | None = None
    no_nginx: bool = False
    no_wrk: bool = False
    sse_fixture: Path = DEFAULT_SSE_FIXTURE
    profile: Path | None = None
    profile_cell: str = "plain_cC"
    fail_on_miss: bool = False
    json_out: Path | None = None
    keep_dir: bool = False


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = (done.stdout + done.stderr).strip().splitlines()
    return text[0] if text else "?"


def profile_gateway(runner: Runner, cell: Cell, target: Target, out: Path, duration: float) -> str:
    """py-spy on the gateway during one extra run of ``cell``; a status line."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not os.access(py_spy, os.X_OK):
        return "profile skipped: py-spy not installed (pip install py-spy)"
    fmt = {".json": "speedscope", ".txt": "raw"}.get(out.suffix, "flamegraph")
    spy = Child("py-spy", [py_spy, "record", "--pid", str(target.pid), "-o", str(out), "-f", fmt,
                           "-d", str(int(duration) + 1), "-r", "200"], runner.workdir / "py-spy.out")
    time.sleep(0.5)
    if cell.high:
        runner.measure(cell, target)
    else:  # a c=1 cell: keep requests coming for the whole py-spy run
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline and spy.proc.poll() is None:
            runner.client(cell, target, 500, 0)
    spy.proc.wait(timeout=duration + 60)
    spy.stop()
    return f"py-spy profile ({fmt}) of the gateway during {cell.title}: {out}"


def main(args: Options) -> int:
    """One run of ``python -m bench proxy``; returns the exit status (0; 1 set-up failed;
    2 nothing to measure; 3 a target missed with ``fail_on_miss``)."""
    plan = Plan(args.requests, args.concurrency, args.duration, args.warmup, max(1, args.rounds), args.high_requests)
    wanted = [t.strip() for t in args.targets.split(",") if t.strip()]
    cells = cells_for(plan, [c.strip() for c in args.cells.split(",")])
    try:
        bodies = load_bodies(args.sse_fixture)
    except FileNotFoundError as exc:
        print(f"cannot read the SSE fixture: {exc}", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="memgate-bench-proxy-"))
    notes: list[str] = []
    skipped: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        if not args.keep_dir:
            stack.callback(shutil.rmtree, workdir, True)
        else:
            notes.append(f"temp dir kept: {workdir}")
        try:
            up_port = free_port()
            nginx = None if args.no_nginx else nginx_binary()
            if nginx:
                upstream = start_nginx(nginx, workdir / "nginx", up_port, bodies)
                upstream_desc = f"nginx ({_version([nginx, '-v']).replace('nginx version: ', '')}, 1 worker, fixed bodies)"
            else:
                upstream = start_builtin(up_port, workdir, args.sse_fixture)
                upstream_desc = "built-in asyncio server (nginx not installed or --no-nginx: expect lower direct figures)"
                notes.append("upstream is the built-in Python server, not nginx")
            stack.callback(upstream.stop)
            wrk = None if args.no_wrk else wrk_binary()
            load_desc = (f"wrk ({_version([wrk, '-v']).split(' [')[0]}, 1 thread) for c={plan.concurrency}, "
                         if wrk else f"Python client for c={plan.concurrency} (wrk not installed or --no-wrk: "
                         "the client may be the bottleneck), ") + "Python client for c=1"
            targets: list[Target] = []
            if "direct" in wanted:
                targets.append(direct_target(up_port, upstream))
            if "memgate" in wanted:
                print("starting memgate ...", file=sys.stderr)
                gateway = start_gateway(up_port, workdir / "memgate")
                stack.callback(gateway.child.stop)  # type: ignore[union-attr]
                targets.append(gateway)
            if "litellm" in wanted:
                command, how = find_litellm(args.litellm_cmd)
                if command is None:
                    skipped["litellm"] = how
                else:
                    print(f"starting litellm: {how} ...", file=sys.stderr)
                    try:
                        lite = start_litellm(command, up_port, workdir / "litellm")
                        stack.callback(lite.child.stop)  # type: ignore[union-attr]
                        targets.append(lite)
                        notes.extend(lite.notes)
                    except ChildError as exc:
                        skipped["litellm"] = f"did not start: {str(exc)[:1500]}"
        except ChildError as exc:
            print(f"bench set-up failed: {exc}", file=sys.stderr)
            return 1
        if not targets:
            print(f"nothing to measure: {skipped or 'no target selected'}", file=sys.stderr)
            return 2
        runner = Runner(plan, bodies, workdir, wrk)
        load = os.getloadavg()
        results = run_cells(runner, cells, targets, plan.rounds)
        extra = added(results)
        rows = checks(plan, results, extra)
        profile_note = None
        if args.profile is not None:
            gw = next((t for t in targets if t.name == "memgate"), None)
            cell = next(iter(cells_for(plan, [args.profile_cell])), None)
            if gw is None or cell is None:
                profile_note = "profile skipped: memgate not run or unknown --profile-cell"
            else:
                profile_note = profile_gateway(runner, cell, gw, args.profile, plan.duration)
    names = [t.name for t in targets]
    print()
    print(f"python -m bench proxy: upstream {upstream_desc}")
    print(f"load: {load_desc}; {plan.requests} requests per c=1 run, {plan.duration:g} s per wrk run, "
          f"{plan.rounds} interleaved rounds; {os.cpu_count()} CPUs, load average {load[0]:.2f}")
    print()
    print(render_table(cells, names, results, extra))
    errors = {f"{c}/{n}": f["errors"] for c, by in results.items() for n, f in by.items() if f.get("errors")}
    if errors:
        print(f"\nerrors (non-200 or transport): {errors}")
    if rows:
        print("\ntargets for memgate with plugins off (issue 2):")
        for row in rows:
            print(f"  {'MET    ' if row['met'] else 'NOT MET'} {row['target']}: {row['value']:,.3f} {row['unit']}")
    for name, reason in skipped.items():
        print(f"\n{name} skipped: {reason}")
    for note in notes + ([profile_note] if profile_note else []):
        print(f"note: {note}")
    if args.json_out is not None:
        args.json_out.write_text(json.dumps({
            "upstream": upstream_desc, "load": load_desc, "plan": plan.__dict__,
            "machine": {"cpus": os.cpu_count(), "loadavg_at_start": load, "python": platform.python_version()},
            "targets": names, "cells": {c.key: c.title for c in cells}, "results": results,
            "added": extra, "checks": rows, "skipped": skipped, "notes": notes,
        }, indent=2))
        print(f"JSON written to {args.json_out}")
    return 3 if args.fail_on_miss and not all(r["met"] for r in rows) else 0


_PATH = click.Path(dir_okay=False, path_type=Path)


@click.command("proxy")
@click.option("--requests", type=int, default=2000, show_default=True, help="Requests per c=1 cell and round.")
@click.option("--concurrency", type=int, default=64, show_default=True, help="Connections of the throughput cells.")
@click.option("--duration", type=float, default=4.0, show_default=True, help="Seconds per wrk run.")
@click.option("--warmup", type=int, default=200, show_default=True,
              help="Unrecorded requests before each c=1 run; wrk warms up 1 s per target.")
@click.option("--rounds", type=int, default=2, show_default=True, help="Interleaved rounds over the targets.")
@click.option("--high-requests", type=int, default=20000, show_default=True, help="Requests per throughput run without wrk.")
@click.option("--targets", default="direct,memgate,litellm", show_default=True, help="Comma list of direct, memgate, litellm.")
@click.option("--cells", default="plain_c1,plain_cC,sse_c1,sse_cC", show_default=True,
              help="Comma list of plain_c1, plain_cC, sse_c1, sse_cC.")
@click.option("--litellm-cmd", default=None, help="LiteLLM proxy command (default: `litellm` on PATH, or the importable module).")
@click.option("--no-nginx", is_flag=True, help="Use the built-in upstream even if nginx is installed.")
@click.option("--no-wrk", is_flag=True, help="Use the Python client for throughput cells too.")
@click.option("--sse-fixture", type=_PATH, default=DEFAULT_SSE_FIXTURE, help="Recorded SSE body the upstream streams.")
@click.option("--profile", type=_PATH, default=None, help="py-spy output for the gateway under load (see the module docstring).")
@click.option("--profile-cell", default="plain_cC", show_default=True, help="Cell run under py-spy.")
@click.option("--fail-on-miss", is_flag=True, help="Exit 3 when a target of issue 2 is not met.")
@click.option("--json", "json_out", type=_PATH, default=None, help="Write all figures as JSON here.")
@click.option("--keep-dir", is_flag=True, help="Keep the temp dir (configs, logs).")
def command(**settings: object) -> None:
    """Gateway overhead (plugins off) vs direct upstream, LiteLLM for scale when installed."""
    raise SystemExit(main(Options(**settings)))  # type: ignore[arg-type]
