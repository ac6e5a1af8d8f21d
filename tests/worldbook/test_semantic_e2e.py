"""Semantic world-book triggers (seed 001 ``triggerType`` semantic = SillyTavern's
"vectorized" entries) through the real gateway, the real ``openai`` SDK and the real local
embedding model (all-MiniLM-L6-v2), in English and Chinese; and failing open: with the
embedder down or slow, keyword triggers still work and ``x-memgate-degraded`` says so.
Assertions are on what the upstream double received."""

import asyncio
import threading

import openai
import pytest

from gateway.lorebook.model import Lorebook, LoreEntry
from gateway.runtime.errors import MemoryUnavailable
from tests.support.gateway import ALICE_KEY, GatewayServer, make_config
from tests.worldbook.test_world_book_e2e import SYSTEM, put

LIGHTHOUSE = "[The old lighthouse keeper lost his wife to a storm at sea.]"
THUNDER = "[Luna is afraid of thunder and hides under the shrine bell.]"
GATE = "[The Moon Gate opens only at midnight.]"
TEMPLE = "【月神殿在湖心岛上，只有满月之夜才能进入。】"
CAKE = "【露娜最喜欢吃桂花糕，每年中秋都会亲手做。】"


class SwitchedEmbedder:
    """The shared real model, or one that fails (``mode = "fail"``), or one that hangs
    until the test ends (``"hang"``)."""

    def __init__(self, inner):
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self.mode = "ok"
        self.gate = threading.Event()

    async def embed_many(self, texts):
        if self.mode == "fail":
            raise RuntimeError("the model process died")
        if self.mode == "hang":
            await asyncio.to_thread(self.gate.wait)
            raise MemoryUnavailable("released at the end of the test")
        return await self.inner.embed_many(texts)

    async def aclose(self):
        self.gate.set()


@pytest.fixture
def start(upstream, redis_url, shared_model):
    started = []

    def run(**world_book):
        embedder = SwitchedEmbedder(shared_model.for_gateway())
        config = make_config(upstream.url, redis_url, plugins=[{"name": "world_book", "config": {
            "scan_depth": 1, "random_seed": 1, **world_book}}])
        server = GatewayServer(config, embedder=embedder)
        server.start()
        started.append(server)
        return server

    yield run
    for server in started:
        server.embedder.gate.set()
        server.stop()


def lore(gw, redis_url, *entries):
    put(redis_url, gw.config.memory.key_prefix, Lorebook(id="shrine", friend_id="tutor", entries=entries))


def sent(upstream):
    return [m["content"] for m in upstream.chat_requests()[-1].json["messages"]]


def ask(gw, text, stream=False):
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    messages = [SYSTEM, {"role": "user", "content": text}]
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=messages, stream=stream)
    if stream:
        assert "".join(c.choices[0].delta.content or "" for c in raw.parse() if c.choices)
    else:
        assert raw.parse().choices[0].message.content
    return raw.headers.get("x-memgate-degraded")


@pytest.mark.parametrize("stream", [False, True])
def test_an_english_question_activates_the_entry_it_is_about(start, upstream, redis_url, stream):
    gw = start()
    lore(gw, redis_url, LoreEntry(id="keeper", content=LIGHTHOUSE, trigger_type="semantic"),
         LoreEntry(id="thunder", content=THUNDER, trigger_type="semantic"))
    assert ask(gw, "Tell me about the man who keeps the light by the ocean, and his tragedy.", stream) is None
    got = sent(upstream)
    assert LIGHTHOUSE in got[1] and THUNDER not in got[1]  # after the character definition
    ask(gw, "What's two plus two?", stream)
    assert len(sent(upstream)) == 2  # nothing similar enough: no lore


def test_a_chinese_question_activates_the_entry_it_is_about(start, upstream, redis_url):
    # all-MiniLM-L6-v2 is trained on English and reads Chinese mostly by shared
    # characters (unrelated Chinese texts score 0.4-0.6), hence the higher threshold
    gw = start(semantic_threshold=0.7, semantic_max_entries=1)
    lore(gw, redis_url, LoreEntry(id="temple", content=TEMPLE, trigger_type="semantic", position="depth", depth=0,
                                  role="user"),
         LoreEntry(id="cake", content=CAKE, trigger_type="semantic", position="depth", depth=0, role="user"))
    ask(gw, "满月的时候我们去月神殿吧")
    assert sent(upstream)[-1] == TEMPLE
    ask(gw, "露娜，你会做桂花糕吗？")
    assert sent(upstream)[-1] == CAKE and TEMPLE not in sent(upstream)


def test_with_the_embedder_down_keywords_still_trigger_and_the_reply_says_degraded(start, upstream, redis_url):
    gw = start()
    lore(gw, redis_url, LoreEntry(id="keeper", content=LIGHTHOUSE, trigger_type="semantic"),
         LoreEntry(id="gate", content=GATE, keywords=("moon gate",)))
    gw.embedder.mode = "fail"
    question = "Where is the moon gate? And who is the man keeping the light by the ocean?"
    assert ask(gw, question) == "world_book:semantic_unavailable"
    assert GATE in sent(upstream)[1] and LIGHTHOUSE not in sent(upstream)[1]
    gw.embedder.mode = "ok"  # back: the entries are embedded on the next request
    assert ask(gw, question) is None
    assert GATE in sent(upstream)[1] and LIGHTHOUSE in sent(upstream)[1]


def test_with_the_embedder_too_slow_keywords_still_trigger(start, upstream, redis_url):
    gw = start(semantic_timeout_ms=50)
    lore(gw, redis_url, LoreEntry(id="keeper", content=LIGHTHOUSE, trigger_type="semantic"),
         LoreEntry(id="gate", content=GATE, keywords=("moon gate",)))
    gw.embedder.mode = "hang"
    assert ask(gw, "Where is the moon gate, by the lighthouse?", stream=True) == "world_book:semantic_timeout"
    assert GATE in sent(upstream)[1] and LIGHTHOUSE not in sent(upstream)[1]
