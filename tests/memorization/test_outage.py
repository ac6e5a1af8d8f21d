"""No accepted turn is lost to a Redis outage (issue 9 item 5): turns answered while Redis
is down are buffered in the gateway and memorized once it is back."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import redis
from openai import OpenAI

from gateway.runtime.redis_server import find_redis_server
from tests.support.gateway import ADMIN_KEY, ALICE_KEY, GatewayServer, make_config


class StoppableRedis:
    """A redis-server on a fixed unix socket with AOF, that can be stopped and started."""

    def __init__(self, root: Path) -> None:
        self.dir = root
        self.socket = tempfile.mkdtemp(prefix="mg-outage-") + "/r.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [find_redis_server(), "--port", "0", "--unixsocket", self.socket, "--dir", str(self.dir),
             "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            client = redis.Redis(unix_socket_path=self.socket, socket_timeout=1)
            try:
                if client.ping():
                    return
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)  # polling a child process that is starting (no event to wait on)
            finally:
                client.close()
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        assert self.proc is not None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)  # a paused server cannot act on SIGTERM
        self.proc.terminate()
        self.proc.wait(10)

    def pause(self) -> None:
        """SIGSTOP: the server stalls (connections stay open, commands wait in the socket)."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT: the server runs again and executes what clients sent meanwhile."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)


def chat(client: OpenAI, text: str) -> None:
    client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])


async def wait_for(condition, timeout: float = 120.0) -> None:
    async with asyncio.timeout(timeout):
        while not await condition():  # noqa: ASYNC110 - the condition is Redis state: nothing to await on
            await asyncio.sleep(0.05)


async def test_turns_accepted_while_redis_is_down_are_memorized_when_it_is_back(upstream, shared_model, tmp_path):
    server = StoppableRedis(tmp_path)
    server.start()
    # a job delivered to the worker as Redis went away stays pending until XAUTOCLAIM takes
    # it back (claim_min_idle_ms, 60 s by default: this test then took 70 s instead of 9)
    config = make_config(upstream.url, server.url, plugins=[
        {"name": "memorize", "config": {"mode": "verbatim", "worker": {
            "block_ms": 50, "claim_min_idle_ms": 3000, "claim_every_s": 0.5}}},
    ])
    gateway = GatewayServer(config, embedder=shared_model.for_gateway())
    gateway.start()
    try:
        client = OpenAI(base_url=gateway.url + "/v1", api_key=ALICE_KEY, max_retries=0)
        memorize = next(p.instance for p in gateway.gateway.chains.default.plugins if p.name == "memorize")
        chat(client, "Before the outage: I keep bees on my roof.")
        server.stop()
        for text in ("During the outage: my bees are Carniolan.", "During the outage: I harvest honey in August."):
            chat(client, text)  # the reply does not depend on Redis
        await gateway.on_server_loop(gateway.gateway.runner.wait_idle(10))
        assert memorize.memorization.buffered >= 1  # accepted, not yet in Redis
        server.start()

        async def all_memorized() -> bool:
            async with httpx.AsyncClient(timeout=30) as http:
                r = await http.get(gateway.url + "/v1/admin/users/alice/export", headers={"Authorization": f"Bearer {ADMIN_KEY}"})
            return r.status_code == 200 and len(r.text.splitlines()) == 3

        await wait_for(all_memorized)
        assert memorize.memorization.buffered == 0
    finally:
        gateway.stop()
        if server.proc and server.proc.poll() is None:
            server.stop()


async def test_a_turn_buffered_during_a_stall_is_memorized_without_another_message(upstream, shared_model, tmp_path):
    """Redis stalls (SIGSTOP) while a turn is enqueued: the claim reaches the server's socket
    but its reply times out, so the gateway buffers the job; once the server runs again it
    executes that claim. The buffer's retry must still queue the turn, on its own, well
    before the stale-claim sweep (``claim_stale_s``, 300 s) and without the user writing
    again."""
    server = StoppableRedis(tmp_path)
    server.start()
    config = make_config(upstream.url, server.url, memory={"socket_timeout_s": 1.0}, plugins=[
        {"name": "memorize", "config": {"mode": "verbatim", "worker": {"block_ms": 50},
                                        "queue": {"buffer_retry_max_s": 0.5}}},
    ])
    gateway = GatewayServer(config, embedder=shared_model.for_gateway())
    gateway.start()
    try:
        client = OpenAI(base_url=gateway.url + "/v1", api_key=ALICE_KEY, max_retries=0)
        memorize = next(p.instance for p in gateway.gateway.chains.default.plugins if p.name == "memorize")

        async def stored(count: int) -> bool:
            async with httpx.AsyncClient() as http:
                r = await http.get(gateway.url + "/v1/admin/users/alice/export",
                                   headers={"Authorization": f"Bearer {ADMIN_KEY}"})
            return r.status_code == 200 and len(r.text.splitlines()) == count

        chat(client, "Before the stall: I keep bees on my roof.")
        await wait_for(lambda: stored(1), timeout=60)
        server.pause()
        try:
            chat(client, "During the stall: my bees are Carniolan.")

            async def buffered() -> bool:
                return memorize.memorization.buffered >= 1

            await wait_for(buffered, timeout=60)  # the enqueue timed out: the job waits in the gateway
        finally:
            server.resume()
        await wait_for(lambda: stored(2), timeout=30)  # before the fix: only after claim_stale_s and another message
        assert memorize.memorization.buffered == 0
    finally:
        gateway.stop()
        if server.proc and server.proc.poll() is None:
            server.stop()


