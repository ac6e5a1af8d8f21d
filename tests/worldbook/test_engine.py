"""The activation engine's rules, each pinned to SillyTavern's documentation "World Info"
(docs.sillytavern.app/usage/core-concepts/worldinfo; section named in each test) or to
seed 001 (``../shared/seeds/001_*``)."""

import random
from datetime import date

from gateway.lorebook.model import LoreEntry
from plugins.world_book.engine import CompiledBook, EngineSettings, activate


def entry(id_, content=None, **fields):
    return LoreEntry(id=id_, content=content or f"<{id_}>", **fields)


def run(entries, messages, *, settings=None, clock=None, timed=None, seed=0, today=date(2026, 11, 23), similarity=None):
    book = CompiledBook(entries, settings or EngineSettings())
    result = activate(
        book, messages, clock=len(messages) if clock is None else clock, timed=timed or {},
        rng=random.Random(seed), count_tokens=lambda text: len(text), today=today, now_ms=0,
        similarity=similarity,
    )
    return result


def ids(result):
    return [a.entry.id for a in result.entries]


# --- ST "Scan Depth" -----------------------------------------------------------------
def test_scan_depth_limits_the_messages_scanned():
    entries = [entry("dragon", keywords=("dragon",))]
    chat = ["a dragon appears", "hello", "how are you"]
    assert ids(run(entries, chat, settings=EngineSettings(scan_depth=2))) == []
    assert ids(run(entries, chat, settings=EngineSettings(scan_depth=3))) == ["dragon"]
    assert ids(run(entries, chat, settings=EngineSettings(scan_depth=0))) == []


def test_an_entry_scan_depth_overrides_the_default():
    entries = [entry("deep", keywords=("dragon",), scan_depth=3), entry("shallow", keywords=("dragon",))]
    assert ids(run(entries, ["a dragon", "x", "y"], settings=EngineSettings(scan_depth=1))) == ["deep"]


# --- ST "Key", "Case-sensitive keys", "Match whole words", regex keys -----------------
def test_keys_are_case_insensitive_unless_the_entry_says_so():
    entries = [entry("rose", keywords=("Rose",)), entry("Rose", keywords=("Rose",), case_sensitive=True)]
    assert ids(run(entries, ["a rose in bloom"])) == ["rose"]
    assert sorted(ids(run(entries, ["Rose smiled"]))) == ["Rose", "rose"]


def test_whole_words_apply_to_latin_edges_but_not_to_chinese():
    entries = [entry("king", keywords=("king",)), entry("cat", keywords=("猫",)), entry("mix", keywords=("AI",))]
    assert ids(run(entries, ["it's not to my liking"])) == []
    assert ids(run(entries, ["long live the king!"])) == ["king"]
    assert ids(run(entries, ["我的猫咪很可爱"])) == ["cat"]  # no word boundaries in Chinese
    assert ids(run(entries, ["我喜欢AI助手"])) == ["mix"]  # CJK neighbours are boundaries
    assert ids(run(entries, ["the MAIL came"])) == []
    off = [entry("king", keywords=("king",), match_whole_words=False)]
    assert ids(run(off, ["it's not to my liking"])) == ["king"]


def test_regex_keys_match_with_their_flags():
    entries = [entry("weather", keywords=("/(rainy|cloudy) (sky|weather)/i",))]
    assert ids(run(entries, ["What a Rainy Weather"])) == ["weather"]
    assert ids(run(entries, ["sunny"])) == []


# --- ST "Optional Filter" (selective logic) -------------------------------------------
def test_secondary_key_logic():
    chat = ["the knight and the dragon"]
    def logic(name, secondary):
        return ids(run([entry("e", keywords=("knight",), secondary_keys=secondary, selective_logic=name)], chat))
    assert logic("and_any", ("dragon", "wizard")) == ["e"]
    assert logic("and_all", ("dragon", "wizard")) == []
    assert logic("and_all", ("dragon",)) == ["e"]
    assert logic("not_any", ("dragon", "wizard")) == []
    assert logic("not_any", ("wizard",)) == ["e"]
    assert logic("not_all", ("dragon", "wizard")) == ["e"]
    assert logic("not_all", ("dragon",)) == []


