"""An ASGI app under uvicorn on a 127.0.0.1 port in a background thread (benchmarks that
run a real gateway in-process; tests have their own copy in ``tests/support``)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


class LoopbackServer:
    """Serves ``app`` on ``127.0.0.1:<free port>`` from :meth:`start` to :meth:`stop`."""

    def __init__(self, app: Any) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning", loop="asyncio"))
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> "LoopbackServer":
        """Raises RuntimeError / TimeoutError when the server does not come up."""
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("server thread died during start-up")
            if time.monotonic() > deadline:
                raise TimeoutError("server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()