async def test_a_worker_takes_up_its_own_unsettled_jobs_once_redis_answers(env):
    """A batch whose settling fails (Redis refuses the worker's XACK here, as a stalled
    Redis times it out) stays in the worker's own pending list; once Redis answers again
    the same worker takes it up at once, not after ``claim_min_idle_ms`` (10 minutes here:
    XAUTOCLAIM is no way out within the test's deadline). Taking it up again while the
    settling still fails counts as no delivery (``max_deliveries`` is for jobs that kill
    their worker), so the job is not dead-lettered for it."""
    import uuid

    import redis.asyncio as aredis

    from gateway.chain.sdk import CallContext
    from gateway.chain.services import PluginServices
    from gateway.memorization.processor import JobProcessor
    from gateway.memorization.runtime import queue_for
    from gateway.memorization.worker import Worker
    from gateway.memory.records import Tenant
    from gateway.proxy.assembly import reply_from_completion
    from gateway.proxy.wire import ChatRequest
    from gateway.runtime.config import TelemetryConfig
    from gateway.runtime.principal import Principal
    from gateway.runtime.telemetry import Telemetry
    from plugins.memorize import MemorizePlugin
    from tests.memorization.conftest import memorize_config, user_stream
    from tests.support.upstream_double import completion

    config = memorize_config("verbatim", worker={"claim_min_idle_ms": 600_000, "claim_every_s": 0.05})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    user = "mgworker" + uuid.uuid4().hex[:8]  # the worker's own Redis user: its XACK can be refused
    await env.redis.acl_setuser(user, enabled=True, nopass=True, categories=["+@all"], keys=["*"], channels=["*"])
    own = aredis.Redis.from_url(env.redis_url, username=user, password="any")
    queue = queue_for(config, own)
    await queue.ensure_group()
    telemetry = Telemetry(TelemetryConfig())
    worker = Worker(JobProcessor(config, store, queue), config.worker, telemetry)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    try:
        await env.redis.acl_setuser(user, enabled=True, nopass=True, commands=["-xack"])
        call = CallContext(request_id="req_" + uuid.uuid4().hex, principal=Principal("k", "alice", "tutor"),
                           original=ChatRequest(model="gpt-4o-mini", messages=[{"role": "user", "content": "I keep bees."}]),
                           headers={}, upstream=None)  # type: ignore[arg-type]  # no upstream calls
        await MemorizePlugin(config, PluginServices(redis=env.redis)).memorization.enqueue(
            call, reply_from_completion(completion("Noted.")), datetime.now(UTC))
        stream = user_stream(queue)

        async def stored_but_pending() -> bool:  # written, its entry not acked: in the worker's own list
            pending = await env.redis.xpending(stream, queue.group)
            return await store.count(Tenant("alice", "tutor")) == 1 and pending["pending"] == 1 \
                and {c["name"] for c in pending["consumers"]} == {worker.name.encode()}

        await wait_for(stored_but_pending, timeout=60)

        async def retried_often() -> bool:  # the worker took it up again and again, failing to settle
            return telemetry.metrics.get("memgate_memorize_failures_total", error="loop") >= 2 + config.worker.max_deliveries

        await wait_for(retried_often, timeout=60)
        await env.redis.acl_setuser(user, enabled=True, nopass=True, commands=["+xack"])

        async def settled() -> bool:
            return (await env.redis.xpending(stream, queue.group))["pending"] == 0 and await env.redis.xlen(stream) == 0

        await wait_for(settled, timeout=30)
        assert await store.count(Tenant("alice", "tutor")) == 1  # taken up, not stored twice
        # its own retries are no deliveries: not dead-lettered as a job that kills workers
        assert await queue_for(config, env.redis).dead_letters() == []
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
        await own.aclose()
        await env.redis.acl_deluser(user)
