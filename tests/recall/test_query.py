"""auto_recall's pure parts: the query rule and the high/low split."""

import pytest

from plugins.auto_recall import AutoRecallConfig, RecallResult, build_query, is_follow_up, recall_annotation, split_by_relevance
from tests.recall.records import hit


def user(text):
    return {"role": "user", "content": text}


def test_the_query_is_the_last_user_message():
    messages = [user("I moved to Berlin last year and I love it"), {"role": "assistant", "content": "Nice!"},
                user("Can you recommend a good bakery near my place?")]
    assert build_query(messages) == "Can you recommend a good bakery near my place?"


def test_a_short_follow_up_gets_the_previous_user_turn_prepended():
    messages = [user("What is a good book about the history of Rome?"), {"role": "assistant", "content": "SPQR."},
                user("why?")]
    assert build_query(messages) == "What is a good book about the history of Rome?\nwhy?"


def test_a_pronoun_led_follow_up_is_a_follow_up_even_when_long():
    assert is_follow_up("And what about the second book you mentioned earlier?", 20)
    assert is_follow_up("那为什么呢", 20)
    assert not is_follow_up("Recommend me a science fiction movie for tonight", 20)


def test_cjk_characters_count_three_towards_the_length():
    assert not is_follow_up("最近睡眠不好，有点焦虑", 20)  # 10 CJK chars: a full sentence
    assert is_follow_up("好的", 20)


def test_text_parts_are_read_and_no_user_text_gives_no_query():
    parts = [{"type": "text", "text": "Tell me about my favourite films please"}, {"type": "image_url", "image_url": {"url": "x"}}]
    assert build_query([user(parts)]) == "Tell me about my favourite films please"
    assert build_query([{"role": "system", "content": "be nice"}]) == ""


def test_the_query_keeps_the_end_when_too_long():
    assert build_query([user("a" * 50 + "END")], max_chars=16) == "a" * 13 + "END"


def test_split_puts_scores_at_the_threshold_in_the_high_set():
    hits = [hit("a", 0.9), hit("b", 0.8), hit("c", 0.79), hit("d", 0.3)]
    high, low = split_by_relevance(hits, 0.8)
    assert [h.record.text for h in high] == ["a", "b"]
    assert [h.record.text for h in low] == ["c", "d"]


def test_the_annotation_names_ids_scores_and_sets():
    a, b = hit("a", 0.91234).model_copy(update={"relevance": 0.88888}), hit("b", 0.4)
    note = recall_annotation(RecallResult("q", (a,), (b,)), 0.8)
    assert note["memories"] == [
        {"id": a.record.id, "score": 0.9123, "relevance": "high", "scope": "profile", "calibrated": 0.8889,
         "cosine": round(a.similarity, 4)},
        {"id": b.record.id, "score": 0.4, "relevance": "low", "scope": "profile", "calibrated": None,
         "cosine": round(b.similarity, 4)},
    ]
    assert note["high_threshold"] == 0.8


def test_the_annotation_says_why_a_hit_was_added_to_high_and_only_there():
    a, b = hit("a", 0.2), hit("b", 0.1)
    note = recall_annotation(RecallResult("q", (a,), (b,), {a.record.id: "lasting fact", b.record.id: "ignored"}), 0.8)
    assert [m.get("added") for m in note["memories"]] == ["lasting fact", None]


def test_config_defaults_come_from_seed_000_and_refuse_an_inverted_threshold():
    config = AutoRecallConfig()
    assert (config.limit, config.high_relevance_threshold) == (5, 0.8)
    with pytest.raises(ValueError):
        AutoRecallConfig(threshold=0.9, high_relevance_threshold=0.8)


def test_split_uses_the_calibrated_relevance_when_the_hit_has_one():
    """A memory the embedder scores 0.38 but calibration rates 0.89 (MiniLM, "I'm vegetarian"
    for a dinner question) is high; a cosine of 0.85 calibrated to 0.4 is low."""
    vegetarian = hit("vegetarian", 0.38).model_copy(update={"relevance": 0.89})
    noisy = hit("noisy", 0.85).model_copy(update={"relevance": 0.4})
    high, low = split_by_relevance([vegetarian, noisy], 0.8)
    assert [h.record.text for h in high] == ["vegetarian"]
    assert [h.record.text for h in low] == ["noisy"]
