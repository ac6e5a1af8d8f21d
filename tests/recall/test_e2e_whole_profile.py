"""End to end through the real gateway (real Redis, the default embedder, the openai SDK):
when all of a user's profile candidates fit in ``profile_tokens`` they all reach the
prompt, not only the ``profile_limit`` pick (plugins.auto_recall); past the budget, when
the search's pool is full, with ``profile_tokens: 0`` or with an explicit ``profile_topk``,
the pick applies."""

from __future__ import annotations

import httpx
import openai

from gateway.memory.records import Tenant
from plugins.auto_recall import profile_fits
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


def _seed(gw, seed, facts) -> None:
    seed(gw, ALICE, *[memory(t, scope="profile", type="semantic") for t in facts])


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


def test_a_profile_past_the_budget_gets_the_pick(start_gateway, upstream, seed):
    chain = [CHAIN[0], {"name": "auto_recall", "config": {"profile_tokens": 38}}, *CHAIN[2:]]
    gw = start_gateway(registry=REGISTRY, plugins=chain)
    _seed(gw, seed, FACTS)  # 39 tokens together (cl100k)
    assert len(_shown(gw, upstream, FACTS)) == 5


def test_a_profile_the_pool_cannot_hold_whole_gets_the_pick(start_gateway, upstream, seed):
    """15 facts fill the pool (PROFILE_POOL times profile_limit): the search may have left
    some out, so the topic, slot and health places of the pick apply, whatever the tokens."""
    more = ("My lucky number is seven", "I am left-handed", "I like jigsaw puzzles", "I own a red umbrella",
            "I whistle when nervous", "I read crime novels", "I prefer tea to coffee", "I hate loud music")
    gw = start_gateway(registry=REGISTRY, plugins=CHAIN)
    _seed(gw, seed, (*FACTS, *more))
    assert len(_shown(gw, upstream, (*FACTS, *more))) == 5


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
