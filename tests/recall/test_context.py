"""The shared injected context and its renderer: placement, undo, order independence."""

import json
from dataclasses import replace

from gateway.proxy.wire import ChatRequest
from gateway.sdk import CallContext
from gateway.proxy.principal import Principal
from plugins.context import MemorySection, SpliceSection, apply, context_of
from plugins.splice import RECALL_MEMORY_TOOL
from tests.recall.records import hit

SYSTEM = {"role": "system", "content": "You are a tutor."}
USER = {"role": "user", "content": "Recommend a movie"}
MEMORIES = (hit("Likes science fiction", 0.9), hit("Dislikes horror", 0.85))


def call():
    return CallContext(request_id="req_1", principal=Principal("k", "alice", "tutor"), original=None, headers={})


def request(*messages, **fields):
    return ChatRequest.model_validate({"model": "gpt-4o", "messages": list(messages), **fields})


def memory():
    return MemorySection("MEM:\n{{ memoryItems }}", MEMORIES)


def test_separate_adds_a_message_after_the_first_system_message_and_keeps_it_byte_identical():
    c = call()
    original = request(SYSTEM, USER)
    out = apply(c, original, replace(context_of(c), memory=memory()))
    assert out.messages[0] == SYSTEM
    assert out.messages[1] == {"role": "system", "content": "MEM:\n1. Likes science fiction\n2. Dislikes horror"}
    assert out.messages[2] == USER
    assert original.messages == [SYSTEM, USER]  # input untouched
    assert json.dumps(out.to_body()["messages"][0]) == json.dumps(SYSTEM)


def test_without_a_system_message_a_new_one_goes_first():
    c = call()
    out = apply(c, request(USER), replace(context_of(c), memory=memory()))
    assert out.messages[0]["role"] == "system" and out.messages[1] == USER


def test_append_adds_to_the_first_system_message_after_a_blank_line():
    c = call()
    out = apply(c, request(SYSTEM, USER), replace(context_of(c), placement="append", memory=memory()))
    assert out.messages[0]["content"].startswith("You are a tutor.\n\nMEM:\n1. Likes")
    assert len(out.messages) == 2


def test_append_to_content_parts_adds_a_text_part():
    c = call()
    parts = {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    out = apply(c, request(parts, USER), replace(context_of(c), placement="append", memory=memory()))
    assert out.messages[0]["content"][0] == {"type": "text", "text": "Be brief."}
    assert out.messages[0]["content"][1]["text"].startswith("MEM:")


def test_personalization_sits_between_the_system_prompt_and_memories_in_either_order():
    results = []
    for order in (("memory", "personalization"), ("personalization", "memory")):
        c = call()
        out = request(SYSTEM, USER)
        for step in order:
            ctx = context_of(c)
            ctx = replace(ctx, memory=memory()) if step == "memory" else replace(ctx, personalization="PREFS")
            out = apply(c, out, ctx)
        results.append(out.to_body())
    assert results[0] == results[1]
    assert results[0]["messages"][1]["content"].startswith("PREFS\n\nMEM:")
    assert len(results[0]["messages"]) == 3


def test_rerendering_replaces_the_previous_injection_also_with_append():
    c = call()
    out = apply(c, request(SYSTEM, USER), replace(context_of(c), placement="append", memory=memory()))
    out = apply(c, out, replace(context_of(c), memory=MemorySection("M2 {{ memoryItems }}", MEMORIES[:1])))
    assert out.messages[0]["content"] == "You are a tutor.\n\nM2 1. Likes science fiction"


def test_an_empty_context_returns_the_same_request_object():
    c = call()
    original = request(SYSTEM, USER)
    assert apply(c, original, context_of(c)) is original


def test_splice_goes_after_the_last_user_message_and_its_tool_is_defined():
    c = call()
    section = SpliceSection("call_" + "a" * 24, "movie", MEMORIES[:1], (), RECALL_MEMORY_TOOL)
    history = [USER, {"role": "assistant", "content": "Dune?"}, {"role": "user", "content": "Another"}]
    out = apply(c, request(SYSTEM, *history), replace(context_of(c), memory=memory(), splice=section))
    roles = [m["role"] for m in out.messages]
    assert roles == ["system", "system", "user", "assistant", "user", "assistant", "tool"]
    assert out.messages[5]["tool_calls"][0]["id"] == out.messages[6]["tool_call_id"] == section.call_id
    assert out.to_body()["tools"] == [RECALL_MEMORY_TOOL]


def test_undo_removes_added_tools_and_leaves_no_tools_field_when_the_client_sent_none():
    c = call()
    section = SpliceSection("call_" + "b" * 24, "movie", MEMORIES[:1], (), RECALL_MEMORY_TOOL)
    out = apply(c, request(USER), replace(context_of(c), splice=section))
    assert "tools" in out.to_body()
    out = apply(c, out, replace(context_of(c), splice=None))
    assert out.to_body() == {"model": "gpt-4o", "messages": [USER]}


def test_client_tools_are_kept_and_ours_appended():
    c = call()
    client_tool = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    mine = {"type": "function", "function": {"name": "memory_search", "parameters": {}}}
    out = apply(c, request(USER, tools=[client_tool]), replace(context_of(c), tools=(mine,)))
    assert out.tools == [client_tool, mine]
    out = apply(c, out, replace(context_of(c), tools=()))
    assert out.tools == [client_tool]


def test_the_context_records_the_latest_request():
    c = call()
    out = apply(c, request(USER), replace(context_of(c), memory=memory()))
    assert context_of(c).request is out
