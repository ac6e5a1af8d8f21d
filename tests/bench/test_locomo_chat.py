"""The LoCoMo via-chat replay's pure parts: turn grouping and evidence matching."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from bench.locomo.chat import exchanges, ranked_dia_ids, turn_line
from bench.locomo.dataset import Turn

AT = datetime(2023, 5, 8, tzinfo=UTC)


def _turn(dia: str, speaker: str, text: str, caption: str | None = None) -> Turn:
    return Turn(dia, 1, speaker, text, caption, AT)


def test_consecutive_turns_of_a_speaker_form_one_message_and_leading_replies_stay_apart():
    session = [_turn("D1:1", "B", "hey"), _turn("D1:2", "A", "hi"), _turn("D1:3", "A", "news!"),
               _turn("D1:4", "B", "tell me"), _turn("D1:5", "A", "bye")]
    leading, groups = exchanges(session, "A")
    assert [t.dia_id for t in leading] == ["D1:1"]
    assert [([u.dia_id for u in us], [r.dia_id for r in rs]) for us, rs in groups] == [
        (["D1:2", "D1:3"], ["D1:4"]), (["D1:5"], [])]
    assert turn_line(_turn("D1:6", "A", "look", "a photo of a dog")) == "A: look [image: a photo of a dog]"


def test_evidence_is_ranked_by_where_each_memory_appears_in_the_prompt():
    records = [SimpleNamespace(text="A: second", metadata={"turn_hash": "h2"}),
               SimpleNamespace(text="A: first", metadata={"turn_hash": "h1"}),
               SimpleNamespace(text="A: absent", metadata={"turn_hash": "h3"})]
    prompt = "memories:\n1. A: first\n2. A: second\nquestion"
    assert ranked_dia_ids(prompt, records, {"h1": ["D1:1", "D1:2"], "h2": ["D2:1"], "h3": ["D3:1"]}) == ["D1:1", "D1:2", "D2:1"]
