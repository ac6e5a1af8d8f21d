"""The one renderer of what request hooks inject: placement, order, splice, tools."""

import json

from gateway.chain.injection import Exchange, Injection, Item, SystemPart, render
from gateway.proxy.wire import ChatRequest
from plugins.prompts import render_memory_context
from plugins.splice import RECALL_MEMORY_TOOL, splice_messages
from tests.recall.records import hit

SYSTEM = {"role": "system", "content": "You are a tutor."}
USER = {"role": "user", "content": "Recommend a movie"}
MEMORIES = (hit("Likes science fiction", 0.9), hit("Dislikes horror", 0.85))


def request(*messages, **fields):
    return ChatRequest.model_validate({"model": "gpt-4o", "messages": list(messages), **fields})


def memory(template="MEM:\n{{ memoryItems }}", memories=MEMORIES):
    items = tuple(Item(m.record.id, m.record.text, m.score) for m in memories)
    return SystemPart("hybrid_injection", 20, items=items,
                      render=lambda kept: render_memory_context(template, [i.text for i in kept]) if kept else None)


def prefs(text="PREFS"):
    return SystemPart("personalization", 10, render=lambda _: text)


def test_separate_adds_a_message_after_the_first_system_message_and_keeps_it_byte_identical():
    original = request(SYSTEM, USER)
    out = render(original, Injection().with_system(memory()))
    assert out.messages[0] == SYSTEM
    assert out.messages[1] == {"role": "system", "content": "MEM:\n1. Likes science fiction\n2. Dislikes horror"}
    assert out.messages[2] == USER
    assert original.messages == [SYSTEM, USER]  # input untouched
    assert json.dumps(out.to_body()["messages"][0]) == json.dumps(SYSTEM)


def test_without_a_system_message_a_new_one_goes_first():
    out = render(request(USER), Injection().with_system(memory()))
    assert out.messages[0]["role"] == "system" and out.messages[1] == USER


def test_append_adds_to_the_first_system_message_after_a_blank_line():
    out = render(request(SYSTEM, USER), Injection(placement="append").with_system(memory()))
    assert out.messages[0]["content"].startswith("You are a tutor.\n\nMEM:\n1. Likes")
    assert len(out.messages) == 2


def test_append_to_content_parts_adds_a_text_part():
    parts = {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    out = render(request(parts, USER), Injection(placement="append").with_system(memory()))
    assert out.messages[0]["content"][0] == {"type": "text", "text": "Be brief."}
    assert out.messages[0]["content"][1]["text"].startswith("MEM:")


def test_personalization_sits_between_the_system_prompt_and_memories_in_either_order():
    a = render(request(SYSTEM, USER), Injection().with_system(memory()).with_system(prefs()))
    b = render(request(SYSTEM, USER), Injection().with_system(prefs()).with_system(memory()))
    assert a.to_body() == b.to_body()
    assert a.messages[1]["content"].startswith("PREFS\n\nMEM:")
    assert len(a.messages) == 3


def test_a_part_replaced_by_key_renders_once():
    injection = Injection().with_system(memory()).with_system(memory("M2 {{ memoryItems }}", MEMORIES[:1]))
    out = render(request(SYSTEM, USER), injection)
    assert [m["content"] for m in out.messages] == [SYSTEM["content"], "M2 1. Likes science fiction", USER["content"]]


def test_an_empty_injection_returns_the_same_request_object():
    original = request(SYSTEM, USER)
    assert render(original, Injection()) is original
    trimmed_away = Injection().with_system(memory(memories=()))
    assert render(original, trimmed_away) is original


def splice(call_id="call_" + "a" * 24):
    items = (Item(MEMORIES[0].record.id, MEMORIES[0].record.text, 0.9, group="profile", data=MEMORIES[0]),)

    def rendered(kept):
        profiles = [i.data for i in kept if i.group == "profile"]
        return splice_messages(call_id, "movie", profiles, []) if profiles else []

    return Exchange("tool_splice", render=rendered, items=items, tools=(RECALL_MEMORY_TOOL,))


def test_splice_goes_after_the_last_user_message_and_its_tool_is_defined():
    history = [USER, {"role": "assistant", "content": "Dune?"}, {"role": "user", "content": "Another"}]
    out = render(request(SYSTEM, *history), Injection().with_system(memory()).with_exchange(splice()))
    roles = [m["role"] for m in out.messages]
    assert roles == ["system", "system", "user", "assistant", "user", "assistant", "tool"]
    assert out.messages[5]["tool_calls"][0]["id"] == out.messages[6]["tool_call_id"] == "call_" + "a" * 24
    assert out.to_body()["tools"] == [RECALL_MEMORY_TOOL]


def test_an_exchange_trimmed_to_nothing_adds_neither_messages_nor_its_tool():
    injection = Injection().with_exchange(splice())
    emptied = injection.without_item("tool_splice", MEMORIES[0].record.id)
    assert render(request(USER), emptied).to_body() == {"model": "gpt-4o", "messages": [USER]}


def test_client_tools_are_kept_and_ours_appended():
    client_tool = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    mine = {"type": "function", "function": {"name": "memory_search", "parameters": {}}}
    out = render(request(USER, tools=[client_tool]), Injection().with_tool(mine))
    assert out.tools == [client_tool, mine]