# --- ST "Status" (constant, disabled) -------------------------------------------------
def test_constant_entries_always_activate_and_disabled_never():
    entries = [entry("always", is_constant=True), entry("off", keywords=("x",), enabled=False)]
    assert ids(run(entries, ["x"])) == ["always"]


# --- ST "Insertion Order" and "Context % / Budget" ------------------------------------
def test_order_sorts_the_result_and_the_budget_takes_constants_then_higher_order():
    entries = [
        entry("low", "l" * 10, keywords=("a",), priority=10),
        entry("high", "h" * 10, keywords=("a",), priority=300),
        entry("const", "c" * 10, is_constant=True, priority=1),
    ]
    assert ids(run(entries, ["a"])) == ["const", "low", "high"]  # ascending order
    tight = run(entries, ["a"], settings=EngineSettings(budget_tokens=20))
    assert ids(tight) == ["const", "high"] and tight.overflow


# --- ST "Recursive scanning" ----------------------------------------------------------
def test_recursion_activates_entries_named_in_activated_content_up_to_the_limit():
    entries = [
        entry("bessie", "Bessie is a cow and is friends with Rufus.", keywords=("Bessie",)),
        entry("rufus", "Rufus is a dog who chases Tom.", keywords=("Rufus",)),
        entry("tom", "Tom is a cat.", keywords=("Tom",)),
    ]
    assert sorted(ids(run(entries, ["tell me about Bessie"]))) == ["bessie", "rufus", "tom"]
    assert sorted(ids(run(entries, ["Bessie"], settings=EngineSettings(max_recursion=1)))) == ["bessie", "rufus"]
    assert ids(run(entries, ["Bessie"], settings=EngineSettings(max_recursion=0))) == ["bessie"]


def test_recursion_flags():
    base = entry("bessie", "friends with Rufus", keywords=("Bessie",))
    assert ids(run([base, entry("rufus", keywords=("Rufus",), exclude_recursion=True)], ["Bessie"])) == ["bessie"]
    stop = entry("bessie", "friends with Rufus", keywords=("Bessie",), prevent_recursion=True)
    assert ids(run([stop, entry("rufus", keywords=("Rufus",))], ["Bessie"])) == ["bessie"]
    late = entry("rufus", keywords=("Rufus",), delay_until_recursion=True)
    assert ids(run([late], ["Rufus"])) == []
    assert sorted(ids(run([base, late], ["Bessie"]))) == ["bessie", "rufus"]


# --- ST "Probability" -----------------------------------------------------------------
def test_probability_is_a_seeded_draw_and_0_and_100_are_certain():
    assert ids(run([entry("e", keywords=("a",), probability=0)], ["a"])) == []
    assert ids(run([entry("e", keywords=("a",), probability=100)], ["a"])) == ["e"]
    hits = sum(bool(ids(run([entry("e", keywords=("a",), probability=50)], ["a"], seed=s))) for s in range(200))
    assert 60 < hits < 140
    assert ids(run([entry("e", keywords=("a",), probability=50)], ["a"], seed=7)) == ids(
        run([entry("e", keywords=("a",), probability=50)], ["a"], seed=7))


# --- ST "Inclusion Group" / "Prioritize Inclusion" ------------------------------------
def test_one_entry_per_inclusion_group():
    members = [entry(f"g{i}", keywords=("song",), group="songs") for i in range(3)]
    for seed in range(10):
        assert len(ids(run(members, ["sing me a song"], seed=seed))) == 1
    winners = {ids(run(members, ["song"], seed=s))[0] for s in range(50)}
    assert winners == {"g0", "g1", "g2"}  # a weighted draw
    prioritized = [entry("a", keywords=("song",), group="songs", group_override=True, priority=5),
                   entry("b", keywords=("song",), group="songs", group_override=True, priority=50)]
    assert all(ids(run(prioritized, ["song"], seed=s)) == ["b"] for s in range(10))


