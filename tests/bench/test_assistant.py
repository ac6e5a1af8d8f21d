"""``python -m bench assistant``: the dev set's rules, the prompt parser and the figures on
a handcrafted case, and three users end to end through the real gateway."""

from __future__ import annotations

import asyncio
import copy
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bench.assistant.dataset import DatasetError, load_users, parse_user, select
from bench.assistant.metrics import score_probe, stored_summary, summarize
from bench.assistant.prompt import Injected, parse_injected, read_request
from bench.assistant.run import DEFAULT_CONFIG, report, run_async
from bench.cli import main as bench_main
from plugins.preferences import Preference, render_personalization
from plugins.prompts import (
    FREE_FORM_LINE,
    LANGUAGE_LINE,
    MEMORY_CONTEXT,
    PERSONALIZATION,
    PERSONALIZATION_HEADER,
    render_memory_context,
)
from tests.support.upstream_double import UpstreamDouble

USER = {
    "user": "en-test", "lang": "en", "split": "dev",
    "sessions": [
        {"id": "s1", "turns": [
            {"id": "t1", "kind": "small_talk", "user": "hi there", "assistant": "Hi!"},
            {"id": "t2", "kind": "fact", "user": "My daughter Maya is allergic to peanuts.", "assistant": "Noted.",
             "facts": [{"id": "f1", "fact": "Maya: peanut allergy", "key": ["peanuts"], "topic": "health"}]},
            {"id": "t3", "kind": "request", "user": "What snacks should I pack for the school trip?", "assistant": "Fruit."},
            {"id": "t4", "kind": "fact_in_request", "user": "We live in Lisbon, any rainy day ideas?", "assistant": "Museums.",
             "facts": [{"id": "f2", "fact": "Lives in Lisbon", "key": ["Lisbon"], "topic": "home"}]},
        ]},
        {"id": "s2", "turns": [
            {"id": "t5", "kind": "update", "user": "We moved to Berlin last month.", "assistant": "Congrats!",
             "facts": [{"id": "f3", "fact": "Moved to Berlin", "key": ["Berlin"], "topic": "home", "supersedes": "f2"}]},
            {"id": "t6", "kind": "repeat", "user": "Maya can't eat peanuts, remember.", "assistant": "Yes.",
             "facts": [{"id": "f4", "fact": "Maya: no peanuts", "key": ["peanuts"], "topic": "health", "repeats": "f1"}]},
        ]},
    ],
    "probes": [
        {"id": "p1", "ask": "What should I bake for her birthday?", "needs": ["f1"]},
        {"id": "p2", "ask": "Any photography classes nearby?", "needs": ["f3"], "stale": ["Lisbon"]},
        {"id": "p3", "ask": "Where should we go this weekend?", "needs": ["f3"], "stale": ["Lisbon"]},
    ],
}
T = {t["id"]: t["user"] for s in USER["sessions"] for t in s["turns"]}


def _system(texts: list[str], personalization: bool = False, language: str = "en") -> str:
    """The injected system text as the chain builds it: personalization, then the memory
    context, joined by a blank line (gateway.chain.injection.Injection.system_text)."""
    parts = []
    if personalization:
        chosen = {"response_length": Preference("response_length", "concise", "m1", datetime.now(UTC))}
        parts.append(render_personalization(chosen, language))  # type: ignore[arg-type]
    if texts:
        parts.append(render_memory_context(MEMORY_CONTEXT[language], texts))
    return "\n\n".join(p for p in parts if p)


def _broken(**change: object) -> dict:
    data = copy.deepcopy(USER)
    turn = change.pop("turn", None)
    for key, value in change.items():
        if turn is None:
            data["probes"][1][key] = value
        else:
            target = next(t for s in data["sessions"] for t in s["turns"] if t["id"] == turn)
            target["facts"][0][key] = value
    return data


# -- the dataset -------------------------------------------------------------------------


def test_the_dev_set_has_the_size_languages_and_splits_it_promises():
    users = load_users()
    langs = Counter(u.lang for u in users)
    assert len(users) >= 20 and langs["en"] >= 14 and langs["zh"] >= 6
    assert sum(len(u.turns) for u in users) >= 200
    assert all(2 <= len(u.sessions) <= 4 and u.probes for u in users)
    for lang in ("en", "zh"):
        dev, held = (len(select(users, split, lang)) for split in ("dev", "heldout"))
        assert dev > held > 0, lang
    kinds = Counter(t.kind for u in users for t in u.turns)
    assert all(kinds[k] >= 5 for k in ("fact", "fact_in_request", "request", "small_talk", "update", "repeat", "answer"))


