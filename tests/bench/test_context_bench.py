"""``python -m bench irc-convert`` and the pieces of ``python -m bench context`` that turn
a reply's window into a request and read the kept messages back."""

from __future__ import annotations

from bench.context import _aligned, request_message
from bench.irc_data import convert

RAW = """[11:58] <alice> my wifi drops every minute\x0c\x85
=== bob [~b@host] has joined #ubuntu
[11:59] <bob> alice: which driver?
[12:01]  * carol waves
[01:02] <alice> bob: iwlwifi
"""
ANNOTATION = "0 0 -\n0 2 -\n2 4 -\n3 3 -\n"


def test_convert_reads_messages_actions_system_lines_links_and_wrapping_12_hour_times():
    channel = convert(RAW, ANNOTATION, "2005-08-08_12", lines=5, annotated_from=2)
    rows = channel["messages"]
    assert [(m["speaker"], m["system"]) for m in rows] == [
        ("alice", False), ("", True), ("bob", False), ("carol", False), ("alice", False)]
    assert rows[3]["text"] == "/me waves"
    assert [m["parents"] for m in rows] == [[], [], [0], [], [2]]
    assert [m["annotated"] for m in rows] == [False, False, True, True, True]
    assert rows[3]["starts_thread"] is True and rows[4]["starts_thread"] is False
    # a 12-hour log: 12:01 -> 01:02 is an hour later, not eleven earlier; line 2 at the file's hour
    assert rows[2]["ts"] == "2005-08-08T12:00:00Z"
    assert rows[4]["ts"] == "2005-08-08T13:03:00Z"


def test_requests_carry_the_way_of_sending_and_kept_messages_are_read_back_in_order():
    window = [{"id": i, "speaker": s, "text": t, "ts": "2005-08-08T12:00:00Z"}
              for i, (s, t) in enumerate([("a", "!paste"), ("b", "hi"), ("a", "!paste"), ("c", "q")])]
    assert request_message(window[0], "ids+ts")["memgate"] == {"id": "0", "ts": "2005-08-08T12:00:00+00:00"}
    assert request_message(window[0], "ts")["memgate"] == {"ts": "2005-08-08T12:00:00+00:00"}
    assert "memgate" not in request_message(window[0], "none")
    sent = [{"role": "user", "name": "a", "content": "!paste"}, {"role": "user", "name": "c", "content": "q"}]
    assert _aligned(window, sent) == [2]  # of two identical messages, the later one
