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
