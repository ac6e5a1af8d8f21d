"""Read-only Lua scripts of the store, run with ``EVALSHA`` (Redis docs, "Scripting with Lua").

A search used to send a dozen commands (a ``VSIM`` per partition, the BM25 script, an
``HGETALL`` per candidate); each costs the client far more than the server (packing,
a read with its timeout, reply callbacks): ~12 commands were ~60 % of a search's CPU in
the gateway (issue 10, profile of ``python -m bench load``). The store's scripts batch
them server-side into one command per round trip. Every key a script touches belongs to
one user (the ``{user}`` hash tag), so they run on Redis Cluster too.

:class:`Script` holds a source and its SHA1; a server that lost its script cache (a
restart) answers ``NOSCRIPT``, and :func:`run` / :func:`execute` load every script of
:data:`SCRIPTS` and try once more.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import redis.asyncio as aredis
from redis.asyncio.client import Pipeline
from redis.exceptions import NoScriptError

__all__ = ['SCRIPTS', 'Script', 'execute', 'run']


class Script:
    """A Lua script (``source``) and its ``sha``; registered in :data:`SCRIPTS`."""

    def __init__(self, name: str, source: str):
        self.name = name
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        SCRIPTS.append(self)

    def queue(self, pipe: Pipeline, keys: Sequence[str], args: Sequence[object] = ()) -> None:
        """Queue ``EVALSHA`` of this script on ``pipe`` (run it with :func:`execute`)."""
        pipe.evalsha(self.sha, len(keys), *keys, *args)  # type: ignore[arg-type]


#: Every script, loaded together on ``NOSCRIPT``.
SCRIPTS: list[Script] = []


async def _load_all(client: aredis.Redis) -> None:
    pipe = client.pipeline(transaction=False)
    for script in SCRIPTS:
        pipe.script_load(script.source)
    await pipe.execute()


async def run(client: aredis.Redis, script: Script, keys: Sequence[str], args: Sequence[object] = ()) -> object:
    """``EVALSHA`` ``script`` (one command, no pipeline); on ``NOSCRIPT`` load every
    script and run it once more. Raises what the script raises (``ResponseError``)."""
    try:
        return await client.evalsha(script.sha, len(keys), *keys, *args)  # type: ignore[arg-type]
    except NoScriptError:
        await _load_all(client)
        return await client.evalsha(script.sha, len(keys), *keys, *args)  # type: ignore[arg-type]


async def execute(client: aredis.Redis, build: Callable[[Pipeline], None]) -> list:
    """Queue commands with ``build`` on a fresh non-transactional pipeline and run it; on
    ``NOSCRIPT`` load every script and run a rebuilt pipeline once more."""
    for attempt in (1, 2):
        pipe = client.pipeline(transaction=False)
        build(pipe)
        try:
            return await pipe.execute()
        except NoScriptError:
            if attempt == 2:
                raise
            await _load_all(client)
    raise AssertionError("unreachable")
