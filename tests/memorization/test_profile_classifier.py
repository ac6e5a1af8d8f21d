"""The learned profile gate (gateway/memorization/profile_classifier.py,
``memorize.verbatim_profile_classifier``): a profile memory the rules form that the shipped
model does not read as a lasting fact is filed as an event (not dropped); a lasting fact
stays profile, in English and Chinese."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace

import pytest

from gateway.memorization.processor import JobProcessor
from gateway.memorization.profile_classifier import STRUCTURAL, candidates, demoted, load, texts_of
from gateway.memorization.runtime import queue_for
from gateway.memorization.verbatim import verbatim_plan
from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings import load_provider
from gateway.memory.embeddings.base import Embedder, embed_texts
from gateway.memory.records import MemoryType, Scope, Tenant
from tests.memorization.conftest import count_embed_many, memorize_config
from tests.memorization.test_workers import enqueue, fresh_store
from tests.memorization.test_worth_remembering import _job

ALICE = Tenant("alice", "tutor")
JUNK = ["ugh my head is spinning 😵", "how do i get my cat to take a pill, she's wise to the cheese trick",
        "我的脑子要炸了😵", "日语敬语老用错"]
FACTS = ["I'm allergic to penicillin.", "I work as a nurse in Leeds.", "我在深圳做后端开发", "我对花生过敏"]


@pytest.fixture(scope="module")
async def script() -> AsyncIterator[Embedder]:
    """The default embedder of a new store (``language: mixed``): MiniLM for Latin, e5 for CJK."""
    embedder = await load_provider(EmbeddingConfig(language="mixed"))
    yield embedder
    await embedder.aclose()


async def _gated(embedder: Embedder, text: str) -> tuple[Scope, MemoryType, dict]:
    plan = verbatim_plan(_job(("user", text)), [text], ["user"], skip_small_talk=True, profile=True,
                         formation="disclosure")
    assert len(candidates(plan)) == 1  # the rules file it as profile
    gated = demoted(plan, load(embedder.model, embedder.dimensions), await embed_texts(embedder, texts_of([plan])))
    memory = gated.ops[candidates(plan)[0]].memory
    assert memory is not None and memory.text == text  # never dropped, the same words
    return memory.scope, memory.type, memory.metadata


@pytest.mark.parametrize("text", JUNK)
async def test_a_profile_memory_that_is_no_lasting_fact_becomes_an_event(script, text: str):
    scope, kind, meta = await _gated(script, text)
    assert (scope, kind) == (Scope.EVENT, MemoryType.EPISODIC)
    assert 0 <= meta["profile_score"] < 0.5 and "slot" not in meta


@pytest.mark.parametrize("text", FACTS)
async def test_a_lasting_fact_stays_profile(script, text: str):
    scope, _kind, meta = await _gated(script, text)
    assert scope is Scope.PROFILE and "profile_score" not in meta


def test_the_shipped_weights_fit_the_script_embedders_parts_and_an_unknown_embedder_is_refused():
    models = load("script(all-MiniLM-L6-v2+onnx-int8-pc-v1|multilingual-e5-small+onnx-int8-v1)", 768)
    assert models["en"].columns == (0, 384) and models["zh"].columns == (384, 768)
    assert all(m.w.shape == (384 + STRUCTURAL,) and 0 < m.threshold < 1 for m in models.values())
    assert set(load("all-MiniLM-L6-v2+onnx-int8-pc-v1", 384)) == {"en"}
    with pytest.raises(ValueError, match=r"verbatim_profile_classifier.*text-embedding-3-small"):
        load("text-embedding-3-small", 1536)


def test_auto_is_on_where_weights_exist_and_true_refuses_an_embedder_without(env):
    queue = queue_for(memorize_config("verbatim"), env.redis)
    with_weights = SimpleNamespace(embedder=SimpleNamespace(model="all-MiniLM-L6-v2+onnx-int8-pc-v1", dimensions=384))
    without = SimpleNamespace(embedder=SimpleNamespace(model="text-embedding-3-small", dimensions=1536))
    assert memorize_config("verbatim").verbatim_profile_classifier == "auto"
    assert JobProcessor(memorize_config("verbatim"), with_weights, queue)._profile_models
    assert JobProcessor(memorize_config("verbatim"), without, queue)._profile_models is None
    off = memorize_config("verbatim", verbatim_profile_classifier=False)
    assert JobProcessor(off, with_weights, queue)._profile_models is None
    with pytest.raises(ValueError, match="no weights"):
        JobProcessor(memorize_config("verbatim", verbatim_profile_classifier=True), without, queue)


async def _stored(env, on: bool) -> tuple[dict[str, Scope], int]:
    config = memorize_config("verbatim", verbatim_profile_classifier=on)
    store = await fresh_store(env)
    await enqueue(env, config, JUNK[0], FACTS[0])
    calls = count_embed_many(store)
    await env.drain(config, store)
    return {r.text: r.scope for r in (await store.list(ALICE)).items}, calls[0]


async def test_workers_file_the_junk_as_an_event_with_no_extra_embedding_call(env):
    off, calls_off = await _stored(env, False)
    on, calls_on = await _stored(env, True)
    assert on == {JUNK[0]: Scope.EVENT, FACTS[0]: Scope.PROFILE}
    assert off == {JUNK[0]: Scope.PROFILE, FACTS[0]: Scope.PROFILE}
    # the gate's vectors are the ones the near-duplicate searches embed anyway
    assert calls_on <= calls_off