def test_no_key_or_stale_string_occurs_in_the_text_the_gateway_writes_itself():
    """Keys are looked for in the whole injected text: template words must not match."""
    templates = [*MEMORY_CONTEXT.values(), *PERSONALIZATION_HEADER.values(), *LANGUAGE_LINE.values(),
                 *FREE_FORM_LINE.values(), *(line for table in PERSONALIZATION.values() for line in table.values())]
    folded = "\n".join(templates).casefold()
    for user in load_users():
        strings = [k for f in user.facts.values() for k in f.key] + [s for p in user.probes for s in p.stale]
        assert not [s for s in strings if s.casefold() in folded], user.user


@pytest.mark.parametrize(("change", "message"), [
    ({"turn": "t2", "key": ["cashews"]}, "key 'cashews' is not in the user's words"),
    ({"needs": ["f2"]}, "which an update superseded"),
    ({"stale": ["Berlin"]}, "is in no superseded fact's turn"),
    ({"turn": "t5", "supersedes": "f9"}, "must be an earlier fact"),
])
def test_a_user_file_that_breaks_a_rule_is_refused_naming_it(change, message):
    with pytest.raises(DatasetError, match=message):
        parse_user(_broken(**change), "u.json")


def test_a_fact_whose_keys_occur_in_a_turn_not_stating_it_is_refused():
    data = copy.deepcopy(USER)
    data["sessions"][0]["turns"][2]["user"] = "What snacks without peanuts should I pack?"
    with pytest.raises(DatasetError, match="its keys all occur in turn 't3'"):
        parse_user(data, "u.json")


# -- finding the lines in the upstream request --------------------------------------------


def test_memory_items_personalization_lines_and_template_notes_are_told_apart():
    text = _system(["My daughter Maya is allergic to peanuts.", "first line\nsecond line"], personalization=True)
    lines = parse_injected(text)
    assert [(line.section, line.text) for line in lines] == [
        ("personalization", "Be concise: give the conclusion and the key facts directly"),
        ("memory", "My daughter Maya is allergic to peanuts."),
        ("memory", "first line\nsecond line"),
    ]
    zh = parse_injected(_system(["我女儿对鸡蛋过敏", "我们住在上海"], language="zh") + "\n\n- 另一个插件的条目")
    assert [(line.section, line.text) for line in zh] == [
        ("memory", "我女儿对鸡蛋过敏"), ("memory", "我们住在上海"), ("other", "另一个插件的条目")]


def test_bulleted_and_grouped_items_in_the_memory_context_are_items_too():
    """A format the memory context may take later: sub-headings and dated bullets."""
    block = "Profile:\n- 2025-03-02: My daughter Maya is allergic to peanuts.\nEvents:\n- 2025-06-10: We moved to Berlin."
    text = MEMORY_CONTEXT["en"].replace("{{ memoryItems }}", block)
    lines = parse_injected(text)
    assert [(line.section, line.text) for line in lines] == [
        ("memory", "2025-03-02: My daughter Maya is allergic to peanuts."), ("memory", "2025-06-10: We moved to Berlin.")]
    p2 = score_probe(parse_user(USER, "u.json"), "p2", Injected(text, lines))
    assert p2.recalled and not p2.stale_hit
    assert [(line["kind"], line["turn"], line["match"]) for line in p2.lines] == [("fact", "t2", 1.0), ("update", "t5", 1.0)]


def test_only_what_the_client_did_not_send_counts_as_injected():
    sent = [{"role": "user", "content": "Any photography classes nearby? Berlin or Lisbon?"}]
    received = {"messages": [{"role": "system", "content": _system(["We moved to Berlin last month."])}, *sent]}
    injected = read_request(received, sent)
    assert "Berlin" in injected.text and "Lisbon" not in injected.text
    assert [line.text for line in injected.lines] == ["We moved to Berlin last month."]


# -- the figures on a handcrafted case -----------------------------------------------------


