"""Run the gateway under uvicorn (uvloop event loop, httptools parser).

uvicorn's own ``server`` and ``date`` headers are off: the gateway relays the upstream's.
"""

from __future__ import annotations

import gc
import socket
from typing import Any

import uvicorn

from gateway.app import create_app
from gateway.config import GatewayConfig

__all__ = ['serve', 'uvicorn_config']


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


def serve(config: GatewayConfig, sock: socket.socket | None = None) -> None:
    """Serve until interrupted (SIGINT/SIGTERM); blocks.

    The objects alive after start-up are frozen out of the garbage collector with a
    higher gen-0 threshold (fewer, shorter collections: p99 at c=64 319 -> 254 ms in the
    same measurement, ``python -m bench proxy``).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    server = uvicorn.Server(uvicorn_config(create_app(config), config))
    server.run(sockets=[sock] if sock else None)
