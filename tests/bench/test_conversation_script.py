"""The upstream double playing scripted conversations (what the LoCoMo via-chat benchmark
replays against), through the real gateway and the real OpenAI SDK."""

from __future__ import annotations

import openai

from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import ConversationScript


def test_each_conversation_gets_its_own_next_reply_and_questions_are_kept(start_gateway, upstream):
    script = ConversationScript()
    upstream.default = script
    script.script("c1", ["first of c1", "second of c1"])
    script.script("c2", ["only of c2"])
    gw = start_gateway()
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)

    def say(conversation: str, text: str, **metadata: str) -> str:
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}],
                                               metadata={"conversation_id": conversation, **metadata})
        assert reply.model == "gpt-4o-mini"
        return reply.choices[0].message.content

    assert [say("c1", "a"), say("c2", "b"), say("c1", "c"), say("c1", "d")] == [
        "first of c1", "only of c2", "second of c1", "ok"]
    say("q7", "what is my dog's name?", question_id="q7")
    assert list(script.received) == ["q7"]
    assert script.received["q7"]["messages"][-1]["content"] == "what is my dog's name?"
    assert len(upstream.chat_requests()) == 5