def test_recall_junk_stale_duplicates_and_same_fact_lines_on_a_handcrafted_case():
    user = parse_user(USER, "u.json")
    p1 = score_probe(user, "p1", Injected(text := _system([T["t2"], T["t6"]]), parse_injected(text)))
    text = _system([T["t4"], T["t3"], T["t3"], T["t5"]], personalization=True)
    p2 = score_probe(user, "p2", Injected(text, parse_injected(text)))
    text = _system([T["t4"], T["t1"], "any rainy day ideas?"])  # the request part of t4 alone is junk too
    p3 = score_probe(user, "p3", Injected(text, parse_injected(text)))
    assert (p1.recalled, p1.same_fact_lines, p1.duplicate_lines, p1.stale_hit) == (True, 1, 0, [])
    assert (p2.recalled, p2.stale_hit, p2.duplicate_lines, p2.same_fact_lines) == (True, ["Lisbon"], 1, 0)
    assert [line.get("kind") for line in p2.lines] == [None, "fact_in_request", "request", "request", "update"]
    assert (p3.recalled, p3.missing, p3.stale_hit) == (False, ["f3"], ["Lisbon"])
    figures = summarize([p1, p2, p3])
    assert figures["fact_recall"] == round(2 / 3, 3)
    assert figures["memory_lines"] == 9 and figures["personalization_lines"] == 1
    # 2 requests, "hi there" and t4's request part
    assert figures["junk_lines"] == 4 and figures["junk_share"] == round(4 / 9, 3)
    assert figures["fact_turn_lines_without_fact"] == 1
    assert (figures["stale_probes"], figures["stale_rate"], figures["stale_instead"]) == (2, 1.0, 0.5)
    assert (figures["duplicate_lines"], figures["probes_with_duplicates"], figures["same_fact_lines"]) == (1, 1, 1)


def test_what_was_stored_per_kind_on_a_handcrafted_case():
    user = parse_user(USER, "u.json")
    memories = [{"text": T["t1"], "scope": "event"}, {"text": T["t2"], "scope": "profile"},
                {"text": T["t3"], "scope": "event"}, {"text": T["t4"], "scope": "event", "retired": True},
                {"text": T["t5"], "scope": "profile"}, {"text": "Sounds like the user likes trains", "scope": "event"}]
    s = stored_summary(user, memories)
    assert (s["memories"], s["retired"]) == (5, 1)
    assert s["turns_with_memory"] == {"fact": 1, "fact_in_request": 0, "request": 1, "small_talk": 1, "update": 1,
                                      "repeat": 0}
    assert s["memories_by_source"] == {"fact": 1, "request": 1, "small_talk": 1, "update": 1, "unmatched": 1}
    assert (s["facts"], s["facts_stored"], s["superseded_facts"], s["superseded_live"]) == (2, 2, 1, 0)
    assert (s["fact_memories"], s["fact_memories_profile"]) == (2, 2)
    assert s["false_superseded"] == 0  # t4 (Lisbon) was superseded, but f2 is no current fact


def test_a_current_fact_held_only_by_a_superseded_memory_is_a_false_supersede():
    user = parse_user(USER, "u.json")
    lost = {"text": T["t2"], "scope": "profile", "retired": True, "superseded_by": "m9"}
    assert stored_summary(user, [lost, {"text": T["t5"], "scope": "profile"}])["false_superseded"] == 1
    forgotten = {**lost, "superseded_by": None, "retired_reason": "forgotten"}  # retired, but not by a change
    assert stored_summary(user, [forgotten, {"text": T["t5"], "scope": "profile"}])["false_superseded"] == 0
    kept = [lost, {"text": T["t6"], "scope": "profile"}, {"text": T["t5"], "scope": "profile"}]  # a repeat keeps f1 live
    assert stored_summary(user, kept)["false_superseded"] == 0


def test_the_command_refuses_a_user_outside_the_selection():
    result = CliRunner().invoke(bench_main, ["assistant", "--split", "heldout", "--user", "en-dana"])
    assert result.exit_code == 2 and "--user" in result.output and "en-dana" in result.output


# -- end to end ---------------------------------------------------------------------------


