"""Which lasting facts reach the prompt on every request (plugins.auto_recall.pick_profile):
the current slot memories (the user's basic attributes) hold up to half the places, the
best-ranked others fill the rest; the store's order is kept."""

from __future__ import annotations

from plugins.auto_recall import pick_profile
from tests.recall.records import hit


def _texts(hits) -> list[str]:
    return [h.record.text for h in hits]


def test_a_slot_fact_ranked_below_the_limit_still_gets_a_place():
    ranked = [hit(f"fact {n}", 0.9 - n / 100) for n in range(6)]
    ranked.append(hit("I live in Hangzhou", 0.5, metadata={"slot": "residence"}))
    picked = pick_profile(ranked, 5)
    assert _texts(picked) == ["fact 0", "fact 1", "fact 2", "fact 3", "I live in Hangzhou"]


def test_slot_facts_take_at_most_half_the_places_so_other_facts_keep_theirs():
    others = [hit("allergic to peanuts", 0.9), hit("son is seven", 0.8)]
    slots = [hit(f"slot {n}", 0.7 - n / 100, metadata={"slot": f"s{n}"}) for n in range(5)]
    picked = pick_profile([*others, *slots], 5)
    assert _texts(picked) == ["allergic to peanuts", "son is seven", "slot 0", "slot 1", "slot 2"]


def test_without_slot_facts_the_ranking_decides_and_slots_fill_when_others_run_out():
    plain = [hit(f"fact {n}", 0.9 - n / 100) for n in range(8)]
    assert _texts(pick_profile(plain, 5)) == [f"fact {n}" for n in range(5)]
    slots = [hit(f"slot {n}", 0.9 - n / 100, metadata={"slot": f"s{n}"}) for n in range(4)]
    assert _texts(pick_profile([*slots, hit("fact", 0.1)], 5)) == ["slot 0", "slot 1", "slot 2", "slot 3", "fact"]
    assert pick_profile(slots, 0) == ()


def test_a_health_fact_ranked_low_keeps_one_place_beside_the_slots():
    ranked = [hit(f"fact {n}", 0.9 - n / 100) for n in range(6)]
    ranked += [hit(f"slot {n}", 0.5 - n / 100, metadata={"slot": f"s{n}"}) for n in range(3)]
    ranked += [hit("bad knees", 0.2, metadata={"attribute": "health"}), hit("sore back", 0.1, metadata={"attribute": "health"})]
    picked = pick_profile(ranked, 5)
    assert _texts(picked) == ["fact 0", "slot 0", "slot 1", "slot 2", "bad knees"]
    ranked.append(hit("allergic to kiwi", 0.05, metadata={"attribute": "condition"}))  # a condition before a complaint
    assert _texts(pick_profile(ranked, 5)) == ["fact 0", "slot 0", "slot 1", "slot 2", "allergic to kiwi"]
    assert _texts(pick_profile(ranked, 2)) == ["fact 0", "slot 0"]  # no room beside one other fact: no health place
