"""What every ``memgate`` command shares: the ``--config`` option, loading the config,
finding the Redis a command should use, and composing the gateway's parts for commands
that need plugins (forget, workers). Imported by :mod:`gateway.cli`,
:mod:`gateway.memory_cli` and :mod:`gateway.memorization.cli`; imports none of them.

Commands that need Redis use ``memory.redis_url`` from the config; without one they use
the embedded server of a running ``memgate serve`` on the same data dir, or start one for
the duration of the command.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import click
import redis.asyncio as aioredis

from gateway.config import ConfigError, GatewayConfig, load_config
from gateway.redis_server import EmbeddedRedis, EmbeddedRedisError, running_url

__all__ = ["CONFIG_OPTION", "composed", "load", "redis_for", "redis_url_for"]

CONFIG_OPTION = click.option(
    "--config", "config_path", default="gateway.yaml", show_default=True,
    type=click.Path(dir_okay=False), help="Path of gateway.yaml.",
)


def load(config_path: str) -> GatewayConfig:
    try:
        return load_config(config_path)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


@contextlib.contextmanager
def redis_url_for(config: GatewayConfig) -> Iterator[str]:
    """The Redis URL the config points at (see module docstring)."""
    if config.memory.redis_url:
        yield config.memory.redis_url
        return
    url = running_url(config.memory.data_dir / "redis")
    if url:
        yield url
        return
    server = EmbeddedRedis(config.memory.data_dir / "redis")
    try:
        yield server.start()
    except EmbeddedRedisError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def redis_for(url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        yield client
    finally:
        await client.aclose()


def with_redis_url(config: GatewayConfig, url: str) -> GatewayConfig:
    """``config`` with ``memory.redis_url`` set to ``url``."""
    return config.model_copy(update={"memory": config.memory.model_copy(update={"redis_url": url})})


@contextlib.asynccontextmanager
async def composed(config: GatewayConfig, url: str, **options: Any) -> AsyncIterator[Any]:
    """The gateway's parts (:func:`gateway.app.compose`) on the Redis at ``url``, plugins
    built but not started (``start_plugins=False`` unless given)."""
    from gateway.app import compose

    options.setdefault("start_plugins", False)
    async with compose(with_redis_url(config, url), **options) as gateway:
        yield gateway
