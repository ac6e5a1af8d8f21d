"""``memgate`` command line: serve, keys, memories, worker.

Benchmarks are not part of the product: run them from a checkout with
``python -m bench`` (see ``bench/``).

Commands that need Redis use ``memory.redis_url`` from the config; without one they use
the embedded server of a running ``memgate serve`` on the same data dir, or start one for
the duration of the command.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import click

from gateway.cli_support import CONFIG_OPTION, load, redis_for, redis_url_for
from gateway.config import ConfigError
from gateway.memorization.cli import worker_command
from gateway.memory_cli import register as register_memories

@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Debug logging.")
def main(verbose: bool) -> None:
    """memgate: an OpenAI-compatible proxy that gives chat apps long-term memory."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


@main.command()
@CONFIG_OPTION
@click.option("--host", default=None, help="Override server.host.")
@click.option("--port", default=None, type=int, help="Override server.port.")
def serve(config_path: str, host: str | None, port: int | None) -> None:
    """Run the gateway (and its memorization workers)."""
    config = load(config_path)
    if host or port is not None:
        server = config.server.model_copy(
            update={k: v for k, v in {"host": host, "port": port}.items() if v is not None}
        )
        config = config.model_copy(update={"server": server})
    from gateway.validate import validate_plugins
    from gateway.server import serve as run

    try:
        validate_plugins(config)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    run(config)


@main.group()
def keys() -> None:
    """Manage client keys kept in Redis (hashed at rest)."""


def _keystore_call(config_path: str, action: Any) -> Any:
    from gateway.proxy.keystore import RedisKeyStore

    config = load(config_path)

    async def go(url: str) -> Any:
        async with redis_for(url) as client:
            return await action(RedisKeyStore(client, config.memory.key_prefix))

    with redis_url_for(config) as url:
        return asyncio.run(go(url))


@keys.command("create")
@CONFIG_OPTION
@click.option("--user", "user_id", required=True, help="user_id the key acts for.")
@click.option("--friend", "friend_id", default="default", show_default=True, help="friend_id.")
@click.option("--admin", is_flag=True, help="Admin key.")
@click.option("--service", is_flag=True, help="Service key (may name end users).")
@click.option("--model", "models", multiple=True, help="Allowed model glob (repeatable).")
def keys_create(config_path: str, user_id: str, friend_id: str, admin: bool, service: bool, models: tuple[str, ...]) -> None:
    """Mint a key; it is printed once and stored only as its SHA-256."""

    async def action(store: Any) -> Any:
        return await store.create(
            user_id, friend_id, admin=admin, service=service, allowed_models=models or ("*",)
        )

    key, stored = _keystore_call(config_path, action)
    click.echo(json.dumps({"key": key, **stored.summary()}, indent=2))


@keys.command("list")
@CONFIG_OPTION
def keys_list(config_path: str) -> None:
    """List keys (never the keys themselves), one JSON object per line."""

    async def action(store: Any) -> Any:
        return await store.list()

    for stored in _keystore_call(config_path, action):
        click.echo(json.dumps(stored.summary()))


@keys.command("revoke")
@CONFIG_OPTION
@click.argument("key_id")
def keys_revoke(config_path: str, key_id: str) -> None:
    """Revoke a key by id; every gateway stops accepting it within auth.cache_ttl_seconds."""
    from gateway.errors import NotFound

    async def action(store: Any) -> Any:
        return await store.revoke(key_id)

    try:
        stored = _keystore_call(config_path, action)
    except NotFound as exc:
        raise click.ClickException(exc.message) from None
    click.echo(json.dumps(stored.summary()))


register_memories(main, CONFIG_OPTION)
main.add_command(worker_command)


if __name__ == "__main__":  # pragma: no cover
    main()
