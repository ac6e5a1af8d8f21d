"""Context selection for group chats, sans-IO (seed 004): the scorer and the request plan."""

from __future__ import annotations

import copy
import json

import pytest

from plugins.context_scoring import Params, Turn, analyze, name_prefixes, select_context, terms
from plugins.context_selection import InvalidExtension, plan_request

SYSTEM = {"role": "system", "content": "You are Kiki, the group's helper bot.\n  (keep this byte-exact)"}

#: Two topics interleaved in one group: ramen (alice, carol, erin) and a docker build (bob, dave).
GROUP = [
    SYSTEM,
    {"role": "user", "name": "alice", "content": "anyone tried the new ramen place on 5th street?"},
    {"role": "user", "name": "bob", "content": "my docker build fails with 'no space left on device'"},
    {"role": "user", "name": "carol", "content": "alice: yes! the tonkotsu broth is amazing"},
    {"role": "user", "name": "dave", "content": "bob: run docker system prune -a to free the build cache"},
    {"role": "user", "name": "alice", "content": "carol: how long was the queue?"},
    {"role": "user", "name": "bob", "content": "dave: prune freed 30GB but the build still fails at the COPY step"},
    {"role": "user", "name": "carol", "content": "alice: about 20 minutes at noon"},
    {"role": "user", "name": "bob", "content": "@Kiki why does docker COPY fail after prune?"},
]


def names(messages):
    return [(m.get("name"), m["content"][:20]) for m in messages]


def test_the_target_threads_messages_are_kept_in_order_and_the_other_topic_dropped():
    plan = plan_request(GROUP, Params(), bot_names=["Kiki"])
    sent = plan.messages
    assert sent[0] is SYSTEM  # the system prefix goes as the client sent it
    assert [m.get("name") for m in sent[1:]] == ["bob", "dave", "bob", "bob"]
    assert sent[-1] is GROUP[-1]
    assert plan.dropped == (1, 3, 5, 7)


def test_keyword_overlap_works_for_chinese_without_spaces():
    assert {"显卡", "卡驱", "驱动"} <= terms("显卡驱动")

    def score(candidate: str) -> float:
        turns = [Turn("甲", "周末去爬山吗"), Turn("乙", candidate), Turn("丙", "周末下雨"),
                 Turn("戊", "显卡驱动要先卸载旧版本吗")]
        return select_context(turns, 3).scores[1]

    # the same chat but for one message's words: only keyword_overlap differs
    assert score("我的显卡驱动装不上") - score("今天食堂的饭很好吃") > 0.01


@pytest.mark.parametrize("text, addressed", [
    ("@小明 你看一下", ["小明"]),
    ("@小明你看一下", ["小明"]),  # no delimiter after a CJK name
    ("小明：你看一下", ["小明"]),
    ("小明，你看一下", ["小明"]),
    ("Bob: try this", ["bob"]),
    ("bob , try this", ["bob"]),
    ("＠Bob hi", ["bob"]),
    ("Note: bob is away", []),  # "Note" is no speaker; bob inline only
])
def test_mentions_are_parsed_for_known_speakers_cjk_included(text, addressed):
    known = {"小明": "小明", "bob": "bob", "alice": "alice"}
    found, inline, _ = analyze(text, known, 5)
    assert found == addressed
    if text.startswith("Note"):
        assert inline == ["bob"]


def test_an_explicit_reply_link_keeps_a_message_far_back():
    turns = [Turn("ann", "the original question about backups", id="q")]
    turns += [Turn(f"u{i}", f"unrelated chatter number {i}") for i in range(60)]
    turns.append(Turn("zed", "that works", reply_to="q"))
    selection = select_context(turns, len(turns) - 1)
    assert 0 in selection.kept
    assert len(selection.kept) <= 20


def test_without_times_the_decay_is_by_position():
    turns = [Turn(f"u{i}", f"chatter {i}") for i in range(10)] + [Turn("z", "hello")]
    scores = select_context(turns, 10).scores
    assert scores[9] > scores[5] > scores[0]


def test_messages_outside_the_time_window_are_not_candidates():
    day = 24 * 3600.0
    turns = [Turn("ann", "backups?", id="q", ts=0.0), Turn("bob", "hi", ts=day + 10), Turn("ann", "ann again", reply_to="q", ts=day + 20)]
    selection = select_context(turns, 2)
    assert 0 not in selection.scores and 0 not in selection.kept
    assert selection.candidates == 1


def test_at_most_max_messages_are_kept_best_first_in_original_order():
    turns = [Turn("ann", f"ann said {i}") for i in range(30)] + [Turn("ann", "and now?")]
    selection = select_context(turns, 30, Params(max_messages=5))
    assert selection.kept == (25, 26, 27, 28, 29)


def test_tool_calls_and_their_results_are_kept_or_dropped_together():
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "docker COPY needs the file in the build context"}
    messages = [SYSTEM, GROUP[2], call, result, *GROUP[3:]]
    for plan in (plan_request(messages, Params(threshold=0.0)), plan_request(messages, Params(threshold=0.99))):
        sent = plan.messages
        assert (call in sent) == (result in sent)
        if call in sent:
            assert sent.index(result) == sent.index(call) + 1