def test_group_weight_biases_the_draw():
    members = [entry("heavy", keywords=("x",), group="g", group_weight=1000), entry("light", keywords=("x",), group="g", group_weight=1)]
    assert sum(ids(run(members, ["x"], seed=s)) == ["heavy"] for s in range(100)) > 90


# --- ST "Timed Effects": sticky, cooldown, delay (clock: chat length) -----------------
def turns(entries, steps, state=None):
    """``(chat length, last message)`` turns in order, the timed state carried from one to
    the next as the plugin stores it; the ids activated per turn and the final state."""
    state, out = dict(state or {}), []
    for clock, text in steps:
        result = run(entries, [text], clock=clock, timed=state)
        state = {**{k: v for k, v in state.items() if k not in result.expired}, **result.timed}
        out.append(ids(result))
    return out, state


# Counts as SillyTavern's WorldInfoTimedEffects (public/scripts/world-info.js): activated at
# chat length t, sticky N runs while the length is below t + N, cooldown N likewise, and a
# sticky period's end starts the cooldown from the length at which it is seen to end.
def test_sticky_keeps_an_entry_active_without_its_key_then_it_lapses():
    sticky = [entry("s", keywords=("storm",), sticky=2)]
    assert run(sticky, ["storm!"], clock=1).timed == {"s": (1, 3, 0, 0, 0)}
    seen, state = turns(sticky, [(1, "storm!"), (2, "calm"), (3, "calm")])
    assert seen == [["s"], ["s"], []] and state == {}


def test_cooldown_blocks_reactivation_for_n_messages_after_activation_or_after_sticky():
    cool = [entry("c", keywords=("storm",), cooldown=2)]
    first = run(cool, ["storm"], clock=1)
    assert first.timed == {"c": (0, 0, 1, 3, 0)}
    assert turns(cool, [(1, "storm"), (2, "storm"), (3, "storm")])[0] == [["c"], [], ["c"]]
    assert ids(run(cool, ["storm"], clock=1, timed=first.timed)) == ["c"]  # the same turn resent
    both = [entry("b", keywords=("storm",), sticky=2, cooldown=2)]
    seen, _ = turns(both, [(1, "storm"), (2, "calm"), (3, "storm"), (4, "storm"), (5, "storm")])
    assert seen == [["b"], ["b"], [], [], ["b"]]


def test_effects_of_a_turn_that_did_not_advance_the_chat_are_dropped():
    # ST: an effect whose start is not below the chat length ("chat not advanced": the
    # reply failed or is regenerated) is removed before the scan, so the turn is evaluated
    # afresh; a cooldown that followed a sticky period is protected from this.
    both = [entry("b", keywords=("storm",), sticky=2, cooldown=2)]
    failed = run(both, ["storm"], clock=1)
    retried = run(both, ["calm"], clock=1, timed=failed.timed)  # the user edited the failed turn
    assert ids(retried) == [] and retried.expired == ("b",)
    assert ids(run(both, ["calm"], clock=2, timed=failed.timed)) == ["b"]  # the chat went on: sticky
    _, cooling = turns(both, [(1, "storm"), (3, "storm")])
    assert cooling == {"b": (0, 0, 3, 5, 1)}
    assert ids(run(both, ["storm"], clock=3, timed=cooling)) == []  # resent: still cooling down


def test_delay_needs_that_many_messages_in_the_chat():
    delayed = [entry("d", keywords=("storm",), delay=3)]
    assert ids(run(delayed, ["storm", "storm"])) == []
    assert ids(run(delayed, ["storm", "x", "storm"])) == ["d"]


