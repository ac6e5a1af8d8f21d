"""Built-in fixed-body upstream: the fallback when nginx is not installed.

A raw asyncio HTTP/1.1 server (uvloop when available) in its own process, answering the
same paths and bodies as :mod:`bench.proxy.nginx`: keep-alive, ``content-length``
request bodies (read and discarded), pipelining tolerated. It costs more CPU per request
than nginx, which on a 2-core machine competes with the proxy under test, so results
taken with it say so.

Run: ``python -m bench.proxy.upstream --port P [--sse-fixture FILE]``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from bench.proxy.bodies import (
    CHAT_PATH,
    DEFAULT_SSE_FIXTURE,
    PLAIN_PREFIX,
    SSE_PREFIX,
    load_bodies,
)
from bench.proxy.process import Child, python_env


def _response(status: bytes, content_type: bytes, body: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: " + content_type
        + b"\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


def routes(sse_fixture: Path) -> dict[bytes, bytes]:
    """Request target -> the complete response bytes."""
    bodies = load_bodies(sse_fixture)
    return {
        (PLAIN_PREFIX + CHAT_PATH).encode(): _response(b"200 OK", b"application/json", bodies.plain_reply),
        (SSE_PREFIX + CHAT_PATH).encode(): _response(b"200 OK", b"text/event-stream", bodies.sse_reply),
        b"/healthz": _response(b"200 OK", b"text/plain", b"ok"),
    }


class FixedReplyProtocol(asyncio.Protocol):
    """One connection: parse request heads, skip bodies, answer from ``routes``."""

    def __init__(self, table: dict[bytes, bytes]) -> None:
        self._table = table
        self._not_found = _response(b"404 Not Found", b"text/plain", b"not found")
        self._buf = b""
        self._skip = 0
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buf = self._buf + data
        out = []
        while True:
            if self._skip:
                taken = min(self._skip, len(buf))
                buf, self._skip = buf[taken:], self._skip - taken
                if self._skip:
                    break
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                break
            head, buf = buf[:end], buf[end + 4 :]
            lines = head.split(b"\r\n")
            parts = lines[0].split(b" ")
            target = parts[1].split(b"?", 1)[0] if len(parts) > 1 else b""
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    self._skip = int(value.strip())
            out.append(self._table.get(target, self._not_found))
        self._buf = buf
        if out and self._transport is not None:
            self._transport.write(b"".join(out))


async def serve(port: int, sse_fixture: Path) -> None:
    table = routes(sse_fixture)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: FixedReplyProtocol(table), "127.0.0.1", port, backlog=4096
    )
    async with server:
        await server.serve_forever()


def start_builtin(port: int, log_dir: Path, sse_fixture: Path = DEFAULT_SSE_FIXTURE) -> Child:
    """The built-in upstream as a child process, ready to serve."""
    argv = [sys.executable, "-m", "bench.proxy.upstream", "--port", str(port), "--sse-fixture", str(sse_fixture)]
    child = Child("builtin-upstream", argv, log_dir / "upstream.out", env=python_env())
    child.wait_ready(f"http://127.0.0.1:{port}/healthz", timeout=20)
    return child


@click.command()
@click.option("--port", type=int, required=True)
@click.option("--sse-fixture", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=DEFAULT_SSE_FIXTURE)
def main(port: int, sse_fixture: Path) -> None:
    """Built-in fixed-body upstream on 127.0.0.1:PORT (see the module docstring)."""
    try:
        import uvloop

        uvloop.run(serve(port, sse_fixture))
    except ImportError:
        asyncio.run(serve(port, sse_fixture))


if __name__ == "__main__":
    main()
