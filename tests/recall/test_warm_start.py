"""Warm start: a fresh gateway loads and runs every model of the memory path (its own
embedder, the calibration, the tokenizers) during start-up, before ``/readyz`` says ready
and before it serves the first request; a warm-up that fails is reported, not fatal."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import httpx
import openai
import pytest

from gateway.memory import calibration
from gateway.memory.embeddings import model_identity
from gateway.memory.factory import open_memory
from gateway.memory.records import Tenant
from tests.recall.conftest import CHAIN, REGISTRY, memory
from tests.support.gateway import ALICE_KEY, GatewayServer, make_config
from tests.support.plugins import NoConfig

EMMA = "The user's daughter Emma is seven years old."
QUESTION = "How old is my daughter Emma? She is seven, right?"


def seed_store(config: Any) -> None:
    """Store EMMA for alice with the configured provider's own model (a store of our own
    on the gateway's Redis and key prefix, closed before the gateway starts)."""
    async def run() -> None:
        async with open_memory(config.memory) as store:
            await store.add(Tenant("alice", "tutor"), [memory(EMMA)])

    asyncio.run(run())


def first_chat(gw: GatewayServer) -> httpx.Headers:
    """The headers of the reply to a chat request (the question EMMA answers)."""
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    raw.parse()
    return raw.headers


@pytest.mark.parametrize("provider", ["onnx", "local"])
def test_a_fresh_gateway_runs_its_models_before_ready_and_its_first_request_carries_memory(
    provider, upstream, redis_url,
):
    config = make_config(upstream.url, redis_url, plugins=CHAIN, memory={"embedding": {"provider": provider}})
    seed_store(config)
    embedding = config.memory.embedding
    # the calibration is cached per process by model: forget it, so only this gateway's
    # start-up can have computed it
    key = (model_identity(provider, embedding.model_name), 384)  # all-MiniLM-L6-v2 both
    calibration._CACHE.pop(key, None)
    with GatewayServer(config, REGISTRY) as gw:  # its own embedder, loaded by the gateway
        # started (uvicorn accepts connections only after the lifespan's start-up): no
        # request has been served, yet the model has run and the calibration is fitted
        model = gw.gateway.store.embedder.inner  # the micro-batcher in front of the model
        assert (model.model, model.dimensions) == key
        assert model.batches >= 1 and model.texts_embedded >= 1
        assert key in calibration._CACHE and calibration._CACHE[key].done()
        assert calibration._CACHE[key].exception() is None
        assert gw.gateway.warmth.warmed == 1
        ready = httpx.get(gw.url + "/readyz", timeout=20)
        assert ready.status_code == 200 and ready.json()["checks"]["models"] is True
        headers = first_chat(gw)
        assert "x-memgate-degraded" not in headers
        sent = json.dumps(upstream.chat_requests()[-1].json["messages"])
        assert EMMA in sent


class ColdConfig(NoConfig):
    pass


class Cold:
    """A plugin whose start-up warm-up fails (a tokenizer file missing, say)."""

    name: ClassVar[str] = "cold"
    Config = ColdConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()
    warm_calls = 0

    def __init__(self, config: ColdConfig, services: Any) -> None:
        pass

    def warm(self) -> None:
        type(self).warm_calls += 1
        raise FileNotFoundError("cl100k_base.tiktoken")


def test_a_failed_warm_up_is_reported_by_readyz_and_the_gateway_still_serves_memory(start_gateway, upstream, seed):
    gw = start_gateway(registry={**REGISTRY, "cold": Cold}, plugins=[*CHAIN, {"name": "cold"}])
    seed(gw, Tenant("alice", "tutor"), memory(EMMA))
    assert gw.gateway.warmth.warmed == 0
    before = Cold.warm_calls
    ready = httpx.get(gw.url + "/readyz", timeout=20)
    assert ready.status_code == 503
    models = ready.json()["checks"]["models"]
    assert models.startswith("cold: ") and "cold: FileNotFoundError: " in models and "cl100k_base.tiktoken" in models
    assert "embedder" not in models and "tokenizer" not in models  # the rest warmed
    assert Cold.warm_calls == before + 1  # each probe tries the warm-up again
    headers = first_chat(gw)
    assert "x-memgate-degraded" not in headers
    assert EMMA in json.dumps(upstream.chat_requests()[-1].json["messages"])
