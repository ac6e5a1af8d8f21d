"""The spliced recall_memory call: ids, message validity, the seed 002 result shape."""

import json
import re

from plugins.splice import RECALL_MEMORY_TOOL, new_call_id, recall_payload, splice_messages
from tests.recall.records import hit


def test_call_ids_look_like_openais():
    ids = {new_call_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", i) for i in ids)


def test_the_messages_are_a_valid_tool_call_chain():
    call_id = new_call_id()
    assistant, tool = splice_messages(call_id, "推荐个电影吧", [hit("喜欢科幻电影", 0.7)], [])
    assert assistant["role"] == "assistant" and assistant["content"] is None
    (call,) = assistant["tool_calls"]
    assert call == {"id": call_id, "type": "function",
                    "function": {"name": "recall_memory", "arguments": json.dumps({"query": "推荐个电影吧"}, ensure_ascii=False)}}
    assert json.loads(call["function"]["arguments"]) == {"query": "推荐个电影吧"}
    assert tool["role"] == "tool" and tool["tool_call_id"] == call_id
    assert RECALL_MEMORY_TOOL["function"]["name"] == call["function"]["name"]


def test_the_result_has_seed_002s_shape_with_events_in_date_order():
    profiles = [hit("互联网公司产品经理", 0.8, day="2026-01-05", metadata={"topic": "职业"}),
                hit("喜欢科幻电影", 0.6, day="2026-01-03", type="preference")]
    events = [hit("最近熬夜较多", 0.7, scope="event", friend="tutor", day="2026-01-04"),
              hit("工作压力大", 0.6, scope="event", friend="tutor", day="2026-01-02")]
    assert recall_payload(profiles, events) == {
        "profiles": [{"topic": "职业", "content": "互联网公司产品经理", "updated_at": "2026-01-05"},
                     {"topic": "preference", "content": "喜欢科幻电影", "updated_at": "2026-01-03"}],
        "events": [{"date": "2026-01-02", "content": "工作压力大"}, {"date": "2026-01-04", "content": "最近熬夜较多"}],
    }


def test_the_recall_agent_cuts_on_calibrated_relevance_when_the_store_has_it():
    """Seed 002's similarity_threshold reads P(related) when present, else the cosine: a
    Chinese pair under multilingual-e5 scores a high cosine and a low relevance."""
    from gateway.memory.records import ScoredMemory
    from plugins.recall_agent import Found
    from tests.recall.records import record

    unrelated = ScoredMemory(record=record("养了一只橘猫"), score=0.9, similarity=0.86, relevance=0.12)
    related = ScoredMemory(record=record("Alice is allergic to peanuts"), score=0.4, similarity=0.41, relevance=0.74)
    uncalibrated = ScoredMemory(record=record("Alice lives in Porto"), score=0.6, similarity=0.6)
    found = Found()
    found.add([unrelated, related, uncalibrated], found.profiles, 0.5)
    assert set(found.profiles) == {related.record.id, uncalibrated.record.id}
    assert [h.record.id for h in found.best("profiles", 5)] == [related.record.id, uncalibrated.record.id]
    weaker = related.model_copy(update={"relevance": 0.6})
    found.add([weaker], found.profiles, 0.5)
    assert found.profiles[related.record.id].relevance == 0.74  # the strongest hit per memory is kept
