"""The store benchmark runs end to end on a small size and reports sane figures."""

from __future__ import annotations

import pytest

from gateway.memory.bench_store import parse_args, percentiles, run


def test_percentiles_of_literal_latencies():
    assert percentiles([1.0, 2.0, 3.0, 4.0, 100.0]) == {"p50": 3.0, "p95": 80.8, "n": 5}


def test_unknown_size_is_refused():
    with pytest.raises(SystemExit):
        parse_args(["--sizes", "5k"])


async def test_small_run_measures_latency_and_bytes(redis_url):
    args = parse_args(["--sizes", "1k", "--queries", "20", "--embedding-queries", "0", "--redis-url", redis_url])
    [result] = await run(args)
    assert result["memories"] == 1000 and result["vector_query_ms"]["n"] == 20
    assert 0 < result["vector_query_ms"]["p50"] < 1000 and 500 < result["bytes_per_memory"] < 50_000