# --- seed 001: temporal, emotional, relevance, per-type caps --------------------------
def test_temporal_entries_activate_on_their_dates():
    dated = [entry("birthday", dates=("11-23",), trigger_type="temporal"), entry("once", dates=("2025-01-01",))]
    assert ids(run(dated, ["hi"], today=date(2026, 11, 23))) == ["birthday"]
    assert ids(run(dated, ["hi"], today=date(2025, 1, 1))) == ["once"]


def test_emotional_entries_activate_on_emotion_cues_in_zh_and_en():
    comfort = [entry("comfort", trigger_type="emotional", emotional_context=("sadness",))]
    assert ids(run(comfort, ["I feel so lonely tonight"])) == ["comfort"]
    assert ids(run(comfort, ["今天好难过"])) == ["comfort"]
    assert ids(run(comfort, ["what a nice day"])) == []


def test_relevance_threshold_and_per_type_caps():
    entries = [entry("weak", keywords=("a",), relevance_weight=0.1),
               entry("g1", keywords=("a",), type="goal", priority=9), entry("g2", keywords=("a",), type="goal", priority=1)]
    settings = EngineSettings(relevance_threshold=0.5, max_per_type={"goal": 1})
    assert ids(run(entries, ["a"], settings=settings)) == ["g1"]


def test_a_scan_depth_longer_than_the_chat_scans_the_whole_chat():
    entries = [entry("first", keywords=("secret",), scan_depth=3)]
    assert ids(run(entries, ["the secret", "ok"], settings=EngineSettings(scan_depth=1))) == ["first"]


def test_emotions_are_read_in_a_chat_shorter_than_the_scan_depth():
    comfort = [entry("comfort", trigger_type="emotional", emotional_context=("joy",)), entry("deep", keywords=("x",), scan_depth=9)]
    assert ids(run(comfort, ["so happy", "ok"], settings=EngineSettings(scan_depth=3))) == ["comfort"]


# --- seed 001 semantic trigger = SillyTavern "vectorized" entries (Vector Storage
# extension, activateWorldInfo: max_entries most similar at or above score_threshold) ---
def test_semantic_entries_activate_by_similarity_the_most_similar_first():
    entries = [entry("tide", trigger_type="semantic"), entry("bell", trigger_type="semantic"),
               entry("gate", keywords=("moon gate",), trigger_type="semantic"), entry("plain", keywords=("x",))]
    book_settings = EngineSettings(semantic_threshold=0.5, semantic_max_entries=1)
    assert CompiledBook(entries, book_settings).semantic == (0, 1, 2)
    assert ids(run(entries, ["the sea rises"], settings=book_settings, similarity={0: 0.9, 1: 0.6})) == ["tide"]
    wider = EngineSettings(semantic_threshold=0.5, semantic_max_entries=5)
    assert sorted(ids(run(entries, ["the sea rises"], settings=wider, similarity={0: 0.9, 1: 0.6}))) == ["bell", "tide"]
    assert ids(run(entries, ["the sea rises"], settings=wider, similarity={0: 0.4})) == []  # below the threshold
    assert ids(run(entries, ["open the moon gate"], settings=wider)) == ["gate"]  # keys still work without vectors
    found = run(entries, ["the sea rises"], settings=wider, similarity={0: 0.9})
    assert [(a.reason, a.score) for a in found.entries] == [("semantic", 0.9)]


def test_semantic_relevance_is_the_weight_times_the_similarity():
    entries = [entry("tide", trigger_type="semantic", relevance_weight=0.5)]
    settings = EngineSettings(relevance_threshold=0.5)
    assert ids(run(entries, ["sea"], settings=settings, similarity={0: 0.9})) == []  # 0.45 < 0.5
    heavy = [entry("tide", trigger_type="semantic", relevance_weight=2.0)]
    assert ids(run(heavy, ["sea"], settings=settings, similarity={0: 0.3})) == ["tide"]  # 0.6
