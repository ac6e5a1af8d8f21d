"""The Responses request as the chain sees it and the chain's edits mapped back
(gateway.routes.responses_wire), without a server: the cases the end-to-end tests do not
reach (a spliced tool exchange, dropped turns, messages at a depth, the conversation)."""

from __future__ import annotations

from gateway.chain.injection import Exchange, Injection, Item, SystemPart, render
from gateway.routes.responses_wire import apply_edits, chain_view, check_request, referenced_items

RECALL_TOOL = {"type": "function", "function": {"name": "recall_memory", "parameters": {"type": "object", "properties": {}}}}
ITEMS = [
    {"role": "user", "content": "first question"},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "first answer", "annotations": []}]},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}", "id": "fc_1"},
    {"type": "function_call", "call_id": "c2", "name": "get_time", "arguments": "{}", "id": "fc_2"},
    {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "noon"}]},
    {"role": "user", "content": [{"type": "input_text", "text": "and now?"}, {"type": "input_image", "image_url": "x"}]},
]
BODY = {"model": "gpt-4.1", "instructions": "Be brief.", "input": ITEMS, "store": False, "max_output_tokens": 50,
        "conversation": {"id": "conv_9"}}


def test_the_view_is_chat_shaped():
    view = chain_view(BODY)
    messages = view.request.messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "assistant", "tool", "tool", "user"]
    assert messages[0]["content"] == "Be brief." and view.origins[0] is None
    assert messages[2]["content"] == [{"type": "text", "text": "first answer"}]
    assert [c["id"] for c in messages[3]["tool_calls"]] == ["c1", "c2"]  # consecutive calls: one message
    assert view.origins[3] == [2, 3, 4]  # the reasoning item travels with the calls after it
    assert messages[5]["content"] == "noon"
    assert messages[6]["content"][1] == {"type": "input_image", "image_url": "x"}
    assert view.request.max_completion_tokens == 50
    assert view.request.model_extra["metadata"] == {"conversation_id": "conv_9"}


def test_an_unchanged_request_maps_to_none():
    view = chain_view(BODY)
    assert apply_edits(BODY, view, view.request, Injection()) is None


def test_a_spliced_exchange_becomes_function_call_items_and_its_tool_a_responses_tool():
    view = chain_view(BODY)
    exchange = Exchange("tool_splice", lambda items: [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_r", "type": "function", "function": {"name": "recall_memory", "arguments": '{"q":"x"}'}}]},
        {"role": "tool", "tool_call_id": "call_r", "content": "memories"},
    ], items=(Item("m1", "memories", 0.9),), tools=(RECALL_TOOL,))
    injection = Injection(system=(SystemPart("p", 10, render=lambda items: "PROFILE"),), exchanges=(exchange,))
    out = apply_edits(BODY, view, render(view.request, injection), injection)
    assert out is not None
    assert out["instructions"] == "Be brief.\n\nPROFILE"
    assert out["input"] == [*ITEMS, {"type": "function_call", "call_id": "call_r", "name": "recall_memory", "arguments": '{"q":"x"}'},
                            {"type": "function_call_output", "call_id": "call_r", "output": "memories"}]
    assert out["tools"] == [{"type": "function", "name": "recall_memory", "parameters": {"type": "object", "properties": {}},
                             "strict": False}]
    assert out["store"] is False and list(out)[:3] == ["model", "instructions", "input"]  # the client's order


def test_dropped_turns_drop_their_items_and_new_messages_become_items():
    view = chain_view(BODY)
    messages = view.request.messages
    kept = [messages[0], messages[1], {"role": "system", "content": "lore at depth"}, messages[6]]  # tool pair dropped
    out = apply_edits(BODY, view, view.request.model_copy(update={"messages": kept}), Injection())
    assert out is not None and out["instructions"] == "Be brief."
    assert out["input"] == [ITEMS[0], {"type": "message", "role": "system", "content": "lore at depth"}, ITEMS[7]]


def test_a_string_input_stays_a_string_when_only_instructions_change():
    body = {"model": "gpt-4.1", "input": "hello"}
    view = chain_view(body)
    injection = Injection(system=(SystemPart("m", 20, render=lambda items: "MEMORIES"),))
    out = apply_edits(body, view, render(view.request, injection), injection)
    assert out == {"model": "gpt-4.1", "input": "hello", "instructions": "MEMORIES"}


def test_stored_items_an_input_names_and_a_reference_without_type():
    """Every ``id`` and ``approval_request_id`` names a stored item; ``{"id"}`` alone is an
    item reference (the API's ``type`` is optional there): it has no chat form and travels
    with the next message."""
    items = [
        {"id": "msg_1"},
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
        {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
    ]
    body = {"model": "gpt-4.1", "input": items}
    check_request(body)
    assert referenced_items(items) == [("msg_1", "input[0].id"), ("rs_1", "input[2].id"),
                                       ("mcpr_1", "input[3].approval_request_id")]
    view = chain_view(body)
    assert [m["role"] for m in view.request.messages] == ["user", "tool"]
    assert view.origins == [[0, 1], [2, 3, 4]]
