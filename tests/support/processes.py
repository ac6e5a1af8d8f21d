"""Real ``memgate serve`` and ``memgate worker`` processes for the multi-process tests.

Each command runs as ``python -m gateway.cli ...`` from the checkout, in a session of its
own (so the gateway's spawned processes can be stopped with their supervisor), with its
stderr in a file the helpers read to learn pids and readiness.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["MemgateProcess", "free_port", "poll", "write_config"]


def free_port() -> int:
    """A loopback TCP port free right now (the kernel's pick)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def poll(condition: Callable[[], Any], timeout: float, what: str, every: float = 0.05) -> Any:
    """Call ``condition`` until it returns something truthy (returned) or ``timeout``
    seconds pass (AssertionError naming ``what``): waiting on another process's state,
    which has no event to wait on."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(every)


def write_config(path: Path, settings: dict[str, Any]) -> Path:
    """``settings`` as gateway.yaml (JSON is YAML)."""
    path.write_text(json.dumps(settings, indent=1))
    return path


class MemgateProcess:
    """One ``memgate <args>`` process (its own session) with stderr in ``log``."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.args = args
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> MemgateProcess:
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gateway.cli", *self.args], cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
            )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_for(self, pattern: str, count: int = 1, timeout: float = 120.0) -> list[re.Match[str]]:
        """The first ``count`` matches of ``pattern`` in the log, once there are that many."""
        def found() -> list[re.Match[str]] | None:
            assert self.alive(), f"memgate {self.args[0]} exited:\n{self.text()[-3000:]}"
            matches = list(re.finditer(pattern, self.text()))
            return matches[:count] if len(matches) >= count else None

        return poll(found, timeout, f"{count} x {pattern!r} in the log of memgate {self.args[0]}", every=0.1)

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM, then SIGKILL of its whole session (spawned processes too)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # its session: anything it left behind


@contextlib.contextmanager
def stopped(pid: int) -> Iterator[None]:
    """``pid`` frozen (SIGSTOP) inside the block, resumed (SIGCONT) after: a gateway
    process sharing a listening socket then accepts no connection, so every new one goes
    to the others."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)
