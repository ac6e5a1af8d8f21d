"""What every ``memgate`` command shares: the ``--config`` option, loading the config,
finding the Redis a command should use, and composing the gateway's parts for commands
that need plugins (forget, workers). Imported by :mod:`gateway.cli.main`,
:mod:`gateway.cli.memories` and :mod:`gateway.cli.worker`; imports none of them.

Commands that need Redis use ``memory.redis_url`` from the config; without one they use
the embedded server of the data dir's owner (a running ``memgate serve`` or worker), or
start one for the duration of the command (:func:`redis_url_for`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import redis.asyncio as aioredis

from gateway.config import GatewayConfig, load_config
from gateway.runtime.config import ConfigError
from gateway.runtime.redis_server import EmbeddedRedis, EmbeddedRedisError

if TYPE_CHECKING:
    from gateway.settings.memory_settings import SettingsSchema

__all__ = ["CONFIG_OPTION", "composed", "load", "redis_for", "redis_url_for", "settings_schema_of"]

CONFIG_OPTION = click.option(
    "--config", "config_path", default="gateway.yaml", show_default=True,
    type=click.Path(dir_okay=False), help="Path of gateway.yaml.",
)


def load(config_path: str, *, strict: bool = False) -> GatewayConfig:
    """The config for a command. Not ``strict`` (every command but ``serve``): a
    ``clients`` entry whose variable is unset (``key: ${GROUP_BOT_KEY}``) is left out
    with a warning rather than stopping a command that does not need that key
    (:func:`gateway.config.load_config`).

    Raises:
        click.ClickException: no file at ``config_path`` (the message says where it looked
            and how to name the file), or the config is invalid (its path and problem).
    """
    path = Path(config_path)
    if not path.is_file():
        where = config_path if path.is_absolute() else f"{config_path} (in {Path.cwd()})"
        raise click.ClickException(
            f"no config file {where}: run memgate in the folder that holds gateway.yaml "
            "(the repo root) or pass --config /path/to/gateway.yaml")
    try:
        return load_config(config_path, skip_unset_clients=not strict)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def settings_schema_of(config: GatewayConfig) -> SettingsSchema:
    """The per-user settings of the gateway ``config`` describes (the core's and its plugin
    table's, :func:`gateway.chain.chain.settings_schema`; imports the plugins), with the
    config's ``settings:`` and ``clients[].settings`` checked against them.

    Raises:
        click.ClickException: a plugin fails to import, a declaration clashes, or the
            config names an unknown setting or a bad value (the message names its path).
    """
    from gateway.app import default_registry
    from gateway.chain.chain import check_settings, settings_schema

    try:
        schema = settings_schema(config.plugins, default_registry())
        check_settings(config, schema)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    return schema


@contextlib.contextmanager
def redis_url_for(config: GatewayConfig, *, supervise: bool = False) -> Iterator[str]:
    """The Redis URL the config points at: ``memory.redis_url``, else the embedded server
    of ``memory.data_dir/redis``, reused from its owner (a running ``memgate serve`` or
    worker) or started for the duration of the command (:meth:`EmbeddedRedis.open`: never
    a second server on one data dir). ``supervise``: restart / take over the embedded
    server while the command runs (long-lived commands such as ``memgate worker``).

    Raises:
        click.ClickException: the data dir is owned by a process whose server does not
            answer, or no usable redis-server (the message says which and what to do).
    """
    if config.memory.redis_url:
        yield config.memory.redis_url
        return
    server = EmbeddedRedis(config.memory.data_dir / "redis", supervise=supervise)
    try:
        url = server.open()
    except EmbeddedRedisError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        yield url
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def redis_for(url: str, cluster: bool = False) -> AsyncIterator[aioredis.Redis]:
    """A client of ``url`` for one CLI command (2 s connect, 5 s read timeouts); with
    ``cluster`` (``memory.cluster``) a Redis Cluster client of the seed nodes in ``url``."""
    if cluster:
        from gateway.memory.config import MemoryConfig
        from gateway.memory.factory import redis_client

        client = redis_client(url, MemoryConfig(redis_url=url, cluster=True, socket_timeout_s=5))
    else:
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


def keystore_call(config: GatewayConfig, action: Any) -> Any:
    """Run ``await action(RedisKeyStore)`` on the config's Redis (embedded or not, as
    :func:`redis_url_for`) and return its result; exceptions propagate."""
    import asyncio

    from gateway.proxy.keystore import RedisKeyStore

    async def go(url: str) -> Any:
        async with redis_for(url, config.memory.cluster) as client:
            return await action(RedisKeyStore(client, config.memory.key_prefix))

    with redis_url_for(config) as url:
        return asyncio.run(go(url))
