"""A small HTTP/1.1 load generator for latency and time-to-first-byte.

Runs in its own process (:func:`run_loadgen` spawns ``python -m bench.proxy.loadgen``),
on uvloop when available, with raw ``asyncio.Protocol`` connections: the client's own
cost per request is a few microseconds, and the same for every target, so differences
between targets are the targets'. ``C`` keep-alive connections each send requests one
after the other until ``N`` have completed in all; ``warmup`` requests go first and are
not recorded.

Per request it records, in seconds from the moment the request was written:

- ``ttfb``: the first byte of the response *body* (for a chunked response, the first
  byte of chunk data; the status line and headers do not count);
- ``total``: the last byte of the body (``content-length`` reached, or the last chunk).

:class:`ResponseParser` is sans-IO (``content-length`` and ``chunked`` framing).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import click

from bench.proxy.process import python_env


class ResponseParser:
    """Incremental HTTP/1.1 response framing: feed bytes, learn when the body starts and ends.

    ``feed`` returns the bytes past the end of this response (the next response of a
    pipelined connection; empty here). Raises ``ValueError`` on a malformed response.
    """

    def __init__(self) -> None:
        self.status = 0
        self.degraded = b""  # the x-memgate-degraded header's value, if any
        self.body_started = False
        self.done = False
        self._head = b""
        self._in_head = True
        self._chunked = False
        self._remaining = 0  # content-length left, or bytes left of the current chunk
        self._chunk_state = "size"  # size | data | data_crlf | trailer
        self._line = b""

    def feed(self, data: bytes) -> bytes:
        if self._in_head:
            buf = self._head + data
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self._head = buf
                return b""
            self._parse_head(buf[:end])
            self._in_head = False
            data = buf[end + 4 :]
            if not self._chunked and self._remaining == 0:
                self.done = True
                return data
        return self._chunks(data) if self._chunked else self._fixed(data)

    def _parse_head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise ValueError(f"bad status line {lines[0][:80]!r}")
        self.status = int(parts[1])
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                self._remaining = int(value.strip())
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                self._chunked = True
            elif name == b"x-memgate-degraded":
                self.degraded = value.strip()

    def _fixed(self, data: bytes) -> bytes:
        if data:
            self.body_started = True
        taken = min(len(data), self._remaining)
        self._remaining -= taken
        if self._remaining == 0:
            self.done = True
        return data[taken:]

    def _chunks(self, data: bytes) -> bytes:
        pos = 0
        while pos < len(data) and not self.done:
            if self._chunk_state == "data":
                taken = min(len(data) - pos, self._remaining)
                if taken:
                    self.body_started = True
                pos += taken
                self._remaining -= taken
                if self._remaining == 0:
                    self._chunk_state = "data_crlf"
                continue
            end = data.find(b"\n", pos)
            if end < 0:
                self._line += data[pos:]
                return b""
            line, self._line = (self._line + data[pos:end]).rstrip(b"\r"), b""
            pos = end + 1
            if self._chunk_state == "size":
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    self._chunk_state = "trailer"
                else:
                    self._remaining, self._chunk_state = size, "data"
            elif self._chunk_state == "data_crlf":
                self._chunk_state = "size"
            elif self._chunk_state == "trailer" and not line:
                self.done = True
        return data[pos:]


@dataclass
class Samples:
    """What one load-generator run measured (times in seconds)."""

    ttfb: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    errors: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0
    first_error: str = ""
    #: Replies (status 200) with an ``x-memgate-degraded`` header, by its value.
    degraded: dict[str, int] = field(default_factory=dict)


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = ResponseParser()
        self.waiter: asyncio.Future[None] | None = None
        self.first_body_at = 0.0
        self.done_at = 0.0
        self.lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        parser = self.parser
        try:
            parser.feed(data)
        except ValueError as exc:
            self._finish(exc)
            return
        if parser.body_started and not self.first_body_at:
            self.first_body_at = now
        if parser.done:
            self.done_at = now
            self._finish(None)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc or ConnectionResetError("connection closed by the server")
        self._finish(self.lost)

    def _finish(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            if exc is None:
                self.waiter.set_result(None)
            else:
                self.waiter.set_exception(exc)

    async def request(self, raw: bytes) -> tuple[float, float, int]:
        """Send ``raw``; (ttfb, total, status) once the response is complete."""
        if self.lost is not None or self.transport is None:
            raise ConnectionResetError("connection is closed")
        self.parser = ResponseParser()
        self.first_body_at = self.done_at = 0.0
        self.waiter = asyncio.get_running_loop().create_future()
        started = time.perf_counter()
        self.transport.write(raw)
        await self.waiter
        first = self.first_body_at or self.done_at
        return first - started, self.done_at - started, self.parser.status


#: Placeholders :func:`vary` fills per request (same width, so ``content-length`` holds):
#: ``SEQ_MARK`` -> the request's sequence number (8 digits), ``TENANT_MARK`` -> its
#: tenant number (2 digits, sequence modulo the tenant count).
SEQ_MARK = b"@@SEQ@@@"
TENANT_MARK = b"@T"


def vary(raw: bytes, seq: int, tenants: int) -> bytes:
    """``raw`` with the placeholders filled for request ``seq`` (see :data:`SEQ_MARK`);
    ``raw`` itself when it has none. Every message new: the sequence number makes it so."""
    if SEQ_MARK not in raw and TENANT_MARK not in raw:
        return raw
    return raw.replace(SEQ_MARK, b"%08d" % (seq % 10**8)).replace(TENANT_MARK, b"%02d" % (seq % max(1, tenants)))


def build_request(host: str, port: int, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    """A keep-alive ``POST`` with a ``content-length`` body."""
    lines = [f"POST {path} HTTP/1.1", f"host: {host}:{port}", "content-type: application/json",
             f"content-length: {len(body)}", "accept: */*"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def run(
    host: str, port: int, raw: bytes, requests: int, concurrency: int, warmup: int, timeout: float,
    tenants: int = 1,
) -> Samples:
    """``warmup`` then ``requests`` requests over ``concurrency`` connections (each
    request's placeholders filled by :func:`vary`)."""
    loop = asyncio.get_running_loop()
    conns: list[_Connection] = []
    for _ in range(concurrency):
        _, proto = await loop.create_connection(_Connection, host, port)
        conns.append(proto)
    samples = Samples()
    budget = {"left": 0, "seq": 0}

    async def worker(conn: _Connection, record: bool) -> None:
        while budget["left"] > 0:
            budget["left"] -= 1
            budget["seq"] += 1
            try:
                ttfb, total, status = await asyncio.wait_for(conn.request(vary(raw, budget["seq"], tenants)), timeout)
            except (TimeoutError, OSError, ValueError) as exc:
                samples.errors += 1
                samples.first_error = samples.first_error or f"{type(exc).__name__}: {exc}"
                return  # this connection is unusable; the others finish the run
            if not record:
                continue
            samples.statuses[str(status)] = samples.statuses.get(str(status), 0) + 1
            if status != 200:
                samples.errors += 1
                continue
            samples.ttfb.append(ttfb)
            samples.total.append(total)
            if conn.parser.degraded:
                reason = conn.parser.degraded.decode("latin-1")
                samples.degraded[reason] = samples.degraded.get(reason, 0) + 1

    budget["left"] = warmup
    await asyncio.gather(*(worker(c, False) for c in conns))
    budget["left"] = requests
    started = time.perf_counter()
    await asyncio.gather(*(worker(c, True) for c in conns))
    samples.elapsed = time.perf_counter() - started
    for conn in conns:
        if conn.transport is not None:
            conn.transport.close()
    return samples


def run_loadgen(
    url_host: str,
    port: int,
    path: str,
    body: bytes,
    headers: dict[str, str],
    *,
    requests: int,
    concurrency: int,
    warmup: int,
    workdir: Path,
    timeout: float = 30.0,
    tenants: int = 1,
) -> Samples:
    """Run the load generator in a child process and return its samples.

    Raises:
        RuntimeError: the child failed (its stderr is in the message).
    """
    body_file = workdir / f"body-{abs(hash(body))}.bin"
    body_file.write_bytes(body)
    argv = [sys.executable, "-m", "bench.proxy.loadgen", "--host", url_host, "--port", str(port),
            "--path", path, "--body-file", str(body_file), "--requests", str(requests),
            "--concurrency", str(concurrency), "--warmup", str(warmup), "--timeout", str(timeout),
            "--tenants", str(tenants)]
    for k, v in headers.items():
        argv += ["--header", f"{k}: {v}"]
    done = subprocess.run(argv, capture_output=True, timeout=timeout * 4 + requests, check=False,
                          env={**os.environ, **python_env()})
    if done.returncode != 0:
        raise RuntimeError(f"load generator failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return Samples(**json.loads(done.stdout))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, required=True)
@click.option("--path", required=True, help="Request target, e.g. /v1/chat/completions.")
@click.option("--body-file", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--header", "headers", multiple=True, help="'name: value' (repeatable).")
@click.option("--requests", type=int, default=2000, show_default=True)
@click.option("--concurrency", type=int, default=1, show_default=True)
@click.option("--warmup", type=int, default=200, show_default=True)
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds per request.")
@click.option("--tenants", type=int, default=1, show_default=True, help="Tenant numbers cycled through @T.")
def main(host: str, port: int, path: str, body_file: Path, headers: tuple[str, ...], requests: int,
         concurrency: int, warmup: int, timeout: float, tenants: int) -> None:
    """The proxy benchmark's load generator: samples as JSON on stdout."""
    header_map = dict(h.split(": ", 1) for h in headers)
    raw = build_request(host, port, path, body_file.read_bytes(), header_map)
    coro = run(host, port, raw, requests, concurrency, warmup, timeout, tenants)
    try:
        import uvloop

        samples = uvloop.run(coro)
    except ImportError:
        samples = asyncio.run(coro)
    json.dump(asdict(samples), sys.stdout)


if __name__ == "__main__":
    main()
