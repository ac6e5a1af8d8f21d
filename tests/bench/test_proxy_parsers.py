"""The benchmark scripts' pure parts, with literal inputs (their figures depend on them)."""

import json

import numpy as np
import pytest

from bench.proxy.loadgen import ResponseParser
from bench.proxy.stats import percentile
from bench.proxy.wrk import _MARK, parse_output


@pytest.mark.parametrize("q", [0, 50, 90, 99, 100])
def test_percentile_matches_numpys_linear_method(q):
    values = [0.3, 0.1, 0.7, 0.2, 0.9, 0.4, 0.05]
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_percentile_of_nothing_is_nan():
    assert percentile([], 50) != percentile([], 50)


def feed_all(parser, data: bytes, step: int) -> bytes:
    rest = b""
    for i in range(0, len(data), step):
        rest += parser.feed(data[i:i + step])
    return rest


@pytest.mark.parametrize("step", [1, 3, 1000])
def test_chunked_response_ends_at_the_last_chunk_whatever_the_reads(step):
    body = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    parser = ResponseParser()
    assert feed_all(parser, body, step) == b""
    assert parser.status == 200 and parser.body_started and parser.done


@pytest.mark.parametrize("step", [1, 7, 1000])
def test_content_length_response_ends_at_its_length(step):
    body = b"HTTP/1.1 429 Too Many Requests\r\ncontent-length: 4\r\n\r\nnope"
    parser = ResponseParser()
    feed_all(parser, body, step)
    assert parser.status == 429 and parser.done


def test_incomplete_response_is_not_done():
    parser = ResponseParser()
    parser.feed(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")
    assert parser.body_started and not parser.done


def test_wrk_result_line_is_parsed_and_errors_added_up():
    line = _MARK + json.dumps({"duration_us": 2_000_000, "requests": 5000, "connect": 0, "read": 1, "write": 0,
                               "status": 10, "timeout": 2, "p50_us": 1500, "p90_us": 3000, "p99_us": 9000,
                               "mean_us": 1800})
    result = parse_output("Running 2s test\n" + line + "\n")
    assert result.rps == pytest.approx((5000 - 10) / 2.0)
    assert result.errors == 13 and result.p99 == pytest.approx(0.009)
    with pytest.raises(ValueError):
        parse_output("no result here")
