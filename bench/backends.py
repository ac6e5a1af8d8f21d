"""``--backend`` of the benchmarks (issue 15 item 5): ``auto`` runs every memory backend
the Redis server offers, side by side (``vectorset`` on Redis >= 8, ``search`` where the
Query Engine is loaded); a name runs that one."""

from __future__ import annotations

import asyncio

import click
import redis.asyncio as aredis

from gateway.memory.config import MemoryConfig
from gateway.memory.factory import has_query_engine, has_vector_sets, redis_client

__all__ = ['BACKEND_CHOICES', 'available_backends', 'backends_at', 'resolve_backends']

BACKEND_CHOICES = ("auto", "vectorset", "search")


async def available_backends(client: aredis.Redis, wanted: str) -> list[str]:
    """``[wanted]``, or for ``auto`` every backend the server offers (vectorset first).

    Raises:
        click.UsageError: the server offers none of them (the message says what it offers).
    """
    offered = [name for name, probe in (("vectorset", has_vector_sets), ("search", has_query_engine))
               if await probe(client)]
    chosen = offered if wanted == "auto" else [b for b in offered if b == wanted]
    if not chosen:
        raise click.UsageError(f"--backend {wanted}: the Redis server offers {offered or 'no vector backend'}")
    return chosen


async def backends_at(url: str, wanted: str) -> list[str]:
    """:func:`available_backends` of the server at ``url`` (own short-lived client)."""
    client = redis_client(url, MemoryConfig())
    try:
        return await available_backends(client, wanted)
    finally:
        await client.aclose()


def resolve_backends(redis_url: str | None, wanted: str) -> list[str]:
    """The backends to run (sync, for command lines): those of the server at
    ``redis_url``, or for ``None`` (the benchmark's own embedded redis-server, which has
    vector sets and no Query Engine) ``["vectorset"]``.

    Raises:
        click.UsageError: ``wanted`` is not offered (``search`` needs ``--redis-url``).
    """
    if redis_url is None:
        if wanted == "search":
            raise click.UsageError("--backend search needs --redis-url of a server with the Query Engine")
        return ["vectorset"]
    return asyncio.run(backends_at(redis_url, wanted))
