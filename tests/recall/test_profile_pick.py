"""Which lasting facts reach the prompt on every request (plugins.auto_recall.pick_profile):
the facts sharing a life topic with the request first, then the current slot memories (the
user's basic attributes) up to half the places, the best-ranked others fill the rest; the
store's order is kept. And which events join them by topic (pick_topical)."""

from __future__ import annotations

from plugins.auto_recall import pick_profile, pick_topical
from plugins.topics import topics_of
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


def test_facts_sharing_a_topic_with_the_request_come_first_whatever_their_rank():
    ranked = [hit(f"I work as a nurse {n}", 0.9 - n / 100) for n in range(5)]
    ranked.append(hit("My rabbit Clover is eleven", 0.1))
    picked = pick_profile(ranked, 5, topics_of("I have a vet appointment tomorrow"))
    assert "My rabbit Clover is eleven" in _texts(picked) and len(picked) == 5
    assert _texts(picked)[-1] == "My rabbit Clover is eleven"  # the store's order is kept
    assert "My rabbit Clover is eleven" not in _texts(pick_profile(ranked, 5))  # no topic: the ranking decides


def test_chinese_facts_are_picked_by_topic_as_english_ones():
    ranked = [hit(text, 0.9 - n / 100) for n, text in enumerate(["爱你", "好的谢谢", "在杭州做后端", "每天喝两杯咖啡", "我芒果过敏"])]
    ranked.append(hit("外孙刚满月", 0.2))
    picked = _texts(pick_profile(ranked, 5, topics_of("小宝宝晚上老哭咋办")))
    assert "外孙刚满月" in picked and "我芒果过敏" not in picked


def test_topic_facts_count_against_the_slot_share_and_slots_keep_up_to_half():
    others = [hit(f"fact {n}", 0.9 - n / 100) for n in range(4)]
    slots = [hit(f"I live in city {n}", 0.5 - n / 100, metadata={"slot": f"s{n}"}) for n in range(4)]
    pet = hit("our dog Rex", 0.1, metadata={"slot": "pet"})
    assert _texts(pick_profile([*others, *slots, pet], 5)) == ["fact 0", "fact 1", "I live in city 0", "I live in city 1", "I live in city 2"]
    picked = _texts(pick_profile([*others, *slots, pet], 5, frozenset({"pets"})))
    assert picked == ["fact 0", "fact 1", "I live in city 0", "I live in city 1", "our dog Rex"]


def test_topical_events_are_the_best_ranked_sharing_a_topic_and_not_shown():
    events = [hit("Went to a jazz concert", 0.9, scope="event"), hit("my son Theo turned 2 last week", 0.5, scope="event"),
              hit("Theo's first day at daycare", 0.4, scope="event"), hit("our kid lost a tooth", 0.3, scope="event")]
    kids = topics_of("birthday party ideas for my kid")
    assert _texts(pick_topical(events, 2, kids, set())) == ["my son Theo turned 2 last week", "Theo's first day at daycare"]
    shown = {events[1].record.id}
    assert _texts(pick_topical(events, 2, kids, shown)) == ["Theo's first day at daycare", "our kid lost a tooth"]
    assert pick_topical(events, 0, kids, set()) == () and pick_topical(events, 2, frozenset(), set()) == ()


def test_a_health_fact_ranked_low_keeps_one_place_beside_the_slots():
    ranked = [hit(f"fact {n}", 0.9 - n / 100) for n in range(6)]
    ranked += [hit(f"slot {n}", 0.5 - n / 100, metadata={"slot": f"s{n}"}) for n in range(3)]
    ranked += [hit("bad knees", 0.2, metadata={"attribute": "health"}), hit("sore back", 0.1, metadata={"attribute": "health"})]
    picked = pick_profile(ranked, 5)
    assert _texts(picked) == ["fact 0", "slot 0", "slot 1", "slot 2", "bad knees"]
    ranked.append(hit("allergic to kiwi", 0.05, metadata={"attribute": "condition"}))  # a condition before a complaint
    assert _texts(pick_profile(ranked, 5)) == ["fact 0", "slot 0", "slot 1", "slot 2", "allergic to kiwi"]
    assert _texts(pick_profile(ranked, 2)) == ["fact 0", "slot 0"]  # no room beside one other fact: no health place


def test_a_memory_with_no_topic_takes_the_topics_of_the_memories_naming_the_same_one():
    """"How old is Pixel? — ten weeks" names no topic; the puppy called Pixel is ``pets``:
    linked, the age joins a question about the dog as a topical event and the profile pick
    counts it as ``pets`` too, also where the name is typed in lower case or starts the
    sentence (a name needs one capitalised mention inside a sentence somewhere)."""
    from plugins.auto_recall import linked_topics

    puppy = hit("Also we just adopted a beagle puppy, his name is Pixel.", 0.9)
    age = hit("How old is Pixel? — ten weeks", 0.2, scope="event", type="episodic")
    rain = hit("We get so much rain here, honestly", 0.8, scope="event", type="episodic")
    walks = topics_of("How long should our dog's walks be at his age?")
    linked = linked_topics([puppy, age, rain])
    assert linked[age.record.id] == {"pets"} and linked[puppy.record.id] == {"pets"} and linked[rain.record.id] == frozenset()
    assert _texts(pick_topical([rain, age], 2, walks, set(), linked)) == ["How old is Pixel? — ten weeks"]
    assert pick_topical([rain, age], 2, walks, set()) == ()  # unlinked: the age has no topic
    ranked = [hit(f"fact {n}", 0.9 - n / 100) for n in range(5)]
    lowered = hit("how old is pixel? ten weeks", 0.1)  # lower case: linked by the puppy's "Pixel"
    named = hit("Pixel chewed my charger again", 0.05)  # sentence-initial: no name of its own, yet linked
    picked = pick_profile([*ranked, lowered, named, puppy], 5, walks, linked_topics([*ranked, lowered, named, puppy]))
    assert "Pixel chewed my charger again" in _texts(picked) and "how old is pixel? ten weeks" in _texts(picked)
    assert "Pixel chewed my charger again" not in _texts(pick_profile([*ranked, lowered, named, puppy], 5, walks))
    unnamed = [*ranked, hit("how old is pixel? ten weeks", 0.1), hit("pixel chewed my charger", 0.05),
               hit("we adopted a beagle puppy called pixel", 0.01)]  # never capitalised: no name, no link
    assert _texts(pick_profile(unnamed, 5, walks, linked_topics(unnamed)))[-1] == "we adopted a beagle puppy called pixel"
    assert "pixel chewed my charger" not in _texts(pick_profile(unnamed, 5, walks, linked_topics(unnamed)))
