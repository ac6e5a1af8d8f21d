"""``python -m plugins.context_usage_export --redis-url URL [--stream KEY] > usage.jsonl``:
the ``context_selection`` usage records (seed 004 ``ContextUsageRecord``, written when the
plugin's ``usage_records`` is on) as JSONL, oldest first, for tuning weights offline.

An admin tool run by an operator with access to the gateway's Redis (the same URL as
``memory.redis_url``); it only reads the stream.
"""

from __future__ import annotations

import asyncio
import sys

import click
import redis.asyncio as aioredis

from plugins.context_selection import ContextSelectionConfig, export_usage


async def _export(url: str, stream: str) -> int:
    client = aioredis.from_url(url)
    lines = 0
    try:
        async for line in export_usage(client, stream):
            sys.stdout.write(line)
            lines += 1
    finally:
        await client.aclose()
    return lines


@click.command()
@click.option("--redis-url", required=True, help="The gateway's Redis (memory.redis_url).")
@click.option("--stream", default=ContextSelectionConfig().usage_stream, show_default=True,
              help="The plugin's usage_stream.")
def main(redis_url: str, stream: str) -> None:
    """Print every usage record as one JSON object per line."""
    count = asyncio.run(_export(redis_url, stream))
    click.echo(f"{count} records", err=True)


if __name__ == "__main__":
    main()
