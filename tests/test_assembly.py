"""Assembling the whole reply from recorded streams and from a completion body."""

import json

from gateway.proxy.assembly import ReplyAssembler, reply_from_completion
from gateway.proxy.sse import SSEDecoder
from tests.support.upstream_double import COMPLETION, fixture


def assemble(name: str):
    assembler = ReplyAssembler()
    decoder = SSEDecoder()
    deltas = []
    for event in decoder.feed(fixture(name)):
        if event.data and event.data != "[DONE]":
            payload = json.loads(event.data)
            assembler.add(payload)
            for choice in payload["choices"]:
                deltas.append(choice["delta"].get("content") or "")
    return assembler.build(), "".join(deltas)


def test_text_equals_concatenated_deltas_and_usage_is_kept():
    reply, deltas = assemble("text_with_usage")
    assert reply.text == deltas
    assert reply.text.startswith("I'm unable to provide real-time weather updates.")
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage == {"prompt_tokens": 14, "completion_tokens": 30, "total_tokens": 44,
                           "completion_tokens_details": {"reasoning_tokens": 0}}


def test_fragmented_tool_call_arguments_are_joined():
    reply, _ = assemble("single_tool_call_with_usage")
    (call,) = reply.choices[0].tool_calls
    assert call["id"].startswith("call_") and call["type"] == "function"
    assert json.loads(call["function"]["arguments"])  # complete JSON
    assert reply.choices[0].finish_reason == "tool_calls"


def test_parallel_tool_calls_are_kept_apart_by_index():
    reply, _ = assemble("parallel_tool_calls_with_usage")
    calls = reply.choices[0].tool_calls
    assert len(calls) == 2
    args = [json.loads(c["function"]["arguments"]) for c in calls]
    assert args[0] != args[1]
    assert len({c["id"] for c in calls}) == 2


def test_capture_is_capped_and_marked_truncated():
    assembler = ReplyAssembler(max_chars=10)
    for piece in ["hello ", "world ", "again"]:
        assembler.add({"choices": [{"index": 0, "delta": {"content": piece}}]})
    reply = assembler.build(cancelled=True)
    assert reply.text == "hello worl" and reply.truncated and reply.cancelled


def test_reply_from_completion_body():
    reply = reply_from_completion(COMPLETION)
    assert reply.text == COMPLETION["choices"][0]["message"]["content"]
    assert reply.usage["total_tokens"] == 1163 and not reply.stream
