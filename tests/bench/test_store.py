"""The store benchmark runs end to end on a small size and reports sane figures."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from bench.backends import resolve_backends
from bench.store import Options, command, parse_sizes, percentiles, run
from tests.memory.conftest import backend_url


def test_percentiles_of_literal_latencies():
    assert percentiles([1.0, 2.0, 3.0, 4.0, 100.0]) == {"p50": 3.0, "p95": 80.8, "p99": 96.16, "n": 5}


def test_sizes_are_parsed_and_an_unknown_size_is_refused_naming_the_option():
    assert parse_sizes(" 1k,10K ") == ("1k", "10k")
    result = CliRunner().invoke(command, ["--sizes", "5k"])
    assert result.exit_code == 2
    assert "--sizes" in result.output and "5k" in result.output


async def test_small_run_measures_latency_and_bytes(redis_url):
    options = Options(sizes=("1k",), queries=20, embedding_queries=0, redis_url=redis_url)
    [result] = await run(options)
    assert result["memories"] == 1000 and result["vector_query_ms"]["n"] == 20
    assert 0 < result["vector_query_ms"]["p50"] < 1000 and 500 < result["bytes_per_memory"] < 50_000


async def test_the_cluster_run_measures_a_plain_node_and_clusters_of_1_and_3_primaries():
    options = Options(sizes=("1k",), queries=20, embedding_queries=0, cluster=True, tenants=30, concurrency=4)
    results = await run(options)
    assert [r["cluster_primaries"] for r in results] == [0, 1, 3]
    for result in results:
        assert result["memories"] == 1000 and result["tenants"] == 30 and result["insert_per_s"] > 0
        assert result["vector_query_ms"]["n"] == 20 and result["hybrid_query_ms"]["per_s"] > 0

def test_backend_choice_follows_what_the_server_offers(redis_url):
    """The session's Redis has vector sets and no Query Engine: auto runs vectorset only,
    and asking for search is refused naming the option."""
    assert resolve_backends(redis_url, "auto") == ["vectorset"]
    assert resolve_backends(None, "auto") == ["vectorset"]
    for url in (redis_url, None):
        with pytest.raises(click.UsageError, match="--backend search"):
            resolve_backends(url, "search")


async def test_both_backends_side_by_side_with_many_tenants_on_a_query_engine(redis_url):
    url = backend_url("search", redis_url)  # skips without MEMGATE_TEST_SEARCH_REDIS_URL
    options = Options(sizes=("1k",), queries=20, embedding_queries=0, redis_url=url, tenants=50)
    results = await run(options)
    assert [(r["backend"], r["tenants"], r["memories"]) for r in results] == [
        ("vectorset", 50, 1000), ("search", 50, 1000)]
    assert all(r["vector_query_ms"]["n"] == r["hybrid_query_ms"]["n"] == 20 for r in results)
