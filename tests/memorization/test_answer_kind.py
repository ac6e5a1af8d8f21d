"""A user's short answer to the other side's question is kept with the question; its kind
(profile or event) is read from the question and the answer together: a lasting answer (an
age, a breed, a job, where the user works, a medication, a habit with its frequency) is a
profile fact, an answer that tells an episode or answers a question about the past stays
an event, and a bare "yes" keeps the question's own kind."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.memorization.jobs import Job, Turn
from gateway.memorization.verbatim import answer_type, verbatim_plan
from gateway.memory.records import MemoryType, Scope

AT = datetime(2026, 5, 1, 12, tzinfo=UTC)


def _job(question: str, answer: str, *, asked_in_job: bool) -> Job:
    """The answer as the job's last turn; the question either the job's previous turn (the
    assistant's) or only the answer's context (the chat path: the reply came before)."""
    turns = [Turn(role="assistant", text=f"Sure. {question}", at=AT, hash="h0", index=0)] if asked_in_job else []
    turns.append(Turn(role="user", text=answer, at=AT, hash="h1", index=len(turns), context=f"Sure. {question}"))
    return Job(job_id="j" * 32, user_id="alice", friend_id="tutor", enqueued_at=AT, turns=tuple(turns))


def _answer_memory(question: str, answer: str, asked_in_job: bool = False) -> tuple[str, Scope, MemoryType]:
    job = _job(question, answer, asked_in_job=asked_in_job)
    plan = verbatim_plan(job, [t.text for t in job.turns], ["user"], skip_small_talk=True, profile=True,
                         formation="disclosure")
    (op,) = [op for op in plan.ops if op.memory is not None]
    assert op.memory is not None
    return op.memory.text, op.memory.scope, op.memory.type


LASTING = [
    ("How old is she?", "gonna be 4 in march"),
    ("How old is Pixel?", "ten weeks"),
    ("Where do you work?", "at a bakery downtown"),
    ("Is she on any meds too?", "yeah, benazepril twice a day"),
    ("How many shifts a week will you be doing?", "3, sometimes 4 if someone calls out"),
    ("你家宝宝多大了？", "三岁半"),
    ("你在哪里上班？", "在一家外企"),
    ("你现在一周练几次？", "五次，上肢为主"),
    ("你主要投什么岗位？", "算法岗，视觉方向"),
    ("你骑的是什么车？", "雅迪的，跑了两年了"),  # a reply with no subject of its own, lasting with its question too
    # a progressive with a complement, or a rate, asks what holds
    ("How many are you cooking for?", "4, me carla and the two boys"),
    ("How many miles are you running per week right now?", "around 30, mostly easy runs"),
    ("What are you playing on?", "ps5 rn, saving up for a pc"),
]
EPISODES = [
    ("How was the trip?", "amazing, whales everywhere"),
    ("What did you have for lunch?", "a burrito"),
    ("What did you order?", "pad thai"),
    ("How are you feeling today?", "pretty tired honestly"),
    ("今天吃的什么？", "火锅"),
    ("周末去哪玩了？", "爬山"),
    ("周末去哪玩了？", "去爬山了"),  # a reply with no subject of its own: read with the question, an episode
    # questions about the moment of the conversation
    ("How's your day going?", "busy, back to back meetings"),
    ("What are you up to?", "just watching tv"),
    ("Where are you now?", "at the airport"),
    ("What are you cooking?", "lasagna"),
    ("What's the weather like?", "raining again"),
    ("你在干嘛呢？", "在追剧"),
    ("路上堵吗？", "堵死了"),
]


@pytest.mark.parametrize(("question", "answer"), LASTING)
@pytest.mark.parametrize("asked_in_job", [False, True])
def test_a_lasting_answer_to_a_question_is_a_profile_fact(question: str, answer: str, asked_in_job: bool):
    text, scope, kind = _answer_memory(question, answer, asked_in_job)
    assert text == f"{question} — {answer}"
    assert scope is Scope.PROFILE and kind in (MemoryType.SEMANTIC, MemoryType.PREFERENCE)


@pytest.mark.parametrize(("question", "answer"), EPISODES)
@pytest.mark.parametrize("asked_in_job", [False, True])
def test_an_answer_that_tells_an_episode_stays_an_event(question: str, answer: str, asked_in_job: bool):
    text, scope, kind = _answer_memory(question, answer, asked_in_job)
    assert text == f"{question} — {answer}"
    assert (scope, kind) == (Scope.EVENT, MemoryType.EPISODIC)


def test_a_question_about_the_past_keeps_a_change_or_a_habit_it_names():
    assert answer_type("Where did you move to?", "Leeds, moved in june") is not None  # a change holds after its day
    assert answer_type("What did the doctor put you on?", "metformin twice a day") is not None  # a habit with its frequency
    assert answer_type("What did the doctor say?", "nothing new") is None


def test_a_bare_yes_keeps_the_kind_of_what_it_confirms():
    assert _answer_memory("So you're allergic to shellfish?", "yes")[1:] == (Scope.PROFILE, MemoryType.SEMANTIC)
    assert _answer_memory("So your flight is on May 3rd?", "yep")[1:] == (Scope.EVENT, MemoryType.EPISODIC)


@pytest.mark.parametrize("question", ["Are you a nurse?", "Do you live in Berlin?", "Is your son 4?", "Are you vegetarian?"])
def test_a_bare_yes_after_an_inverted_question_keeps_what_it_confirms(question: str) -> None:
    """An English yes/no question is read in its declarative order ("Are you a nurse?" ~ "you
    are a nurse", Quirk et al. 1985, 11.5), so a bare "yes" confirms a lasting fact."""
    assert _answer_memory(question, "yes")[1:] == (Scope.PROFILE, MemoryType.SEMANTIC)


@pytest.mark.parametrize("question", ["Are you free tonight?", "Are you going to the party tomorrow?", "Did you sleep ok?",
                                      "Can you send me the recipe?"])
def test_a_bare_yes_after_an_inverted_question_about_the_moment_stays_an_event(question: str) -> None:
    memory = _answer_memory(question, "yes")
    assert memory[1:] == (Scope.EVENT, MemoryType.EPISODIC)
