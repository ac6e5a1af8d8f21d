"""``memgate worker``: memorization workers as a separate process (issue 5, item 2).

Wire with ``main.add_command(worker_command)`` in :mod:`gateway.cli`. The process opens
Redis and the memory store from the same ``gateway.yaml`` as ``memgate serve``, runs
``-n`` workers in the shared consumer group and stops cleanly on SIGINT/SIGTERM (each
worker finishes its current job; an interrupted one is reclaimed by another worker).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

import click

from gateway.memorization.runtime import memorize_config_of, run_workers


async def run_worker_process(config: Any, redis_url: str, n: int, stop: asyncio.Event | None = None) -> None:
    """Run ``n`` workers for ``config`` (a GatewayConfig) until ``stop`` or a signal."""
    from gateway.memory.factory import open_store
    from gateway.memory_wiring import redis_client
    from gateway.telemetry import Telemetry
    from gateway.proxy.upstream import UpstreamPool

    memorize = memorize_config_of(config)
    if memorize is None:
        raise click.ClickException("the memorize plugin is not enabled in this config")
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    telemetry = Telemetry(config.telemetry)
    client = redis_client(redis_url, config.memory)
    upstreams = UpstreamPool(config.upstream)
    try:
        async with open_store(client, config.memory, upstream_base_url=config.upstream.base_url,
                              upstream_api_key=config.upstream.api_key) as store:
            async with run_workers(memorize, client, store, upstreams, n, telemetry) as workers:
                click.echo(f"memgate worker: {len(workers)} worker(s) on {memorize.queue.key_prefix}:jobs", err=True)
                await stop.wait()
    finally:
        await upstreams.aclose()
        await client.aclose()
        telemetry.shutdown()


@click.command("worker")
@click.option("--config", "config_path", default="gateway.yaml", show_default=True,
              type=click.Path(dir_okay=False), help="Path of gateway.yaml.")
@click.option("-n", "--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Workers in this process (each its own consumer in the group).")
def worker_command(config_path: str, workers: int) -> None:
    """Run memorization workers (share the consumer group with `memgate serve`)."""
    from gateway.cli import _load, redis_url_for

    config = _load(config_path)
    with redis_url_for(config) as url:
        asyncio.run(run_worker_process(config, url, workers))
