"""Percentiles and the figures of one bench cell.

Percentiles interpolate linearly between closest ranks (numpy's default ``linear``
method, Hyndman & Fan type 7). Times are kept in seconds and shown in milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def latency_figures(samples: Sequence[float], prefix: str) -> dict[str, float]:
    """``{prefix}_p50``, ``_p90``, ``_p99``, ``_mean`` in seconds."""
    if not samples:
        return {}
    return {
        f"{prefix}_p50": percentile(samples, 50),
        f"{prefix}_p90": percentile(samples, 90),
        f"{prefix}_p99": percentile(samples, 99),
        f"{prefix}_mean": sum(samples) / len(samples),
    }


def median_of(rounds: Sequence[dict[str, float]]) -> dict[str, float]:
    """Key by key, the median over rounds (keys present in every round)."""
    if not rounds:
        return {}
    keys = set(rounds[0]).intersection(*rounds[1:])
    return {k: median(r[k] for r in rounds) for k in sorted(keys)}
