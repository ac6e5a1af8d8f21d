"""The sans-IO SSE decoder, fed literal bytes and the recorded OpenAI streams."""

import random

import pytest

from gateway.proxy.sse import SSEDecoder
from tests.support.upstream_double import FIXTURES

STREAMS = sorted(p.stem for p in FIXTURES.glob("*.sse"))


def decode_all(data: bytes, sizes: list[int] | None = None):
    decoder = SSEDecoder()
    events = []
    if sizes is None:
        events += decoder.feed(data)
    else:
        pos = 0
        for n in sizes:
            events += decoder.feed(data[pos:pos + n])
            pos += n
        events += decoder.feed(data[pos:])
    return events + decoder.flush()


@pytest.mark.parametrize("name", STREAMS)
def test_raw_bytes_of_events_concatenate_to_the_stream(name):
    data = (FIXTURES / f"{name}.sse").read_bytes()
    events = decode_all(data)
    assert b"".join(e.raw for e in events) == data
    if name.startswith("responses_"):  # the Responses API ends on its terminal event, no [DONE]
        assert events[-1].event == "response.completed"
    else:
        assert events[-1].data == "[DONE]"
    assert all(e.complete for e in events)


@pytest.mark.parametrize("name", STREAMS)
def test_events_split_across_reads_decode_the_same(name):
    data = (FIXTURES / f"{name}.sse").read_bytes()
    whole = decode_all(data)
    rng = random.Random(7)
    for _ in range(30):
        sizes = [rng.randint(1, 40) for _ in range(len(data) // 10)]
        assert decode_all(data, sizes) == whole


def test_crlf_and_cr_line_endings():
    lf = b"data: a\n\ndata: b\ndata: c\n\n"
    for ending in (b"\r\n", b"\r"):
        events = decode_all(lf.replace(b"\n", ending))
        assert [e.data for e in events] == ["a", "b\nc"]


def test_crlf_split_between_reads_is_one_line_break():
    events = decode_all(b"data: x\r\n\r\n", sizes=[8, 1, 1])
    assert [e.data for e in events] == ["x"]
    assert events[0].raw == b"data: x\r\n\r\n"


def test_several_events_in_one_read_comments_and_fields():
    data = b": keep-alive\n\nevent: delta\nid: 7\ndata:{\"a\":1}\n\ndata: [DONE]\n\n"
    events = decode_all(data)
    assert [e.data for e in events] == [None, '{"a":1}', "[DONE]"]
    assert events[1].event == "delta" and events[1].id == "7"
    assert events[0].raw == b": keep-alive\n\n"


def test_unterminated_tail_is_returned_incomplete_at_flush():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: 1\n\ndata: par") [0].data == "1"
    tail = decoder.flush()
    assert tail[0].raw == b"data: par" and not tail[0].complete
