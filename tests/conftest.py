"""Session fixtures shared by every test: one real embedded Redis for the whole run.

Set ``MEMGATE_TEST_REDIS_URL`` to use an already running Redis >= 8.0 instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.redis_server import EmbeddedRedis


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real Redis 8 server started for this test session (unix socket)."""
    external = os.environ.get("MEMGATE_TEST_REDIS_URL")
    if external:
        yield external
        return
    server = EmbeddedRedis(Path(tmp_path_factory.mktemp("redis-data")))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[tuple[object, str]]:
    """The OpenAI-compatible upstream double on a loopback port, for the whole session."""
    from tests.support.loopback import LoopbackServer
    from tests.support.upstream_double import UpstreamDouble

    double = UpstreamDouble()
    server = LoopbackServer(double, lifespan="off").start()
    try:
        yield double, server.url
    finally:
        server.stop()


@pytest.fixture
def upstream(upstream_server: tuple[object, str]):  # noqa: ANN201
    """The upstream double, reset for this test (``upstream.url`` is its base URL)."""
    double, url = upstream_server
    double.reset()  # type: ignore[attr-defined]
    double.url = url  # type: ignore[attr-defined]
    yield double
    double.reset()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def shared_model():  # noqa: ANN201
    """The real local embedding model, loaded once per session on first use."""
    from tests.support.embedding import SharedLocalModel

    return SharedLocalModel()


@pytest.fixture
def start_gateway(upstream, redis_url: str, shared_model):  # noqa: ANN001, ANN201
    """``start_gateway(registry=None, **config_sections) -> GatewayServer`` (stopped after)."""
    from tests.support.gateway import GatewayServer, make_config

    started: list[GatewayServer] = []

    def start(registry=None, **sections):  # noqa: ANN001, ANN202
        config = make_config(upstream.url, redis_url, **sections)
        server = GatewayServer(config, registry, embedder=shared_model.for_gateway())
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