def test_the_extension_is_removed_and_every_other_field_kept():
    messages = copy.deepcopy(GROUP)
    messages[2]["memgate"] = {"id": "m2", "ts": "2025-03-01T10:00:00+08:00"}
    messages[-1]["memgate"] = {"id": "m9", "reply_to": "m2", "ts": "2025-03-01T10:05:00+08:00", "mentions": ["Kiki"]}
    messages[-1]["future_field"] = {"kept": True}
    before = json.dumps(messages)
    plan = plan_request(messages, Params(), bot_names=["Kiki"])
    assert json.dumps(messages) == before  # the client's request is not mutated
    assert all("memgate" not in m for m in plan.messages)
    assert plan.messages[-1] == {k: v for k, v in messages[-1].items() if k != "memgate"}
    assert list(plan.messages[-1]) == ["role", "name", "content", "future_field"]


@pytest.mark.parametrize("ext, param", [
    ("x", "messages.8.memgate"),
    ({"id": "", "reply_to": "a"}, "messages.8.memgate.id"),
    ({"id": 7}, "messages.8.memgate.id"),
    ({"id": "a", "ts": "2025-03-01T10:00:00"}, "messages.8.memgate.ts"),
    ({"id": "a", "ts": "yesterday"}, "messages.8.memgate.ts"),
    ({"id": "a", "mentions": "bob"}, "messages.8.memgate.mentions"),
    ({"id": "a", "color": 1}, "messages.8.memgate.color"),
])
def test_a_malformed_extension_names_the_field(ext, param):
    messages = [*GROUP[:-1], {**GROUP[-1], "memgate": ext}]
    with pytest.raises(InvalidExtension) as raised:
        plan_request(messages, Params())
    assert raised.value.param == param


def test_the_fallback_keeps_the_most_recent_messages_and_never_nothing():
    messages = [*GROUP[:-1], {**GROUP[-1], "memgate": "malformed"}]
    plan = plan_request(messages, Params(), recent=3)
    assert plan.messages[0] is SYSTEM
    assert names(plan.messages[1:]) == names(GROUP[5:])
    assert "memgate" not in plan.messages[-1]


def test_only_the_most_recent_candidates_are_scored_and_older_ones_dropped():
    messages = [SYSTEM, *({"role": "user", "name": "ann", "content": f"ann {i}"} for i in range(50)),
                {"role": "user", "name": "ann", "content": "ann again"}]
    plan = plan_request(messages, Params(), max_candidates=10)
    assert plan.selection is not None and plan.selection.candidates == 10
    assert set(plan.dropped) >= set(range(1, 41))
    assert plan.messages[0] is SYSTEM and plan.messages[-1] is messages[-1]


def test_a_shortened_name_at_the_start_addresses_the_one_speaker_it_can_mean():
    turns = [Turn("actionparsnip", "run sudo dpkg -r googleearth"), Turn("actionman", "hi all"),
             *(Turn(f"u{i}", f"chatter {i}") for i in range(8)),
             Turn("sken", "actionp: that did not work")]
    selection = select_context(turns, len(turns) - 1)
    assert 0 in selection.kept and 1 not in selection.kept
    known = {"actionparsnip": "actionparsnip", "actionman": "actionman"}
    assert analyze("action: hello", known, 13, name_prefixes(known))[0] == []  # either of them: no one
    assert analyze("actionp: hello", known, 13, name_prefixes(known))[0] == ["actionparsnip"]


def test_a_reply_addressed_to_someone_may_answer_the_latest_message_about_them():
    turns = [Turn("sken", "how do I remove googleearth?"),
             *(Turn(f"u{i}", f"chatter {i}") for i in range(6)),
             Turn("helper", "!uninstall | sken"),
             Turn("u9", "more chatter"), Turn("u10", "and more"),
             Turn("bot", "sken: to remove a package, run sudo apt remove <name>")]
    selection = select_context(turns, len(turns) - 1)
    assert 7 in selection.kept  # the command that named sken
    assert 0 in selection.kept  # and sken's own question


def _chatter(n: int) -> list[Turn]:
    """``n`` turns of small talk, each with words of its own."""
    return [Turn(f"u{i}", f"random chatter number{i} about topic{i} and stuff{i}") for i in range(n)]


def test_an_unaddressed_reply_is_guessed_to_answer_the_recent_turn_on_its_topic():
    # tim asked bimberi; raf answers tim's question without naming anyone, two turns later
    turns = [Turn("bimberi", "hello there"), *_chatter(30),
             Turn("tim", "bimberi, do most BIOS support wireless keyboards?"),
             Turn("nevado", "why does gnome not open vlc for movies?"),
             Turn("carl", "good evening everyone"),
             Turn("raf", "never heard of a BIOS supporting wireless keyboards")]
    selection = select_context(turns, len(turns) - 1)
    assert 31 in selection.kept  # was: the nearest open turn (carl's) guessed instead, tim's dropped
    assert 32 not in selection.kept


def test_the_speakers_turn_to_a_third_person_in_another_conversation_is_not_continuity():
    turns = [Turn("bob", "my router keeps dropping"), Turn("carol", "when is the meeting?"),
             Turn("alice", "bob: try rebooting the router"),
             Turn("alice", "carol: the meeting is at five"),
             Turn("dave", "nice"),
             Turn("alice", "anyone know a good pizza place nearby?")]
    selection = select_context(turns, len(turns) - 1)
    assert 2 not in selection.kept  # was kept: same speaker, but talking to bob about something else
    assert 3 in selection.kept  # her latest turn (continuity) stays
