"""The report of ``python -m bench proxy``: added latency, issue 2's checks, the table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.proxy.cells import MS, Cell, Plan


def added(results: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, dict[str, float]]]:
    """``{cell: {target: {added_<metric>: target - direct}}}`` for latency percentiles."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for cell, by_target in results.items():
        direct = by_target.get("direct")
        if direct is None:
            continue
        for name, figures in by_target.items():
            if name == "direct":
                continue
            out.setdefault(cell, {})[name] = {
                f"added_{m}": figures[m] - direct[m]
                for m in ("total_p50", "total_p99", "ttfb_p50", "ttfb_p99")
                if m in figures and m in direct
            }
    return out


def checks(plan: Plan, results: dict[str, Any], extra: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 2's targets for memgate (plugins off); a check is skipped if its cell was not run."""
    gw = "memgate"
    rows = []

    def check(name: str, cell: str, source: dict[str, Any], metric: str, limit: float, at_most: bool, unit: str) -> None:
        value = source.get(cell, {}).get(gw, {}).get(metric)
        if value is None:
            return
        scale = MS if unit == "ms" else 1.0
        ok = value * scale <= limit if at_most else value * scale >= limit
        rows.append({"target": name, "value": value * scale, "limit": limit, "unit": unit, "met": ok})

    check("added p50 <= 1 ms (non-stream c=1)", "plain_c1", extra, "added_total_p50", 1.0, True, "ms")
    check("added p99 <= 5 ms (non-stream c=1)", "plain_c1", extra, "added_total_p99", 5.0, True, "ms")
    check(f">= 2500 req/s (non-stream c={plan.concurrency})", "plain_cC", results, "rps", 2500.0, False, "req/s")
    check("stream TTFB p50 within 1 ms of direct (c=1)", "sse_c1", extra, "added_ttfb_p50", 1.0, True, "ms")
    return rows


_ROWS = [
    ("plain_c1", [("p50 ms", "total_p50", True), ("p99 ms", "total_p99", True),
                  ("added p50 ms", "added_total_p50", True), ("added p99 ms", "added_total_p99", True),
                  ("req/s", "rps", False), ("CPU us/req", "cpu_us", False)]),
    ("plain_cC", [("req/s", "rps", False), ("p50 ms", "total_p50", True), ("p99 ms", "total_p99", True),
                  ("CPU us/req", "cpu_us", False)]),
    ("sse_c1", [("TTFB p50 ms", "ttfb_p50", True), ("TTFB p99 ms", "ttfb_p99", True),
                ("added TTFB p50 ms", "added_ttfb_p50", True), ("added TTFB p99 ms", "added_ttfb_p99", True),
                ("full p50 ms", "total_p50", True), ("added full p50 ms", "added_total_p50", True),
                ("CPU us/req", "cpu_us", False)]),
    ("sse_cC", [("req/s", "rps", False), ("p50 ms", "total_p50", True), ("p99 ms", "total_p99", True),
                ("CPU us/req", "cpu_us", False)]),
]


def render_table(cells: Sequence[Cell], names: Sequence[str], results: dict[str, Any], extra: dict[str, Any]) -> str:
    titles = {c.key: c.title for c in cells}
    width = 12
    lines = [f"{'':<18}{'':<19}" + "".join(f"{n:>{width}}" for n in names)]
    for cell_key, rows in _ROWS:
        if cell_key not in results:
            continue
        for i, (label, metric, is_time) in enumerate(rows):
            head = titles[cell_key] if i == 0 else ""
            values = []
            for name in names:
                source = extra.get(cell_key, {}).get(name, {}) if metric.startswith("added_") else results[cell_key].get(name, {})
                value = source.get(metric)
                if value is None:
                    values.append(f"{'-':>{width}}")
                elif is_time:
                    values.append(f"{value * MS:>{width}.3f}")
                else:
                    values.append(f"{value:>{width},.0f}")
            lines.append(f"{head:<18}{label:<19}" + "".join(values))
    return "\n".join(lines)
