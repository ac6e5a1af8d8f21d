"""``memgate worker``: memorization workers as a separate process.

Wire with ``main.add_command(worker_command)`` in :mod:`gateway.cli.main`. The process opens
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

from gateway.cli.support import composed, load, redis_url_for


async def run_worker_process(config: Any, redis_url: str, n: int, stop: asyncio.Event | None = None,
                             metrics_port: int | None = None, metrics_host: str = "127.0.0.1") -> None:
    """Run ``n`` workers of every plugin with background workers (``memorize``) in the
    config's default chain until ``stop`` or SIGINT/SIGTERM; with ``metrics_port``, serve
    this process's metrics on ``metrics_host`` (127.0.0.1 by default; 0.0.0.0 in a container
    Prometheus scrapes, deploy/k8s) (:meth:`gateway.runtime.metrics.Metrics.serving`).

    Raises:
        click.ClickException: no enabled plugin runs background workers.
    """
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with composed(config, redis_url) as gateway:
        hosts = gateway.chains.workers()
        if not hosts:
            raise click.ClickException("no enabled plugin runs background workers (enable memorize)")
        click.echo(f"memgate worker: {n} worker(s) for {', '.join(h.name for h in hosts)}", err=True)
        with contextlib.ExitStack() as serving:
            if metrics_port is not None:
                try:
                    port = serving.enter_context(gateway.telemetry.metrics.serving(metrics_port, loop, metrics_host))
                except OSError as exc:
                    raise click.ClickException(f"--metrics-port {metrics_port} on {metrics_host}: {exc}") from None
                click.echo(f"memgate worker: metrics at http://{metrics_host}:{port}/metrics", err=True)
            await asyncio.gather(*(h.run_workers(n, stop) for h in hosts))


@click.command("worker")
@click.option("--config", "config_path", default="gateway.yaml", show_default=True,
              type=click.Path(dir_okay=False), help="Path of gateway.yaml.")
@click.option("-n", "--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Workers in this process (each its own consumer in the group).")
@click.option("--metrics-port", default=None, type=click.IntRange(0, 65535),
              help="Serve this process's Prometheus metrics on 127.0.0.1:PORT (0: any free port, "
                   "printed). Default: not served.")
@click.option("--metrics-host", default="127.0.0.1", show_default=True,
              help="Address --metrics-port binds (0.0.0.0 in a container, so Prometheus can scrape it).")
def worker_command(config_path: str, workers: int, metrics_port: int | None, metrics_host: str) -> None:
    """Run memorization workers (share the consumer group with `memgate serve`)."""
    config = load(config_path)
    with redis_url_for(config, supervise=True) as url:
        asyncio.run(run_worker_process(config, url, workers, metrics_port=metrics_port, metrics_host=metrics_host))
