"""``memgate`` command line: serve, keys, memories, worker, bench.

Commands that need Redis use ``memory.redis_url`` from the config; without one they use
the embedded server of a running ``memgate serve`` on the same data dir, or start one for
the duration of the command.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import click
import redis.asyncio as aioredis

from gateway.config import ConfigError, GatewayConfig, load_config
from gateway.redis_server import EmbeddedRedis, EmbeddedRedisError, running_url

CONFIG_OPTION = click.option(
    "--config", "config_path", default="gateway.yaml", show_default=True,
    type=click.Path(dir_okay=False), help="Path of gateway.yaml.",
)


def _load(config_path: str) -> GatewayConfig:
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
    config = _load(config_path)
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
    from gateway.keystore import RedisKeyStore

    config = _load(config_path)

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


def _register_memories() -> None:
    from gateway.memory_cli import register

    register(main, CONFIG_OPTION)


_register_memories()


def _register_worker() -> None:
    from gateway.memorization.cli import worker_command

    main.add_command(worker_command)


_register_worker()


@main.group()
def bench() -> None:
    """Benchmarks (figures for the README and issue notes)."""


@bench.command("proxy", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def bench_proxy(ctx: click.Context) -> None:
    """Gateway overhead vs direct upstream; see `memgate bench proxy --help-bench`."""
    from gateway.bench.proxy import main as run

    sys.exit(run(ctx.args))


@bench.command("store", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def bench_store(ctx: click.Context) -> None:
    """Memory store query latency, bytes per memory, query embedding latency."""
    from gateway.memory.bench_store import main as run

    sys.exit(run(ctx.args))




@bench.command("recall", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def bench_recall(ctx: click.Context) -> None:
    """Added latency of the recall side (request phase) with 10k memories in the tenant."""
    from gateway.bench.recall import main as run

    sys.exit(run(ctx.args))


@bench.command("memorize", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def bench_memorize(ctx: click.Context) -> None:
    """Memorization jobs/s per worker and the enqueue cost on the request path."""
    from gateway.memorization.bench_memorize import main as run

    sys.exit(run(ctx.args))


@bench.command("locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--k", "ks", multiple=True, type=int, default=(5, 10, 25), show_default=True, help="Cut-offs (repeatable).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), default=None, help="Write results as JSON.")
@click.option("--variant", "variants", multiple=True, default=("keyword-heavy+captions+dates+context",), show_default=True,
              help="Retrieval variant(s): vector, hybrid, hybrid+captions, hybrid+captions+dates, or all.")
@click.option("--redis-url", default=None, help="Redis >= 8 to use (default: a temporary embedded one).")
@click.option("--via-chat", is_flag=True, help="Replay the conversations through /v1/chat/completions, "
              "memorize (verbatim), then measure the evidence injected into the upstream request.")
@click.option("--embedder", type=click.Choice(["local", "onnx", "model2vec"]), default="local", show_default=True,
              help="Local embedding provider for the store (not with --via-chat, which uses the config's).")
def bench_locomo(path: str, ks: tuple[int, ...], json_out: str | None, variants: tuple[str, ...],
                 redis_url: str | None, via_chat: bool, embedder: str) -> None:
    """Evidence recall@k of the memory store on a LoCoMo-format file."""
    from gateway.locomo.harness import VARIANTS, main as run

    if via_chat:
        from gateway.memorization.locomo_chat import run_locomo_via_chat

        run_locomo_via_chat(path, tuple(sorted(set(ks))), "verbatim", json_out, redis_url=redis_url)
        return

    chosen = list(VARIANTS) if "all" in variants else list(variants)
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown:
        raise click.BadParameter(f"unknown variant(s) {unknown}; choose from {list(VARIANTS)} or all")
    sys.exit(run(path, tuple(sorted(set(ks))), chosen, json_out, redis_url, embedder))


if __name__ == "__main__":  # pragma: no cover
    main()
