"""What verbatim mode stores (issue 11, item 4): small talk skipped, stated preferences and
facts about the user as profile memories, measured on labelled zh + en turns
(``data/salience.jsonl``: the first 54 written with the rules, the last 24 after them)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from gateway.memorization.jobs import Job, Turn
from gateway.memorization.salience import is_small_talk, profile_type
from gateway.memorization.verbatim import verbatim_plan
from gateway.memory.records import MemoryType, Scope

ROWS = [json.loads(line) for line in (Path(__file__).parent / "data" / "salience.jsonl").read_text().splitlines()]


def test_labelled_turns_worth_remembering_precision_and_recall():
    kept = [not is_small_talk(r["text"]) for r in ROWS]
    tp = sum(k and r["keep"] for k, r in zip(kept, ROWS, strict=True))
    fp = sum(k and not r["keep"] for k, r in zip(kept, ROWS, strict=True))
    fn = sum(not k and r["keep"] for k, r in zip(kept, ROWS, strict=True))
    assert fn == 0, "a turn worth remembering was dropped"
    assert tp / (tp + fp) >= 0.95
    assert len(ROWS) == 78 and sum(not r["keep"] for r in ROWS) == 29


def test_labelled_turns_profile_or_event():
    worth = [r for r in ROWS if r["keep"]]
    right = sum((profile_type(r["text"]) or None) == (MemoryType(r["profile"]) if "profile" in r else None) for r in worth)
    assert right / len(worth) >= 0.95
    assert profile_type("Do you like jazz?") is None and profile_type("如果我喜欢科幻，你会推荐什么书") is None


def test_small_talk_rules_are_linear_and_keep_short_content():
    assert is_small_talk("哈" * 8000) and not is_small_talk("哈" * 7999 + "猫")
    assert not is_small_talk("I'm vegan") and not is_small_talk("我27岁")


def _job(*texts: str) -> Job:
    at = datetime(2026, 5, 1, tzinfo=UTC)
    turns = tuple(Turn(role="user", text=t, at=at, hash=f"h{i}", index=i) for i, t in enumerate(texts))
    return Job(job_id="j" * 32, kind="turns", user_id="alice", friend_id="tutor", request_id="r",
               enqueued_at=at, turns=turns, epoch=0)


def test_verbatim_plan_skips_small_talk_and_files_profile_statements():
    job = _job("hi", "I'm allergic to peanuts.", "I went running today", "谢谢")
    plan = verbatim_plan(job, [t.text for t in job.turns], ["user"], skip_small_talk=True, profile=True)
    assert [(op.memory.text, op.memory.scope, op.memory.type) for op in plan.ops if op.memory] == [
        ("I'm allergic to peanuts.", Scope.PROFILE, MemoryType.SEMANTIC),
        ("I went running today", Scope.EVENT, MemoryType.EPISODIC),
    ]
    assert plan.decision == "verbatim: 2 turn(s), 2 small talk skipped"
    everything = verbatim_plan(job, [t.text for t in job.turns], ["user"])
    assert len(everything.ops) == 4 and all(op.memory and op.memory.scope is Scope.EVENT for op in everything.ops)


def test_verbatim_keeps_the_next_messages_start_as_context_after_unless_switched_off():
    job = _job("I moved to Lisbon last spring.")
    job = job.model_copy(update={"turns": (job.turns[0].model_copy(update={"context_after": "Lisbon is lovely!"}),)})
    (on,) = verbatim_plan(job, [t.text for t in job.turns], ["user"]).ops
    (off,) = verbatim_plan(job, [t.text for t in job.turns], ["user"], context_after=False).ops
    assert on.memory is not None and on.memory.context_after == "Lisbon is lovely!"
    assert off.memory is not None and off.memory.context_after is None
