"""The whole loop through the real gateway: a conversation is memorized by the in-serve
worker and recalled into the upstream request of a later conversation (issue 5, done when)."""

import time

import httpx
import openai

from tests.support.gateway import ALICE_KEY, BOB_KEY

CHAIN = [
    {"name": "auto_recall", "config": {"limit": 5, "threshold": 0.2, "high_relevance_threshold": 0.45}},
    {"name": "hybrid_injection", "config": {"placement": "separate"}},
    {"name": "token_budget"},
    {"name": "memorize", "config": {"mode": "verbatim"}},
]


def system_texts(request) -> str:
    return "\n".join(m["content"] for m in request.json["messages"] if m["role"] == "system")


def test_a_conversation_is_remembered_and_recalled_in_a_later_one(start_gateway, upstream):
    gw = start_gateway(plugins=CHAIN)
    alice = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    alice.chat.completions.create(model="gpt-4o", messages=[
        {"role": "system", "content": "You are a friendly tutor."},
        {"role": "user", "content": "I just adopted a beagle puppy and named him Pixel."}])
    deadline = time.monotonic() + 60  # generous (a loaded machine): polling, no timing assertion
    headers = {"authorization": f"Bearer {ALICE_KEY}"}
    while not httpx.get(gw.url + "/v1/memories", headers=headers, timeout=30).json()["items"]:
        assert time.monotonic() < deadline, "the reply was not memorized"
        time.sleep(0.1)
    upstream.requests.clear()
    stream = alice.chat.completions.create(model="gpt-4o", stream=True, messages=[
        {"role": "system", "content": "You are a friendly tutor."},
        {"role": "user", "content": "What did I name my new beagle puppy?"}])
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    sent = upstream.chat_requests()[-1]
    assert sent.json["messages"][0] == {"role": "system", "content": "You are a friendly tutor."}
    assert "named him Pixel" in system_texts(sent)
    # another user asking the same question gets nothing of Alice's
    bob = openai.OpenAI(base_url=gw.base_url, api_key=BOB_KEY, max_retries=0)
    bob.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "What did I name my new beagle puppy?"}])
    assert "Pixel" not in upstream.chat_requests()[-1].body.decode()
