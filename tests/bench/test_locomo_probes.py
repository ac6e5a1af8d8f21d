"""The LoCoMo ranking probes' pure parts (bench/locomo/probes.py)."""

from datetime import UTC, datetime

from bench.locomo.probes import expansion_text, linked
from gateway.memory.ranking import QuerySignals
from gateway.memory.records import MemoryRecord, MemoryType, Scope, ScoredMemory, Source

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def rec(i: int, text: str) -> MemoryRecord:
    return MemoryRecord(id=f"{i:032x}", user_id="u", friend_id="f", scope=Scope.EVENT, type=MemoryType.EPISODIC,
                        text=text, importance=0.5, occurred_at=NOW, created_at=NOW, updated_at=NOW,
                        source=Source.IMPORT, confidence=1.0, metadata={})


def test_term_links_lift_a_candidate_sharing_a_rare_term_with_the_top_hit():
    top = rec(1, "Melanie: the kids loved the dinosaur exhibit")
    plain = rec(2, "Melanie: we went camping with the family")
    linked_one = rec(3, "Melanie: they still talk about the dinosaur bones")
    records = {r.id: r for r in (top, plain, linked_one)}
    ranked = [(top.id, 0.9), (plain.id, 0.48), (linked_one.id, 0.45)]
    query = QuerySignals.of("What do Melanie's kids like?", NOW)
    off = {"mode": "term", "weight": 0.0, "seeds": 1}
    assert [d for d, _ in linked(ranked, records, query, off)] == [top.id, plain.id, linked_one.id]
    on = {"mode": "term", "weight": 0.2, "seeds": 1}
    assert [d for d, _ in linked(ranked, records, query, on)] == [top.id, linked_one.id, plain.id]


def test_entity_links_ignore_the_query_and_speaker_names():
    top = rec(1, "Caroline: Melanie and I met Oscar at the parade")
    other = rec(2, "Caroline: I asked Melanie about it")
    with_oscar = rec(3, "Melanie: Oscar called yesterday")
    records = {r.id: r for r in (top, other, with_oscar)}
    ranked = [(top.id, 0.9), (other.id, 0.5), (with_oscar.id, 0.45)]
    query = QuerySignals.of("Who did Melanie meet?", NOW)
    out = linked(ranked, records, query, {"mode": "entity", "weight": 0.1, "seeds": 1})
    assert [d for d, _ in out] == [top.id, with_oscar.id, other.id]  # "Melanie" links nothing
    assert dict(out)[other.id] == 0.5


def test_expansion_text_drops_query_terms_and_keeps_them_first_on_request():
    seed = ScoredMemory(record=rec(1, "Melanie: the kids loved the dinosaurs"), score=0.9, similarity=0.5)
    assert expansion_text("What do Melanie's kids like?", [seed], False) == "loved dinosaurs"
    assert expansion_text("kids", [seed], True).split() == ["kids", "melanie", "loved", "dinosaurs"]
