"""Running workers: inside ``memgate serve`` (the ``memorize`` plugin's lifecycle, through
:class:`gateway.memorization.service.Memorization`) or in a ``memgate worker`` process
(:mod:`gateway.cli.worker`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from gateway.memorization.config import MemorizeConfig
from gateway.memorization.keys import QueueKeys
from gateway.memorization.observe import register_queue_gauges
from gateway.memorization.processor import JobProcessor
from gateway.memorization.queue import JobQueue
from gateway.memorization.worker import Worker, consumer_name

log = logging.getLogger("memgate.memorize")


def queue_for(config: MemorizeConfig, redis: Any) -> JobQueue:
    """The job queue of ``config`` (its key prefix, ``queue.shards`` and group) on ``redis``."""
    return JobQueue(redis, QueueKeys(config.queue.key_prefix, config.queue.shards), config.queue.group)


@contextlib.asynccontextmanager
async def run_workers(
    config: MemorizeConfig, redis: Any, store: Any, upstreams: Any = None, n: int = 1,
    telemetry: Any = None, model: Any = None, stop_grace_s: float = 10.0, busy: Callable[[], bool] | None = None,
) -> AsyncIterator[list[Worker]]:
    """``n`` workers as tasks until exit; on exit each finishes its current job (up to
    ``stop_grace_s``), then is cancelled (an unfinished job stays pending and is
    reclaimed). ``model``: a memory-model client to use instead of building one from
    ``config.model`` (its owner closes it). Gauges are registered on ``telemetry``.
    ``busy``: whether the request path on the same event loop is saturated (the workers
    yield to it then: :meth:`Worker.yields`).

    Before the first job the store's models run once (``store.warm()``: the embedder and
    the calibration, seconds in a fresh process), so no job pays them inside its
    ``worker.job_timeout_s``; a warm-up that fails is logged and the workers start anyway
    (the jobs then fail and retry as they would have)."""
    queue = queue_for(config, redis)
    await queue.ensure_group()
    warm = getattr(store, "warm", None)
    if warm is not None:
        try:
            await warm()
        except Exception as exc:  # the model or Redis: the jobs will meet it again, with retries
            log.warning("memorize workers: warming the store's models failed: %r", exc)
    owned = None
    if model is None and config.mode == "extract":
        from gateway.proxy.model_client import ModelClient

        model = owned = ModelClient(config.model, upstreams)
    processor = JobProcessor(config, store, queue, model, telemetry=telemetry)
    workers = [Worker(processor, config.worker, telemetry, consumer_name(i), busy=busy) for i in range(n)]
    if telemetry is not None:
        register_queue_gauges(telemetry.metrics, queue)
    stop = asyncio.Event()
    tasks = [asyncio.create_task(w.run(stop), name=f"memorize-{w.name}") for w in workers]
    try:
        yield workers
    finally:
        stop.set()
        _done, pending = await asyncio.wait(tasks, timeout=stop_grace_s) if tasks else (set(), set())
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if owned is not None:
            await owned.aclose()


async def wait_drained(queue: JobQueue, timeout_s: float = 60.0, poll_s: float = 0.05) -> None:
    """Until nothing is waiting, in flight or parked for retry.

    Raises:
        TimeoutError: still busy after ``timeout_s``.
    """
    async with asyncio.timeout(timeout_s):
        while not await queue.drained():  # noqa: ASYNC110 (polls Redis: no event to wait on)
            await asyncio.sleep(poll_s)
