"""Child processes of the bench: start, wait until they serve, stop; free ports.

Every process the bench starts is a :class:`Child`: its output goes to a log file in the
bench's temp dir (shown when it fails to start) and :meth:`Child.stop` ends it by its
own pid (SIGTERM, then SIGKILL after ``grace`` seconds), never by name.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path


class ChildError(RuntimeError):
    """A child process exited or did not become ready; the message ends with its log."""


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) of ``pid`` and its live descendants, in
    seconds, from ``/proc`` (Linux; 0.0 elsewhere). Resolution: one clock tick (10 ms)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            stat = Path(f"/proc/{current}/stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                pending.extend(int(c) for c in children)
        except (OSError, ValueError, IndexError):
            continue
    return total


#: The checkout holding ``bench/``, ``gateway/`` and ``tests/``.
CHECKOUT = Path(__file__).resolve().parents[2]


def python_env() -> dict[str, str]:
    """Environment additions for a child ``python -m ...`` of this checkout: the checkout
    first on ``PYTHONPATH`` (``bench`` is not installed; it runs from a checkout)."""
    rest = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": str(CHECKOUT) + (os.pathsep + rest if rest else "")}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Child:
    """One child process with its log file."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            list(argv),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def wait_ready(self, url: str, timeout: float = 60.0, expect: int | None = 200) -> None:
        """Poll ``GET url`` until it answers (with ``expect`` if given).

        Raises:
            ChildError: the process exited, or ``timeout`` seconds passed.
        """
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ChildError(
                    f"{self.name} exited with {self.proc.returncode}; log:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if expect is None or response.status == expect:
                        return
                    last = f"status {response.status}"
            except urllib.error.HTTPError as exc:
                if expect is None:
                    return
                last = f"status {exc.code}"
            except OSError as exc:
                last = str(exc)
            time.sleep(0.1)
        raise ChildError(f"{self.name} not ready at {url} after {timeout} s ({last}); log:\n{self.log_tail()}")

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; idempotent."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
