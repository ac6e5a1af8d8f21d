"""Embedded Redis ownership and config paths (issue 9 items 2 and 3), through real processes.

Each test runs ``memgate`` as a subprocess (``python -m gateway.cli``) on a temporary data
dir with the embedded redis-server, the upstream double on loopback, and the ``openai``
embedding provider with a fixed size (no model is loaded and no embedding is requested).
Waits poll a condition with a deadline.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from gateway.runtime.redis_server import (
    URL_FILE,
    DataDirBusy,
    EmbeddedRedis,
    EmbeddedRedisError,
    find_redis_server,
)

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-ownership-0123456789"


def wait_for(condition: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(folder: Path, upstream_url: str, port: int = 0, plugins: list | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "gateway.yaml"
    path.write_text(json.dumps({
        "server": {"host": "127.0.0.1", "port": port},
        "upstream": {"base_url": upstream_url + "/v1", "api_key": "sk-upstream"},
        "clients": [{"key": KEY, "user_id": "olga", "key_id": "olga"}],
        "memory": {"data_dir": "./data", "embedding": {
            "provider": "openai", "base_url": upstream_url + "/v1", "dimensions": 8}},
        "plugins": plugins or [],
    }))
    return path


def memgate(*args: str, cwd: Path, **popen: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, **popen}
    return subprocess.Popen([sys.executable, "-m", "gateway.cli", *args], cwd=cwd, env=env, text=True, **options)


def run_memgate(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    proc = memgate(*args, cwd=cwd, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def redis_server_pids(data_dir: Path) -> list[int]:
    """Live redis-server processes working in ``data_dir`` (redis chdirs to ``--dir``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            exe = os.readlink(entry / "exe")
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and "redis-server" in os.path.basename(exe) and cwd == str(data_dir.resolve()):
            found.append(int(entry.name))
    return found


def server_pid(data_dir: Path) -> int | None:
    """Pid of the server answering at ``data_dir/redis.url``, None while none answers."""
    try:
        url = (data_dir / URL_FILE).read_text().strip()
        client = probe(url)
        try:
            return int(client.info("server")["process_id"])
        finally:
            client.close()
    except (OSError, redis.RedisError):
        return None


def probe(url: str | None = None, **options: Any) -> redis.Redis:
    """A client that fails at once while the server is down (no redis-py retries)."""
    settings = {"socket_timeout": 5, "socket_connect_timeout": 1, "retry": Retry(NoBackoff(), 0), **options}
    return redis.Redis.from_url(url, **settings) if url else redis.Redis(**settings)


def status(url: str) -> int | None:
    try:
        return httpx.get(url, headers={"authorization": f"Bearer {KEY}"}, timeout=5).status_code
    except httpx.HTTPError:
        return None


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """memgate processes started by a test; killed (with their redis children) after it."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def leftover_servers() -> Iterator[list[Path]]:
    """Data dirs whose redis-servers are killed after the test (they survive on old code)."""
    dirs: list[Path] = []
    yield dirs
    for data_dir in dirs:
        for pid in redis_server_pids(data_dir):
            os.kill(pid, signal.SIGKILL)


def start_serve(tmp_path: Path, upstream_url: str, processes: list, plugins: list | None = None) -> tuple[str, Path]:
    port = free_port()
    config = write_config(tmp_path / "conf", upstream_url, port, plugins)
    log = tmp_path / f"serve-{port}.log"
    proc = memgate("serve", "--config", str(config), cwd=config.parent, stdout=log.open("w"))
    processes.append(proc)
    base = f"http://127.0.0.1:{port}"
    wait_for(lambda: proc.poll() is not None or status(base + "/healthz") == 200, 90, "memgate serve")
    assert proc.poll() is None, log.read_text()
    return base, config.parent / "data" / "redis"


def test_kill_9_of_serve_takes_its_redis_server_with_it(tmp_path, upstream, leftover_servers, processes):
    _, data_dir = start_serve(tmp_path, upstream.url, processes)
    leftover_servers.append(data_dir)
    child = wait_for(lambda: server_pid(data_dir), what="the embedded redis-server")
    processes[0].kill()  # SIGKILL: no clean-up code runs in the gateway
    processes[0].wait()
    wait_for(lambda: child not in redis_server_pids(data_dir), 15, f"redis-server {child} to exit")


def test_serve_started_after_a_worker_reuses_its_server(tmp_path, upstream, leftover_servers, processes):
    config = write_config(tmp_path / "conf", upstream.url, free_port(), [{"name": "memorize"}])
    data_dir = config.parent / "data" / "redis"
    leftover_servers.append(data_dir)
    worker_log = (tmp_path / "worker.log").open("w")
    processes.append(memgate("worker", "--config", str(config), cwd=config.parent, stdout=worker_log))
    owner_server = wait_for(lambda: server_pid(data_dir), 90, "the worker's redis-server")
    base, _ = start_serve(tmp_path, upstream.url, processes, [{"name": "memorize"}])  # same data dir
    wait_for(lambda: status(base + "/readyz") == 200, 60, "/readyz green (Redis answers the gateway)")
    assert redis_server_pids(data_dir) == [owner_server]  # one server on the dir, the worker's
    # the worker stops: its server goes with it and the gateway takes the data dir over
    processes[0].send_signal(signal.SIGTERM)
    assert processes[0].wait(timeout=30) == 0
    wait_for(lambda: server_pid(data_dir) not in (None, owner_server), 30, "the gateway's own server")
    wait_for(lambda: status(base + "/readyz") == 200, 30, "/readyz green again")
    assert len(redis_server_pids(data_dir)) == 1


@pytest.fixture
def lock_holder(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """Another process holding ``<tmp>/redis/redis.lock`` with no redis-server: an owner
    whose server is gone or not answering. Yields (data dir, its pid)."""
    data_dir = tmp_path / "redis"
    data_dir.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import fcntl, os, sys\n"
            f"f = open({str(data_dir / 'redis.lock')!r}, 'w'); fcntl.flock(f, fcntl.LOCK_EX)\n"
            "f.write(str(os.getpid())); f.flush(); print('locked', flush=True); sys.stdin.read()"
        )],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield data_dir, holder.pid
    finally:
        holder.communicate(input="", timeout=10)


def test_start_refuses_a_data_dir_another_process_owns(lock_holder, leftover_servers):
    data_dir, pid = lock_holder
    leftover_servers.append(data_dir)
    server = EmbeddedRedis(data_dir)
    try:
        with pytest.raises(EmbeddedRedisError) as refused:
            server.start()
        assert f"pid {pid}" in str(refused.value) and str(data_dir) in str(refused.value)
        assert redis_server_pids(data_dir) == []
    finally:
        server.stop()


def test_open_waits_for_the_owners_server_then_refuses(lock_holder):
    data_dir, pid = lock_holder
    with pytest.raises(DataDirBusy) as refused:
        EmbeddedRedis(data_dir, startup_timeout=1.0).open()
    assert f"pid {pid}" in str(refused.value) and "did not answer PING" in str(refused.value)
    assert redis_server_pids(data_dir) == []


def test_the_lock_dies_with_its_holder(lock_holder, leftover_servers):
    data_dir, _ = lock_holder
    leftover_servers.append(data_dir)
    with pytest.raises(EmbeddedRedisError):
        EmbeddedRedis(data_dir).start()
    os.kill(lock_holder[1], signal.SIGKILL)
    wait_for(lambda: fcntl_free(data_dir / "redis.lock"), 10, "the kernel to drop the lock")
    with EmbeddedRedis(data_dir) as server:
        assert redis.Redis.from_url(server.url).ping()


def fcntl_free(path: Path) -> bool:
    with path.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True


def test_a_second_owner_in_one_process_is_refused_and_a_reuser_shares(tmp_path, leftover_servers):
    leftover_servers.append(tmp_path / "redis")
    first = EmbeddedRedis(tmp_path / "redis")
    url = first.start()
    try:
        with pytest.raises(EmbeddedRedisError):
            EmbeddedRedis(tmp_path / "redis").start()
        assert redis_server_pids(tmp_path / "redis") == [first.pid]
        second = EmbeddedRedis(tmp_path / "redis")
        assert second.open() == url and first.owner and not second.owner
        second.stop()
        assert redis.Redis.from_url(url).ping()  # a reuser leaves the owner's server alone
    finally:
        first.stop()
    assert redis_server_pids(tmp_path / "redis") == []


def test_server_left_by_a_previous_run_is_shut_down_before_starting(tmp_path, leftover_servers):
    """An orphan as an older memgate left it: a redis-server on the dir, its URL in
    redis.url, nobody holding the lock. The new owner shuts it down (SHUTDOWN) first."""
    data_dir = tmp_path / "redis"
    data_dir.mkdir()
    leftover_servers.append(data_dir)
    sock = tmp_path / "old.sock"
    orphan = subprocess.Popen(
        [find_redis_server(), "--port", "0", "--unixsocket", str(sock), "--dir", str(data_dir),
         "--appendonly", "yes", "--save", "", "--logfile", str(tmp_path / "old.log")],
        start_new_session=True,
    )
    try:
        client = probe(unix_socket_path=str(sock))
        wait_for(lambda: _answers(client), 15, "the orphan")
        client.set("kept", "yes")
        client.execute_command("WAITAOF", 1, 0, 5000)  # fsynced to the AOF
        (data_dir / URL_FILE).write_text(f"unix://{sock}")
        with EmbeddedRedis(data_dir) as server:
            assert orphan.wait(timeout=15) == 0  # shut down cleanly, not killed
            assert redis_server_pids(data_dir) == [server.pid]
            assert redis.Redis.from_url(server.url).get("kept") == b"yes"
    finally:
        if orphan.poll() is None:
            orphan.kill()
        orphan.wait()


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False


def test_gateway_restarts_a_killed_embedded_redis(tmp_path, upstream, leftover_servers, processes):
    base, data_dir = start_serve(tmp_path, upstream.url, processes)
    leftover_servers.append(data_dir)
    wait_for(lambda: status(base + "/readyz") == 200, 60, "/readyz green")
    first = server_pid(data_dir)
    client = probe((data_dir / URL_FILE).read_text())
    client.set("survives", "1")
    client.execute_command("WAITAOF", 1, 0, 5000)
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: server_pid(data_dir) not in (None, first), 30, "a new redis-server")
    wait_for(lambda: status(base + "/readyz") == 200, 30, "/readyz green again")
    assert client.get("survives") == b"1"  # same data dir, same socket: the client reconnected
    assert redis_server_pids(data_dir) == [server_pid(data_dir)]


def test_cli_from_another_folder_uses_the_config_folders_data_dir(tmp_path, upstream):
    config = write_config(tmp_path / "conf", upstream.url)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    created = run_memgate("keys", "create", "--user", "ursula", "--friend", "pal", "--config", str(config), cwd=elsewhere)
    assert created.returncode == 0, created.stderr
    key_id = json.loads(created.stdout)["key_id"]
    assert not (elsewhere / "data").exists()
    assert (config.parent / "data" / "redis").is_dir()
    listed = run_memgate("keys", "list", "--config", "gateway.yaml", cwd=config.parent)
    assert listed.returncode == 0, listed.stderr
    assert key_id in listed.stdout


def test_watchdog_restarts_a_killed_child_on_the_same_url_and_gives_up_when_it_cannot(tmp_path):
    gave_up = threading.Event()
    reasons: list[str] = []

    def give_up(message: str) -> None:
        reasons.append(message)
        gave_up.set()

    server = EmbeddedRedis(tmp_path / "redis", supervise=True, max_restarts=2, on_give_up=give_up)
    url = server.start()
    try:
        client = probe(url)
        first = server.pid
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: server.restarts == 1 and _answers(client), 30, "the restarted child")
        assert server.pid != first and redis_server_pids(tmp_path / "redis") == [server.pid]
        server.binary = "/bin/false"  # from now on every restart fails
        os.kill(server.pid, signal.SIGKILL)
        assert gave_up.wait(30), "the watchdog never gave up"
        assert "failed 2 times" in reasons[0] and str(tmp_path / "redis") in reasons[0]
    finally:
        server.stop()
    assert redis_server_pids(tmp_path / "redis") == []
