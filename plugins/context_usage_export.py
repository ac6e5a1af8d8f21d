"""``python -m plugins.context_usage_export --redis-url URL [--key-prefix P] [--stream NAME] > usage.jsonl``:
the ``context_selection`` usage records (seed 004 ``ContextUsageRecord``, written when the
plugin's ``usage_records`` is on) as JSONL, oldest first, for tuning weights offline.

An admin tool run by an operator with access to the gateway's Redis (the same URL as
``memory.redis_url`` and the same ``memory.key_prefix``); it only reads the stream, in the
plugin's key space (``<key prefix>:plugin:context_selection:<stream>``).
"""

from __future__ import annotations

import asyncio
import sys

import click

from gateway.chain.sdk import open_plugin_store
from plugins.context_selection import ContextSelection, ContextSelectionConfig, export_usage


async def _export(url: str, key_prefix: str, stream: str) -> int:
    lines = 0
    async with open_plugin_store(url, key_prefix, ContextSelection.name) as store:
        async for line in export_usage(store, stream):
            sys.stdout.write(line)
            lines += 1
    return lines


@click.command()
@click.option("--redis-url", required=True, help="The gateway's Redis (memory.redis_url).")
@click.option("--key-prefix", default="mg", show_default=True, help="The gateway's memory.key_prefix.")
@click.option("--stream", default=ContextSelectionConfig().usage_stream, show_default=True,
              help="The plugin's usage_stream.")
def main(redis_url: str, key_prefix: str, stream: str) -> None:
    """Print every usage record as one JSON object per line."""
    count = asyncio.run(_export(redis_url, key_prefix, stream))
    click.echo(f"{count} records", err=True)


if __name__ == "__main__":
    main()
