"""Of two live memories on the same thing, the newer is shown whenever the older is
(plugins.auto_recall.newer_statements): a candidate of the searches whose
``metadata.follows`` names a shown memory joins ``high``, and so does one following it in
turn; end to end through the real gateway, the openai SDK and the default embedder."""

from __future__ import annotations

import openai

from gateway.memory.records import Tenant
from plugins.auto_recall import newer_statements
from tests.recall.conftest import CHAIN, REGISTRY, memory
from tests.recall.records import hit
from tests.support.gateway import ALICE_KEY

ALICE = Tenant("alice", "tutor")


def test_a_candidate_following_a_shown_memory_joins_and_so_does_the_next_one():
    old = hit("I run a peterbilt 579", 0.9)
    mid = hit("traded the pete in for a kenworth", 0.2, metadata={"follows": old.record.id})
    last = hit("sold the kenworth, driving regional now", 0.1, metadata={"follows": mid.record.id})
    other = hit("I like country music", 0.5, metadata={"follows": "m-someone-else"})
    pool = [last, other, old, mid]
    assert [h.record.text for h in newer_statements(pool, {old.record.id})] == [mid.record.text, last.record.text]
    assert newer_statements(pool, set()) == ()
    assert newer_statements(pool, {old.record.id, mid.record.id, last.record.id}) == ()  # shown already


def _prompt(gw, upstream, text: str) -> str:
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
    return "\n".join(str(m["content"]) for m in upstream.chat_requests()[-1].json["messages"] if m["role"] == "system")


def test_the_newer_statement_reaches_the_prompt_with_the_older_one_only_when_linked(start_gateway, upstream, seed):
    older = "I run a peterbilt 579 outta amarillo, chicago and back every week"
    newer = "traded the ol pete in for a kenworth t680 last week, ride is so much smoother"
    events = ("Watched a documentary about bees", "The party at Sam's place was loud")
    for linked in (True, False):
        gw = start_gateway(registry=REGISTRY, plugins=CHAIN)  # a fresh key prefix: seeded anew
        (old,) = seed(gw, ALICE, memory(older, scope="profile", type="semantic"))
        seed(gw, ALICE, *[memory(t, scope="event") for t in events],
             memory(newer, scope="event", metadata={"follows": old.id} if linked else {}))
        prompt = _prompt(gw, upstream, "whats a good maintenance schedule for my truck")
        assert older in prompt
        assert (newer in prompt) is linked, prompt
