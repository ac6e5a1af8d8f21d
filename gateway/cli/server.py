"""Run the gateway under uvicorn (uvloop event loop, httptools parser).

uvicorn's own ``server`` and ``date`` headers are off: the gateway relays the upstream's.

``server.workers: N`` > 1 (:func:`serve_processes`) runs N gateway processes on the one
port with uvicorn's multiprocess supervisor (``uvicorn.supervisors.Multiprocess``): this
process binds the socket, spawns N processes that each build the whole gateway
(:func:`gateway.app.create_app`) and accept on the shared socket, pings them and replaces
one that dies or hangs. What the processes share and what each keeps:

- **Redis**: ``memory.redis_url``, or the embedded redis-server, which this supervising
  process owns (:class:`gateway.runtime.redis_server.EmbeddedRedis`, restarted by its watchdog)
  and hands to every gateway process as ``memory.redis_url``; a gateway process that dies
  takes no Redis with it. ``memgate worker`` processes on the same data dir reuse it.
- **per process**: the key cache (``auth.cache_ttl_s``), the settings cache
  (``settings.cache_ttl_s``), plugin caches, the upstream pool and
  ``memorize.worker.in_serve`` memorization workers (N × ``in_serve`` in all).
- **metrics**: prometheus_client's multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, a
  fresh private directory made here unless the environment names one): every process
  writes its counters and histograms to files there and ``GET /metrics``, whichever
  process answers it, adds up all of them (:meth:`gateway.runtime.metrics.Metrics.render`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from typing import Any

import uvicorn

from gateway.app import create_app
from gateway.config import GatewayConfig

__all__ = ['MULTIPROC_ENV', 'serve', 'serve_processes', 'uvicorn_config']

#: prometheus_client reads it at import: where multiprocess metric files live.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def uvicorn_config(app: Any, config: GatewayConfig, **overrides: Any) -> uvicorn.Config:
    """The uvicorn settings the gateway runs with."""
    options: dict[str, Any] = {
        "host": config.server.host,
        "port": config.server.port,
        "loop": "uvloop",
        "http": "httptools",
        "lifespan": "on",
        "access_log": config.server.access_log,
        "server_header": False,
        "date_header": False,
        "timeout_keep_alive": 30,
        "log_level": "info",
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)


def _tune_gc() -> None:
    """Freeze the objects alive so far out of the garbage collector, with a higher gen-0
    threshold (fewer, shorter collections: p99 at c=64 319 -> 254 ms in the same
    measurement, ``python -m bench proxy``)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def serve(config: GatewayConfig, sock: socket.socket | None = None) -> None:
    """Serve until interrupted (SIGINT/SIGTERM); blocks. ``server.workers`` > 1: see
    :func:`serve_processes` (``sock`` is then not supported)."""
    if config.server.workers > 1:
        if sock is not None:
            raise ValueError("serve(sock=...) runs one process; server.workers must be 1")
        serve_processes(config)
        return
    _tune_gc()
    server = uvicorn.Server(uvicorn_config(create_app(config), config))
    server.run(sockets=[sock] if sock else None)


def _process_app(config: GatewayConfig, log_level: int) -> Any:
    """The app of one spawned gateway process (uvicorn calls it: ``factory=True``).
    Module level, so the spawn start method can pickle it with its arguments."""
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_app(config)
    _tune_gc()
    return app


@contextlib.contextmanager
def _multiproc_metrics_dir() -> Iterator[str]:
    """``PROMETHEUS_MULTIPROC_DIR`` for the spawned processes: the environment's (kept),
    else a fresh private directory removed on exit."""
    given = os.environ.get(MULTIPROC_ENV)
    if given:
        os.makedirs(given, exist_ok=True)
        yield given
        return
    path = tempfile.mkdtemp(prefix="memgate-metrics-")
    os.environ[MULTIPROC_ENV] = path
    try:
        yield path
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def _shared_redis(config: GatewayConfig) -> Iterator[GatewayConfig]:
    """``config`` with ``memory.redis_url`` set: as given, or the embedded redis-server of
    ``memory.data_dir``, owned by this process (or reused from the data dir's owner) for
    as long as the gateway processes run."""
    if config.memory.redis_url:
        yield config
        return
    from gateway.runtime.redis_server import EmbeddedRedis

    server = EmbeddedRedis(config.memory.data_dir / "redis", supervise=True)
    url = server.open()
    try:
        memory = config.memory.model_copy(update={"redis_url": url})
        yield config.model_copy(update={"memory": memory})
    finally:
        server.stop()


def serve_processes(config: GatewayConfig) -> None:
    """Run ``server.workers`` gateway processes on ``server.host:server.port`` until
    SIGINT/SIGTERM (module docstring); blocks. Each process is spawned (a fresh
    interpreter: the config is pickled to it) and builds its own gateway.

    Raises:
        gateway.runtime.redis_server.EmbeddedRedisError: the embedded Redis cannot start.
        SystemExit: the port cannot be bound (uvicorn logs why).
    """
    from uvicorn.supervisors import Multiprocess

    with _multiproc_metrics_dir(), _shared_redis(config) as shared:
        factory = functools.partial(_process_app, shared, logging.getLogger().level)
        settings = uvicorn_config(factory, shared, factory=True, workers=shared.server.workers)
        sock = settings.bind_socket()
        try:
            Multiprocess(settings, sockets=[sock]).run()
        finally:
            sock.close()
