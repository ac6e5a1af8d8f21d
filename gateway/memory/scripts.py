"""Read-only Lua scripts of the store, run with ``EVALSHA`` (Redis docs, "Scripting with Lua").

A search used to send a dozen commands (a ``VSIM`` per partition, the BM25 script, an
``HGETALL`` per candidate); each costs the client far more than the server (packing,
a read with its timeout, reply callbacks): ~12 commands were ~60 % of a search's CPU in
the gateway (profile of ``python -m bench load``). The store's scripts batch
them server-side into one command per round trip. Every key a script touches belongs to
one user (the ``{user}`` hash tag), so they run on Redis Cluster too.

:class:`Script` holds a source and its SHA1; a server that lost its script cache (a
restart, or a replica promoted on a cluster: scripts are not replicated) answers
``NOSCRIPT``, and :func:`run` / :func:`execute` load every script of :data:`SCRIPTS` and
try once more. If the node still answers ``NOSCRIPT`` (on a cluster, right after a
failover, the client's ``SCRIPT LOAD`` can reach the nodes of a topology that is about to
change), the third try sends ``EVAL`` with the source, which any node runs (and caches).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar

import redis.asyncio as aredis
import redis.exceptions
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError

from gateway.memory.cluster import is_cluster

__all__ = ['ATOMIC', 'FOLLOW', 'SCRIPTS', 'Batch', 'Script', 'Writes', 'execute', 'run']


class Script:
    """A Lua script (``source``) and its ``sha``; registered in :data:`SCRIPTS`."""

    def __init__(self, name: str, source: str):
        self.name = name
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        SCRIPTS.append(self)

    def queue(self, pipe: Pipeline, keys: Sequence[str], args: Sequence[object] = ()) -> None:
        """Queue ``EVALSHA`` of this script on ``pipe`` (run it with :func:`execute`).
        ``execute_command``, not ``pipe.evalsha``: redis-py's cluster pipeline blocks the
        latter but routes the raw command by its keys (one slot: one user's keys). ``EVAL``
        with the source instead on :func:`execute`'s last try (module docstring)."""
        if _WITH_SOURCE.get():
            pipe.execute_command("EVAL", self.source, len(keys), *keys, *args)
        else:
            pipe.execute_command("EVALSHA", self.sha, len(keys), *keys, *args)


#: True while :func:`execute` builds its last try: scripts are queued as ``EVAL``.
_WITH_SOURCE: ContextVar[bool] = ContextVar("memgate_scripts_with_source", default=False)


#: Every script, loaded together on ``NOSCRIPT``.
SCRIPTS: list[Script] = []


async def _load_all(client: aredis.Redis) -> None:
    """``SCRIPT LOAD`` every script: pipelined on one node; on a cluster on every primary
    the client knows, one node at a time (a promoted replica has an empty script cache:
    scripts are not replicated; a primary that is down is skipped)."""
    if is_cluster(client):
        nodes = client.get_primaries()
        for script in SCRIPTS:
            for node in nodes:
                with contextlib.suppress(redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
                    await client.execute_command("SCRIPT LOAD", script.source, target_nodes=node)
        return
    pipe = client.pipeline(transaction=False)
    for script in SCRIPTS:
        pipe.script_load(script.source)
    await pipe.execute()


async def run(client: aredis.Redis, script: Script, keys: Sequence[str], args: Sequence[object] = ()) -> object:
    """``EVALSHA`` ``script`` (one command, no pipeline); on ``NOSCRIPT`` load every
    script and run it once more, then as ``EVAL`` (module docstring). Raises what the
    script raises (``ResponseError``)."""
    try:
        return await client.evalsha(script.sha, len(keys), *keys, *args)
    except NoScriptError:
        await _load_all(client)
    try:
        return await client.evalsha(script.sha, len(keys), *keys, *args)
    except NoScriptError:
        return await client.eval(script.source, len(keys), *keys, *args)


async def execute(client: aredis.Redis, build: Callable[[Pipeline], None]) -> list:
    """Queue commands with ``build`` on a fresh non-transactional pipeline and run it; on
    ``NOSCRIPT`` load every script and run a rebuilt pipeline once more, then once with
    the scripts sent as ``EVAL`` (module docstring)."""
    for attempt in (1, 2, 3):
        pipe = client.pipeline(transaction=False)
        token = _WITH_SOURCE.set(attempt == 3)
        try:
            build(pipe)
        finally:
            _WITH_SOURCE.reset(token)
        try:
            return await pipe.execute()
        except NoScriptError:
            if attempt == 3:
                raise
            if attempt == 1:
                await _load_all(client)
    raise AssertionError("unreachable")


#: The commands of a :class:`Batch` in one script call: atomic as MULTI/EXEC is (no other
#: command runs in between; like EXEC, an error mid-way does not undo the commands before
#: it). KEYS: every key the commands touch (one user's, one hash tag: one slot). ARGV:
#: for each command its argument count, then its arguments (name first). Reply: commands run.
#: One name is no Redis command but this script's own, :data:`FOLLOW` (``FOLLOW key id
#: bound``, queued by :meth:`Batch.follow`): when the hash ``key`` exists, ``id`` is added
#: to the JSON list in its ``followed_by`` field unless there already, the oldest dropped
#: past ``bound`` ids (:data:`gateway.memory.records.FOLLOWED_BY`).
FOLLOW = "MEMGATE.FOLLOW"
ATOMIC = Script("atomic", """
local function follow(key, id, bound)
  if redis.call('EXISTS', key) == 0 then return end
  local raw = redis.call('HGET', key, 'followed_by')
  local ids = {}
  if raw then ids = cjson.decode(raw) end
  for _, known in ipairs(ids) do
    if known == id then return end
  end
  table.insert(ids, id)
  while #ids > bound do table.remove(ids, 1) end
  redis.call('HSET', key, 'followed_by', cjson.encode(ids))
end
local i, n = 1, 0
while i <= #ARGV do
  local argc = tonumber(ARGV[i])
  if ARGV[i + 1] == '""" + FOLLOW + """' then
    follow(ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4]))
  else
    redis.call(unpack(ARGV, i + 1, i + argc))
  end
  i = i + argc + 1
  n = n + 1
end
return n
""")


#: Most members per SADD / ZREM a :class:`Batch` queues: :data:`ATOMIC` unpacks each
#: command's arguments onto Lua's stack, which holds fewer than 8,000 ("too many results
#: to unpack" would stop the script half-way, the commands before it applied).
CHUNK = 1000


class Batch:
    """Write commands collected for :data:`ATOMIC`, with the subset of redis-py's pipeline
    methods the store's writers use (so a writer queues on either). A record write was a
    MULTI of ~8 commands, each answering ``QUEUED`` that the client reads and parses; as
    one script call it is one reply (the worker's largest cost)."""

    def __init__(self) -> None:
        self.keys: dict[str, None] = {}  # insertion-ordered set
        self.argv: list[object] = []

    def __len__(self) -> int:
        return len(self.argv)

    def _add(self, keys: Sequence[str], *args: object) -> None:
        self.keys.update(dict.fromkeys(keys))
        self.argv.append(len(args))
        self.argv.extend(args)

    def execute_command(self, name: str, key: str, *args: object) -> None:
        """A command whose first argument is its only key (``VADD``, ``VSETATTR``, ``VREM``...)."""
        self._add([key], name, key, *args)

    def hset(self, key: str, *, mapping: Mapping[str, object]) -> None:
        self._add([key], "HSET", key, *(part for item in mapping.items() for part in item))

    def hdel(self, key: str, *fields: str) -> None:
        self._add([key], "HDEL", key, *fields)

    def zadd(self, key: str, mapping: Mapping[str, float]) -> None:
        self._add([key], "ZADD", key, *(part for member, score in mapping.items() for part in (score, member)))

    def zrem(self, key: str, *members: str) -> None:
        for at in range(0, len(members), CHUNK):
            self._add([key], "ZREM", key, *members[at:at + CHUNK])

    def sadd(self, key: str, *members: str) -> None:
        for at in range(0, len(members), CHUNK):
            self._add([key], "SADD", key, *members[at:at + CHUNK])

    def delete(self, *keys: str) -> None:
        self._add(keys, "DEL", *keys)

    def follow(self, key: str, follower_id: str, bound: int) -> None:
        """Add ``follower_id`` to the ``followed_by`` list of the record hash ``key`` when
        that hash exists, once, keeping the newest ``bound`` ids (:data:`FOLLOW`)."""
        self._add([key], FOLLOW, key, follower_id, bound)

    def queue(self, pipe: Pipeline) -> None:
        """Queue the :data:`ATOMIC` call on ``pipe`` (run it with :func:`execute`)."""
        ATOMIC.queue(pipe, list(self.keys), self.argv)


#: Where index writes are queued: a :class:`Batch` (record writes) or a pipeline (rebuilds).
Writes = Batch | Pipeline