def test_three_users_through_the_real_gateway(tmp_path: Path, redis_url: str):
    """2 English users and 1 Chinese through the repo's gateway.yaml (personalization's
    cache off so the probes need not wait for its TTL): the replay reaches the upstream as
    the dataset says, probes are not memorized, and every figure is there."""
    users = [u for u in load_users() if u.user in ("en-dana", "en-nora", "zh-yan")]
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    for entry in config["plugins"]:
        if entry["name"] == "personalization":
            entry["config"] = {**(entry.get("config") or {}), "cache_ttl_s": 0}
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    double = UpstreamDouble()
    result = asyncio.run(run_async(users, path, redis_url=redis_url, double=double))

    turns = sum(len(u.turns) for u in users)
    probes = sum(len(u.probes) for u in users)
    assert result["replayed_requests"] == turns and len(double.chat_requests()) == turns + probes
    last: dict[str, list] = {}
    for rec in double.chat_requests():
        last[rec.json["metadata"]["conversation_id"]] = rec.json["messages"]
    for user in users:
        for session in user.sessions:
            conv = next(c for c in last if c.startswith(f"{user.user}-{session.id}-"))
            said = [(m["role"], m["content"]) for m in last[conv] if m["role"] in ("user", "assistant")]
            expected = [pair for t in session.turns for pair in (("user", t.user), ("assistant", t.assistant))]
            assert said == expected[:-1]

    # en-nora is held out: groups per split too, only the pairs that have users
    assert set(result["groups"]) == {"all", "en", "zh", "dev", "heldout", "dev/en", "dev/zh", "heldout/en"}
    groups = result["groups"]
    assert groups["all"]["probes"] == probes == groups["en"]["probes"] + groups["zh"]["probes"]
    assert groups["all"]["users"] == 3 and groups["zh"]["users"] == 1
    for name in ("fact_recall", "junk_share", "stale_rate", "duplicate_lines", "same_fact_lines", "stored"):
        assert name in groups["all"]
    assert 0.0 <= groups["all"]["fact_recall"] <= 1.0
    for user in users:
        stored = result["stored"][user.user]
        assert stored["turns"] == {k: n for k, n in Counter(t.kind for t in user.turns).items()}
        assert stored["facts_stored"] >= 1
        asked = {p.ask for p in user.probes}
        assert not [m for m in result["memories"][user.user] if m["text"] in asked], "a probe was memorized"
    table = report(result)
    assert "| all | 3 |" in table and "| zh | 1 |" in table

    # the regression subset of the quality targets, per language (README "What a chat turns into")
    for lang in ("en", "zh"):
        figures = groups[lang]
        assert figures["fact_recall"] >= 0.8, (lang, figures)
        assert figures["duplicate_lines"] == 0, (lang, figures)
        assert figures["junk_share"] <= 0.1, (lang, figures)
    for user in users:  # no request or small talk became a memory
        formed = result["stored"][user.user]["turns_with_memory"]
        assert formed.get("request", 0) == 0 and formed.get("small_talk", 0) == 0, (user.user, formed)


def test_extract_mode_calls_the_given_model_through_the_tap_and_stores_its_facts(tmp_path: Path, redis_url: str):
    """``--mode extract --model-url``: memorize runs in extract mode against that model
    (here the memory-model double on its own loopback server), every call is recorded
    with its step and conversation, and the extracted facts are what is stored."""
    from bench.assistant.run import ExtractModel, model_report
    from tests.memorization.memory_model import MemoryModel, fact
    from tests.support.loopback import LoopbackServer

    users = [u for u in load_users() if u.user == "en-dana"]
    config = yaml.safe_load(DEFAULT_CONFIG.read_text())
    for entry in config["plugins"]:
        if entry["name"] == "personalization":
            entry["config"] = {**(entry.get("config") or {}), "cache_ttl_s": 0}
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    model = MemoryModel()
    model.always["memorize_extraction"] = {"facts": [fact("The user keeps bees on the roof")], "gist": None}
    model_double = UpstreamDouble()
    model_double.default = model
    server = LoopbackServer(model_double, lifespan="off").start()
    try:
        extract = ExtractModel(server.url + "/v1", "tiny", max_tokens=64, timeout_s=10)
        result = asyncio.run(run_async(users, path, redis_url=redis_url, extract=extract, drain_timeout_s=60))
    finally:
        server.stop()

    turns = len(users[0].turns)
    assert result["mode"] == "extract" and result["job_outcomes"].get("done") == turns
    assert result["dead_letters"] == []
    steps = Counter(c["step"] for c in result["model_calls"])
    assert steps["memorize_decision"] == turns and steps["memorize_extraction"] == turns
    assert all(c["status"] == 200 and c["response_format"] == "json_schema" for c in result["model_calls"])
    first_user_turn = users[0].sessions[0].turns[0].user
    assert any(first_user_turn in c["conversation"] for c in result["model_calls"])
    assert all(b["max_tokens"] == 64 and b["model"] == "tiny" for b in model.calls["memorize_decision"])
    texts = {m["text"] for m in result["memories"]["en-dana"] if not m["retired"]}
    assert "The user keeps bees on the roof" in texts
    assert "| memorize_extraction |" in model_report(result) and "jobs/s" in report(result)
