"""LoCoMo parsing and recall@k, with literal inputs, plus one small end-to-end run."""

import json

import pytest

from bench.locomo.dataset import evidence_ids, load_locomo, parse_session_time
from bench.locomo.harness import VARIANTS, evaluate, memory_context, memory_text
from bench.locomo.metrics import RecallTable, recall_at_k

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a beagle called Pixel yesterday!"},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Cute! Here is my garden.", "img_url": ["u"], "blip_caption": "a photo of tomatoes"},
        ],
        "session_2_date_time": "10:00 am on 1 June, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "Pixel chewed my violin case."},
            {"speaker": "Bo", "dia_id": "D2:2", "text": "I started learning Portuguese."},
        ],
    },
    "qa": [
        {"question": "What is the name of Ann's dog?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
        {"question": "What does Bo grow?", "answer": "tomatoes", "evidence": ["D1:2; D9:"], "category": 1},
        {"question": "Unanswerable?", "adversarial_answer": "x", "evidence": [], "category": 5},
    ],
}


def test_session_times_and_evidence_ids():
    at = parse_session_time("1:56 pm on 8 May, 2023")
    assert (at.year, at.month, at.day, at.hour, at.minute) == (2023, 5, 8, 13, 56) and at.tzinfo
    assert evidence_ids(["D8:6; D9:17", "D10:", "D8:6"]) == (("D8:6", "D9:17"), 1)
    with pytest.raises(ValueError):
        parse_session_time("yesterday")


def test_load_groups_sessions_and_questions(tmp_path):
    path = tmp_path / "l.json"
    path.write_text(json.dumps([SAMPLE]))
    (conv,) = load_locomo(path)
    assert [len(s) for s in conv.sessions()] == [2, 2]
    assert conv.turns[1].image_caption == "a photo of tomatoes"
    assert [q.evidence for q in conv.questions] == [("D1:1",), ("D1:2",), ()]
    assert conv.questions[1].malformed == 1 and conv.questions[2].answer == "x"


def test_recall_at_k_counts_distinct_ids():
    assert recall_at_k(["a", "b"], ["a", "a", "c", "b"], 2) == 0.5
    assert recall_at_k(["a", "b"], ["a", "a", "c", "b"], 3) == 1.0
    table = RecallTable((1, 2))
    table.add("single-hop", ["a"], ["a"])
    table.add("temporal", ["a"], ["b", "a"])
    rows = {r["category"]: r for r in table.rows()}
    assert rows["all"]["recall@1"] == 0.5 and rows["all"]["recall@2"] == 1.0


def test_memory_text_variants():
    (conv,) = load_locomo_from(SAMPLE)
    session = conv.sessions()[0]
    plain = memory_text(session[1], VARIANTS["vector"])
    assert plain == "Bo: Cute! Here is my garden."
    rich = VARIANTS["keyword-heavy+captions+dates+context"]
    assert memory_text(session[1], rich) == "[08 May 2023] Bo: Cute! Here is my garden. [shares a photo of a photo of tomatoes]"
    assert memory_context(rich, session[:1]) is not None and memory_context(rich, session[:1]).startswith("Ann: I adopted")
    assert memory_context(VARIANTS["vector"], session[:1]) is None


def load_locomo_from(sample):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "s.json"
    path.write_text(json.dumps([sample]))
    return load_locomo(path)


async def test_evaluate_finds_the_evidence_turns(redis_url, shared_model):
    import uuid

    from gateway.memory.config import MemoryConfig
    from gateway.memory.factory import open_memory

    conversations = load_locomo_from(SAMPLE)
    config = MemoryConfig(redis_url=redis_url, key_prefix="lt" + uuid.uuid4().hex[:8], hybrid_alpha=0.3)
    async with open_memory(config, embedder=shared_model.for_gateway()) as store:
        best = await evaluate(store, conversations, VARIANTS["keyword-heavy+captions+dates+context"], (1, 3))
    config = MemoryConfig(redis_url=redis_url, key_prefix="lt" + uuid.uuid4().hex[:8], hybrid_alpha=1.0)
    async with open_memory(config, embedder=shared_model.for_gateway()) as store:
        vector = await evaluate(store, conversations, VARIANTS["vector"], (1, 3))
    assert best["questions"] == 2 and best["skipped_no_evidence"] == 1
    assert {r["category"]: r for r in best["rows"]}["all"]["recall@3"] == 1.0
    rows = {r["category"]: r for r in vector["rows"]}
    assert rows["single-hop"]["recall@1"] == 1.0  # "name of Ann's dog" -> the beagle turn


def test_recall_table_breaks_down_per_conversation():
    table = RecallTable((1,))
    table.add("multi-hop", ["a", "b"], ["a"], "conv-1")
    table.add("single-hop", ["c"], ["x"], "conv-1")
    table.add("single-hop", ["c"], ["c"], "conv-2")
    groups = {g["group"]: g for g in table.group_rows()}
    assert groups["conv-1"]["recall@1"] == 0.25 and groups["conv-1"]["multi-hop recall@1"] == 0.5
    assert groups["conv-2"]["recall@1"] == 1.0 and groups["conv-2"]["multi-hop recall@1"] is None
    assert [g["group"] for g in table.group_rows()] == ["conv-1", "conv-2"]
    assert "conv-2" in table.format() and table.rows()[0]["recall@1"] == 0.5
