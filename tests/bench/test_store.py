"""The store benchmark runs end to end on a small size and reports sane figures."""

from __future__ import annotations

from click.testing import CliRunner

from bench.store import Options, command, parse_sizes, percentiles, run


def test_percentiles_of_literal_latencies():
    assert percentiles([1.0, 2.0, 3.0, 4.0, 100.0]) == {"p50": 3.0, "p95": 80.8, "n": 5}


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
