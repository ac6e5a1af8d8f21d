"""An ASGI app under uvicorn on ``127.0.0.1:<free port>`` in a background thread.

For what runs a real server in-process: the test suite (gateway and upstream double),
the LoCoMo via-chat benchmark.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any, Self

import uvicorn


class LoopbackServer:
    """A real HTTP server on 127.0.0.1:<free port> serving ``app`` until :meth:`stop`."""

    def __init__(self, app: Any, **options: Any) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        config = {
            "lifespan": "on",
            "log_level": "warning",
            "loop": "asyncio",
            "http": "httptools",
            "server_header": False,
            "date_header": False,
            **options,
        }
        self.server = uvicorn.Server(uvicorn.Config(app, **config))
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        """uvicorn's ``Server.run``, keeping a handle on the server's event loop."""
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            await self.server.serve(sockets=[self._sock])

        with asyncio.Runner(loop_factory=self.server.config.get_loop_factory()) as runner:
            runner.run(main())

    async def on_server_loop(self, coro: Any) -> Any:
        """Await ``coro`` on the server's event loop (its objects belong to that loop)."""
        assert self.loop is not None
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> Self:
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
