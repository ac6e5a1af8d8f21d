"""End to end through the real gateway (real Redis, the default embedder, the openai SDK):
a lasting fact the request needs reaches the prompt because it shares a life topic with
the request (plugins.topics), not because its words or its embedding match: a profile
fact among better-ranked ones, in English and in Chinese, and a fact told as an event."""

from __future__ import annotations

import openai

from gateway.memory.records import Tenant
from tests.recall.conftest import CHAIN, REGISTRY, memory
from tests.support.gateway import ALICE_KEY

ALICE = Tenant("alice", "tutor")


def _prompt(gw, upstream, text: str) -> str:
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
    return "\n".join(str(m["content"]) for m in upstream.chat_requests()[-1].json["messages"] if m["role"] == "system")


#: Six profile facts that share the vet question's words ("bring", "tomorrow") and no topic
#: with it: the store ranks them above the pet.
BETTER_RANKED = (
    "I always bring my own lunch to work", "Tomorrow I start my evening pottery class",
    "I should bring my reading glasses more often", "Tomorrow my sister flies in from Oslo",
    "I bring a thermos of green tea everywhere", "I teach maths at a secondary school",
)


def _profile(text: str):
    return memory(text, scope="profile", type="semantic")


def test_the_pet_reaches_a_vet_question_past_five_better_ranked_facts(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    seed(gw, ALICE, *[_profile(t) for t in BETTER_RANKED], _profile("Our beagle Pepper is eleven"))
    prompt = _prompt(gw, upstream, "What should I bring to the vet tomorrow?")
    assert "Our beagle Pepper is eleven" in prompt
    assert prompt.count("Pepper") == 1 and sum(line.startswith(("1. ", "2. ", "3. ", "4. ", "5. ", "6. "))
                                               for line in prompt.splitlines()) <= 6


def test_a_chinese_grandchild_reaches_a_question_about_a_crying_baby(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    seed(gw, ALICE, *[_profile(t) for t in (
        "我每天晚上去跳广场舞", "晚上老睡不着觉", "老伴晚上打呼噜", "我晚上不吃主食",
        "晚上喜欢听收音机", "我住在天津河西区",
    )], _profile("外孙刚满月"))
    prompt = _prompt(gw, upstream, "小宝宝晚上老哭咋办")
    assert "外孙刚满月" in prompt


def test_a_fact_told_as_an_event_joins_by_topic_and_topic_events_zero_turns_it_off(start_gateway, upstream, seed):
    fact = "Leo started daycare on Tuesday and cried at drop-off"
    events = [memory(t, scope="event") for t in (
        "Had a great time at the office party ideas session", "The party at Sam's place was loud",
        "Watched a documentary about bees", fact,
    )]
    question = "any birthday party ideas for my kid?"
    for topic_events, expected in ((2, True), (0, False)):
        plugins = [CHAIN[0], {"name": "auto_recall", "config": {"topic_events": topic_events}}, *CHAIN[2:]]
        gw = start_gateway(registry=REGISTRY, plugins=plugins)  # a fresh key prefix: seeded anew
        seed(gw, ALICE, *events)
        assert (fact in _prompt(gw, upstream, question)) is expected


def test_an_event_with_no_topic_joins_through_a_name_it_shares_with_a_topical_memory(start_gateway, upstream, seed):
    """"How old is Pixel? — ten weeks" names no life topic; the profile memory that names
    the puppy Pixel is ``pets``, so the age reaches a question about the dog's walks. The
    same memories typed all in lower case name no one: the age stays out."""
    question = "How long should our dog's walks be at his age?"
    for puppy, age, expected in (
        ("We just adopted a beagle puppy, his name is Pixel.", "How old is Pixel? — ten weeks", True),
        ("we just adopted a beagle puppy, his name is pixel.", "how old is pixel? — ten weeks", False),
    ):
        gw = start_gateway(registry=REGISTRY, plugins=CHAIN)  # a fresh key prefix: seeded anew
        seed(gw, ALICE, _profile(puppy), _profile("I teach maths at a secondary school"),
             *[memory(t, scope="event") for t in ("Watched a documentary about bees", age, "The party at Sam's place was loud")])
        prompt = _prompt(gw, upstream, question)
        assert (age in prompt) is expected, prompt
        assert puppy in prompt


def test_the_inspector_says_why_a_lasting_fact_is_high_below_the_cut(start_gateway, upstream, seed):
    """A lasting fact picked past the ranking is ``high`` whatever its calibrated relevance:
    the admin recall inspector (what the console shows) marks it ``added`` with why, and
    only it; the hits high by relevance alone carry no ``added``."""
    import httpx

    from plugins.auto_recall import LASTING_FACT
    from tests.support.gateway import ADMIN_KEY

    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    seed(gw, ALICE, *[_profile(t) for t in BETTER_RANKED], _profile("Our beagle Pepper is eleven"))
    out = httpx.post(gw.url + "/v1/admin/recall/inspect", headers={"authorization": f"Bearer {ADMIN_KEY}"}, json={
        "user_id": "alice", "friend_id": "tutor",
        "messages": [{"role": "user", "content": "What should I bring to the vet tomorrow?"}]}, timeout=60).json()
    cut = out["annotations"]["auto_recall"]["high_threshold"]
    rows = {m["text"]: m for m in out["recalled"]}
    pet = rows["Our beagle Pepper is eleven"]
    assert pet["relevance"] == "high" and pet["calibrated"] < cut and pet["added"] == LASTING_FACT
    for row in out["recalled"]:
        if "added" not in row:
            assert (row["relevance"] == "high") == (row["calibrated"] >= cut), row
        else:
            assert row["relevance"] == "high"
