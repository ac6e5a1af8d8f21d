"""The memory_search loop's sans-IO parts: what the client sees of each round."""

import json

import pytest

from plugins.memory_search_loop import StreamRound, ToolCall, parse_search_arguments, round_messages, search_result, split_calls
from tests.recall.records import hit
from tests.recall.streams import CLIENT_CALL_ID, ROUND1_ID, SEARCH_CALL_ID, answer_round, chunks, tool_round


def relay(round_, body):
    out = []
    for chunk in chunks(body):
        out += round_.feed(chunk)
    return out


def test_a_memory_search_only_round_shows_only_the_role_chunk():
    round_ = StreamRound()
    out = relay(round_, tool_round("science fiction"))
    assert len(out) == 1
    assert out[0].data["choices"][0]["delta"] == {"role": "assistant", "content": None, "refusal": None}
    assert round_.needs_tool_round
    call, = round_.calls()
    assert (call.id, call.name, json.loads(call.arguments)) == (SEARCH_CALL_ID, "memory_search", {"query": "science fiction"})
    assert round_.stream_id == ROUND1_ID and round_.saw_usage


def test_text_before_the_call_passes_through_byte_for_byte():
    body = tool_round(text="Let me check.")
    out = relay(StreamRound(), body)
    originals = chunks(body)
    assert out[0].raw == originals[0].raw and out[1].raw == originals[1].raw
    assert out[1].data["choices"][0]["delta"]["content"] == "Let me check."


def test_client_tool_calls_reach_the_client_renumbered_and_the_round_ends():
    round_ = StreamRound()
    out = relay(round_, tool_round(client_call=True))
    calls = [tc for c in out if c.data.get("choices") for tc in c.data["choices"][0]["delta"].get("tool_calls") or []]
    assert calls[0]["id"] == CLIENT_CALL_ID and calls[0]["function"]["name"] == "get_weather"
    assert {tc["index"] for tc in calls} == {0}
    assert "memory_search" not in b"".join(c.raw for c in out).decode()
    assert out[-2].data["choices"][0]["finish_reason"] == "tool_calls"
    assert out[-1].data["choices"] == []  # usage passes
    assert not round_.needs_tool_round


def test_a_continuation_drops_the_role_chunk_and_keeps_the_first_id():
    following = StreamRound(stream_id=ROUND1_ID, continuation=True)
    out = relay(following, answer_round())
    originals = chunks(answer_round())
    assert len(out) == len(originals) - 1  # the role-only first chunk is gone
    assert {c.data["id"] for c in out} == {ROUND1_ID}
    text = "".join(c.data["choices"][0]["delta"].get("content") or "" for c in out if c.data["choices"])
    assert text.startswith("The capital of")
    assert not following.needs_tool_round


def test_out_of_rounds_the_held_finish_says_stop():
    round_ = StreamRound()
    relay(round_, tool_round())
    finish, usage = round_.finish_as_stop()
    assert finish.data["choices"][0]["finish_reason"] == "stop"
    assert usage.data["choices"] == [] and usage.data["usage"]["total_tokens"] == 68


def test_arguments_are_parsed_and_top_k_clamped():
    assert parse_search_arguments('{"query": " films ", "top_k": 50}', 5, 10) == ("films", 10)
    assert parse_search_arguments('{"query": "films", "top_k": "many"}', 5, 10) == ("films", 5)
    for bad in ('{"top_k": 3}', '{"query": ""}', "[1]", "{not json"):
        with pytest.raises(ValueError):
            parse_search_arguments(bad, 5, 10)


def test_non_stream_calls_split_into_ours_and_the_clients_untouched():
    client = {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    ours, theirs = split_calls([{"id": "c1", "type": "function", "function": {"name": "memory_search", "arguments": "{}"}}, client])
    assert [c.id for c in ours] == ["c1"] and theirs == [client]


def test_round_messages_pair_each_call_with_its_result():
    calls = [ToolCall("call_1", "memory_search", '{"query":"a"}'), ToolCall("call_2", "memory_search", '{"query":"b"}')]
    assistant, t1, t2 = round_messages("", calls, ["r1", "r2"])
    assert assistant["content"] is None and [c["id"] for c in assistant["tool_calls"]] == ["call_1", "call_2"]
    assert (t1["tool_call_id"], t1["content"], t2["tool_call_id"]) == ("call_1", "r1", "call_2")


def test_search_results_carry_content_scope_date_and_score():
    result = json.loads(search_result([hit("Likes sci-fi", 0.61234, day="2026-01-03")]))
    assert result == {"memories": [{"content": "Likes sci-fi", "scope": "profile", "date": "2026-01-03", "score": 0.612}]}
