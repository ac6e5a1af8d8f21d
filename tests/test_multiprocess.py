"""Several gateway and worker processes on one Redis (issue 15 item 3).

One ``memgate serve`` with ``server.workers: 2`` (two gateway processes on one port, the
embedded Redis owned by the supervising process) and two ``memgate worker`` processes
(the gateway runs no memorization worker itself: ``in_serve: 0``), all real processes;
the client is the openai SDK, the upstream the suite's double. A request is sent to one
chosen gateway process by freezing the other (SIGSTOP): the processes share one listening
socket, so a frozen one accepts nothing.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from gateway.memorization.keys import QueueKeys
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, BOB_KEY, GENEROUS_MS, SERVICE_KEY
from tests.support.processes import MemgateProcess, free_port, poll, stopped, write_config

#: the only reason to skip: no /proc, SIGSTOP or spawned uvicorn processes to inspect
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux (/proc, SIGSTOP)")

KEY_TTL_S = 1.0
#: queue shards on the cluster (one on the single node)
SHARDS = 6
#: a worker waits this long for a job in one XREADGROUP: long, so a worker frozen while
#: it waits is still waiting (and is handed the next job of its shard) when turns arrive;
#: under the Redis socket timeout, which a blocked read must not reach
BLOCK_MS = 10_000
SOCKET_TIMEOUT_S = 30.0
#: a job delivered to a worker and not acked for this long is taken over (XAUTOCLAIM)
CLAIM_MIN_IDLE_MS = 1000
STARTUP_S = 180.0  # four interpreters importing the gateway on two busy cores
SETTLE_S = 120.0


@dataclass
class Deployment:
    url: str
    gateways: list[int]  # pids of the gateway processes
    serve: MemgateProcess
    workers: list[MemgateProcess]
    double: Any
    cluster: bool = False  # on a Redis Cluster, not the embedded single node

    def admin(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.call(ADMIN_KEY, method, path, **kwargs)

    def call(self, key: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        # a new connection each time: whichever gateway process is not frozen accepts it
        with httpx.Client(base_url=self.url, timeout=60, headers={"authorization": f"Bearer {key}"}) as client:
            return client.request(method, path, **kwargs)

    def chat(self, key: str, text: str, user: str | None = None) -> Any:
        """One chat turn; ``user``: the end user a service key names (``X-Memgate-User``)."""
        headers = {"x-memgate-user": user} if user else None
        with openai.OpenAI(base_url=self.url + "/v1", api_key=key, max_retries=0,
                           http_client=httpx.Client(timeout=60)) as client:
            return client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}],
                                                  extra_headers=headers)

    def queue(self) -> dict[str, Any]:
        reply = self.admin("GET", "/v1/admin/queue")
        assert reply.status_code == 200, reply.text
        return reply.json()["data"][0]

    def consumer_pending(self, pid: int) -> int | None:
        """Pending jobs of the worker process ``pid`` (its consumer name has ``-<pid>-``)."""
        for row in self.queue()["workers"]:
            if f"-{pid}-" in row["name"]:
                return int(row["pending"])
        return None


def settings(upstream_url: str, port: int, data_dir: Path, cluster_url: str | None = None) -> dict[str, Any]:
    memory: dict[str, Any] = {"data_dir": str(data_dir), "key_prefix": "mp" + uuid.uuid4().hex[:10],
                              "embedding": {"provider": "onnx"}, "socket_timeout_s": SOCKET_TIMEOUT_S}
    if cluster_url:
        memory.update(redis_url=cluster_url, cluster=True)
    return {
        "server": {"host": "127.0.0.1", "port": port, "workers": 2},
        "upstream": {"base_url": upstream_url + "/v1", "api_key": "sk-upstream-secret"},
        "clients": [
            {"key": ALICE_KEY, "user_id": "alice", "friend_id": "tutor", "key_id": "alice"},
            {"key": BOB_KEY, "user_id": "bob", "friend_id": "tutor", "key_id": "bob"},
            {"key": ADMIN_KEY, "user_id": "ops", "admin": True, "key_id": "ops"},
            {"key": SERVICE_KEY, "user_id": "backend", "service": True, "key_id": "svc"},
        ],
        "auth": {"cache_ttl_s": KEY_TTL_S},
        "memory": memory,
        "chain": {"request_deadline_ms": GENEROUS_MS, "hook_budget_ms": GENEROUS_MS, "chunk_budget_ms": GENEROUS_MS},
        "plugins": [
            {"name": "auto_recall", "config": {"limit": 5, "threshold": 0.2, "high_relevance_threshold": 0.45,
                                               "timeout_ms": GENEROUS_MS}},
            {"name": "hybrid_injection", "config": {"placement": "separate", "timeout_ms": GENEROUS_MS}},
            {"name": "memorize", "config": {"mode": "verbatim", "queue": {"shards": SHARDS if cluster_url else 1}, "worker": {
                "in_serve": 0, "block_ms": BLOCK_MS, "claim_min_idle_ms": CLAIM_MIN_IDLE_MS, "claim_every_s": 0.2}}},
        ],
    }


def start_deployment(root: Path, upstream: tuple[Any, str], cluster_url: str | None = None) -> Iterator[Deployment]:
    """The processes on the embedded Redis of ``root/data``, or on the Redis Cluster of
    ``cluster_url``; stopped after."""
    double, upstream_url = upstream
    port = free_port()
    config = write_config(root / "gateway.yaml", settings(upstream_url, port, root / "data", cluster_url))
    serve = MemgateProcess(["serve", "--config", str(config)], root / "serve.log")
    workers = [MemgateProcess(["worker", "--config", str(config), "-n", "1"], root / f"worker{i}.log")
               for i in range(2)]
    try:
        serve.start()
        started = serve.wait_for(r"Started server process \[(\d+)\]", 2, STARTUP_S)
        serve.wait_for(r"Application startup complete", 2, STARTUP_S)
        deployment = Deployment(f"http://127.0.0.1:{port}", [int(m.group(1)) for m in started], serve, workers, double,
                                cluster=cluster_url is not None)
        for worker in workers:  # after the gateway: they reuse its embedded Redis
            worker.start()
        def reading() -> bool:
            for worker in workers:
                assert worker.alive(), f"memgate worker exited:\n{worker.text()[-3000:]}"
            return all(deployment.consumer_pending(w.pid) is not None for w in workers)

        poll(reading, STARTUP_S, "both worker processes reading the queue")
        yield deployment
    finally:
        for process in [*workers, serve]:
            process.stop()


@pytest.fixture(scope="module", params=["single", "cluster"])
def deployment(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
               upstream_server: tuple[Any, str]) -> Iterator[Deployment]:
    """Once on the embedded single node, once on the local Redis Cluster (3 + 3)."""
    cluster_url = request.getfixturevalue("redis_cluster_url") if request.param == "cluster" else None
    yield from start_deployment(tmp_path_factory.mktemp("multiproc"), upstream_server, cluster_url)


def test_one_redis_server_is_owned_by_the_supervisor_and_shared(deployment: Deployment):
    """Only one redis-server runs: the supervisor's child; no gateway or worker process
    owns one (on a cluster: none at all)."""
    owners = [pid for pid in deployment.gateways + [w.pid for w in deployment.workers]
              if any("redis-server" in _cmdline(child) for child in _children(pid))]
    assert owners == []
    embedded = sum("redis-server" in _cmdline(child) for child in _children(deployment.serve.pid))
    if deployment.cluster:
        assert embedded == 0
        return
    lock = next(Path(deployment.serve.args[2]).parent.glob("data/redis/redis.lock"))
    assert int(lock.read_text().split()[0]) == deployment.serve.pid
    assert embedded == 1


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_a_key_revoked_through_one_process_stops_working_in_the_other(deployment: Deployment):
    a, b = deployment.gateways
    created = deployment.admin("POST", "/v1/admin/keys", json={"user_id": "dora", "friend_id": "tutor"})
    assert created.status_code == 201, created.text
    key, key_id = created.json()["key"], created.json()["key_id"]
    with stopped(b):
        assert deployment.chat(key, "Hello from process A").choices  # A now caches the key as valid
    with stopped(a):
        assert deployment.chat(key, "Hello from process B").choices  # B too
        revoked = deployment.admin("POST", f"/v1/admin/keys/{key_id}/revoke")  # through B
        assert revoked.status_code == 200, revoked.text

    def refused() -> bool:
        try:
            deployment.chat(key, "still there?")
        except openai.AuthenticationError:
            return True
        return False

    # each process on its own (the other one stopped) refuses it within its cache TTL:
    # A's cache entry lasts auth.cache_ttl_s, so poll A with a bound, not just any process
    # (B, which served the revoke, refuses at once and would end a poll over both)
    for frozen in (b, a):
        with stopped(frozen):
            poll(refused, KEY_TTL_S + 60, "the revoked key to be refused by the process left running")


TEMPLATES = [
    "Delivery {i}: the courier {name} brought {n} crates of {goods} to the {city} depot.",
    "Log entry {i}: {name} repaired the {goods} conveyor in {city} after a {n}-hour outage.",
    "Ticket {i} says {name} ordered {n} spare {goods} for the {city} branch.",
    "Inventory note {i}: {city} counts {n} pallets of {goods}, checked by {name}.",
]
NAMES = ["Ines", "Tomasz", "Kwame", "Yuki", "Farid", "Olga", "Mateo", "Sanna"]
GOODS = ["basil", "copper wire", "ceramic tiles", "wool yarn", "bicycle chains", "olive oil", "printer toner"]
CITIES = ["Lisbon", "Gdansk", "Accra", "Osaka", "Tabriz", "Tromso", "Cusco"]


def turns(count: int) -> list[str]:
    """``count`` distinct turns; consecutive ones differ in template, name, goods and city."""
    return [TEMPLATES[i % 4].format(i=i, name=NAMES[(3 * i) % 8], goods=GOODS[i % 7], city=CITIES[(2 * i + 1) % 7], n=3 + i)
            for i in range(count)]


def shard_users() -> list[str]:
    """One end user per queue shard (a user's jobs always go to its shard)."""
    keys, users = QueueKeys("mgq", SHARDS), {}
    for i in itertools.count():
        users.setdefault(keys.shard_of(f"clerk-{i}"), f"clerk-{i}")
        if len(users) == SHARDS:
            return [users[s] for s in range(SHARDS)]
    raise AssertionError("unreachable")


def test_no_turn_is_lost_or_duplicated_when_a_worker_process_is_killed(deployment: Deployment):
    users = shard_users()  # one per shard: a frozen worker blocked on any shard gets a job
    texts = turns(12 * len(users))
    victim, survivor = deployment.workers
    accepted: list[tuple[str, str]] = []
    queue = iter(zip(itertools.cycle(users), texts, strict=False))

    def send(item: tuple[str, str]) -> None:
        user, text = item
        deployment.chat(SERVICE_KEY, text, user)
        accepted.append(item)  # the gateway answered: the turn is accepted

    with ThreadPoolExecutor(3) as pool:
        list(pool.map(send, itertools.islice(queue, 2 * len(users))))  # both workers taking jobs
        caught = False
        for _attempt in range(8):
            # frozen while it waits in XREADGROUP, Redis still delivers it the next job of
            # that shard (pending) and it cannot settle the ones it holds. Freeze it only
            # once it has been waiting in one read for a while (not mid-sweep or mid-batch,
            # and with most of the read's BLOCK time left); the other worker may still be
            # first in line on that shard: then resume it and try again
            poll(lambda: waiting_in_a_read(deployment, victim.pid), SETTLE_S, "the worker waiting in a blocked read")
            os.kill(victim.pid, signal.SIGSTOP)
            list(pool.map(send, itertools.islice(queue, len(users))))
            caught = holds_a_job(deployment, victim.pid)
            if caught:
                break
            os.kill(victim.pid, signal.SIGCONT)
        assert caught, f"the frozen worker never held a job: {deployment.queue()}\n{victim.text()[-2000:]}"
        victim.signal(signal.SIGKILL)  # dies with un-acked jobs
        victim.proc.wait(30)
        list(pool.map(send, list(queue)))
    assert len(accepted) == len(texts)

    def settled() -> bool:
        queue = deployment.queue()
        return queue["length"] == 0 and queue["pending"] == 0 and queue["retrying"] == 0

    poll(settled, SETTLE_S, "the surviving worker to settle every job (reclaim included)")
    assert deployment.queue()["dead"] == 0
    for user in users:
        listed = deployment.call(SERVICE_KEY, "GET", "/v1/memories", params={"limit": 500},
                                 headers={"x-memgate-user": user})
        assert listed.status_code == 200, listed.text
        stored = sorted(item["text"] for item in listed.json()["items"])
        assert stored == sorted(text for u, text in accepted if u == user)  # every accepted turn once
    assert survivor.alive()


def waiting_in_a_read(deployment: Deployment, pid: int) -> bool:
    """Whether the worker process ``pid`` has not touched the queue for 0.5 s and at most
    ``BLOCK_MS`` / 3: a worker that is running does so only while it waits in a blocking
    XREADGROUP (a sweep reads every shard at once, a batch is followed by a read), and
    that read has most of its BLOCK time left."""
    for row in deployment.queue()["workers"]:
        if f"-{pid}-" in row["name"]:
            return 500 <= int(row["idle_ms"]) <= BLOCK_MS // 3
    return False


def holds_a_job(deployment: Deployment, pid: int) -> bool:
    """Whether the worker process ``pid`` holds a job within 2 s (the gateway enqueues a
    turn just after its reply)."""
    try:
        poll(lambda: (deployment.consumer_pending(pid) or 0) > 0, 2, "a job on the frozen worker")
    except AssertionError:
        return False
    return True


def test_a_memory_written_through_one_process_is_recalled_through_the_other(deployment: Deployment):
    a, b = deployment.gateways
    text = "My sister Zofia teaches glassblowing at a studio in Krakow."
    with stopped(b):
        written = deployment.call(ALICE_KEY, "POST", "/v1/memories", json={"text": text, "scope": "profile"})
        assert written.status_code in (200, 201), written.text
    with stopped(a):
        found = deployment.call(ALICE_KEY, "POST", "/v1/memories/search", json={"query": "What does Zofia teach?"})
        assert found.status_code == 200, found.text
        assert [hit for hit in found.json()["data"] if hit["record"]["text"] == text], found.text
        deployment.double.requests.clear()
        deployment.chat(ALICE_KEY, "Remind me what my sister Zofia teaches.")
    sent = [r for r in deployment.double.chat_requests() if "Zofia" in r.body.decode()][-1]
    assert text in "\n".join(m["content"] for m in sent.json["messages"] if m["role"] == "system")


def test_metrics_add_up_every_gateway_process(deployment: Deployment):
    a, b = deployment.gateways

    def chats_counted() -> float:
        text = deployment.call(ADMIN_KEY, "GET", "/metrics").text
        pattern = r'memgate_http_request_duration_seconds_count\{[^}]*route="/v1/chat/completions"[^}]*\} (\S+)'
        return sum(float(v) for v in re.findall(pattern, text))

    before = chats_counted()
    with stopped(b):
        deployment.chat(ALICE_KEY, "One request through process A.")
    with stopped(a):
        deployment.chat(ALICE_KEY, "Two requests through process B.")
        deployment.chat(ALICE_KEY, "The second one.")
    assert chats_counted() - before == 3.0  # whichever process answers the scrape
