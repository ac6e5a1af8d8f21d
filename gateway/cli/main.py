"""``memgate`` command line: serve, keys, memories, settings, worker, mcp.

Benchmarks are not part of the product: run them from a checkout with
``python -m bench`` (see ``bench/``).

Commands that need Redis use ``memory.redis_url`` from the config; without one they use
the embedded server of a running ``memgate serve`` on the same data dir, or start one for
the duration of the command.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import socket
import sys
from typing import Any

import click

from gateway.cli.lorebooks import register as register_lorebook
from gateway.cli.memories import FRIEND_HELP, default_friend
from gateway.cli.memories import register as register_memories
from gateway.cli.settings import register as register_settings
from gateway.cli.support import CONFIG_OPTION, keystore_call, load, redis_for, redis_url_for
from gateway.cli.worker import worker_command
from gateway.runtime.config import ConfigError

__all__ = ['VERBOSITY', 'keys', 'keys_create', 'keys_list', 'keys_revoke', 'main', 'mcp_command', 'serve']

#: ``-v`` count -> log level of the root logger (quiet by default: warnings and errors).
VERBOSITY = {0: logging.WARNING, 1: logging.INFO}


@click.group()
@click.option("-v", "--verbose", count=True, help="More logging on stderr: -v info, -vv debug.")
def main(verbose: int) -> None:
    """memgate: an OpenAI-compatible proxy that gives chat apps long-term memory.

    Results go to stdout; logs, progress and messages to stderr. Quiet by default:
    warnings and errors only, no progress bars (model loading); -v adds info logs
    and progress bars, -vv debug logs.
    """
    logging.basicConfig(
        level=VERBOSITY.get(verbose, logging.DEBUG),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if verbose == 0:
        # Read by huggingface_hub when transformers is first imported (tqdm bars while
        # loading the embedding model); an explicit setting in the environment wins.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


@main.command()
@CONFIG_OPTION
@click.option("--host", default=None, help="Override server.host.")
@click.option("--port", default=None, type=int, help="Override server.port.")
@click.option("--workers", default=None, type=click.IntRange(1, 64),
              help="Override server.workers: gateway processes on the one port.")
def serve(config_path: str, host: str | None, port: int | None, workers: int | None = None) -> None:
    """Run the gateway (and its memorization workers); server.workers processes."""
    config = load(config_path, strict=True)
    if host or port is not None or workers is not None:
        server = config.server.model_copy(
            update={k: v for k, v in {"host": host, "port": port, "workers": workers}.items() if v is not None}
        )
        config = config.model_copy(update={"server": server})
    from gateway.app import default_registry
    from gateway.chain.validate import validate_plugins
    from gateway.cli.server import serve as run

    try:
        validate_plugins(config, default_registry())
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    _check_listen(config.server.host, config.server.port)
    base = f"http://{config.server.host}:{config.server.port}"
    keys = ", ".join(
        f"{c.key_id or c.digest[:12]} (user {c.user_id}, friend {c.friend_id}{', admin' if c.admin else ''})"
        for c in config.clients
    )
    click.echo(f"memgate: starting on {base} (OpenAI base_url {base}/v1, console {base}/console/); "
               f"config keys: {keys or 'none'}; Ctrl-C stops it", err=True)
    run(config)


def _check_listen(host: str, port: int) -> None:
    """Stop ``serve`` before it builds anything when ``host:port`` cannot be bound (a
    probe socket with ``SO_REUSEADDR``, as uvicorn binds, closed at once), instead of
    uvicorn's bare ``[Errno 98]`` after the models have loaded.

    Raises:
        click.ClickException: the port is in use (the message says how to pick another),
            or the address cannot be bound (the system's reason).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise click.ClickException(
                    f"{host}:{port} is already in use (another memgate serve?): stop that process, or serve "
                    "on another port with --port N (MEMGATE_PORT=N with the default gateway.yaml)") from None
            raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@main.group()
def keys() -> None:
    """Manage client keys kept in Redis (hashed at rest)."""


def _keystore_call(config_path: str, action: Any) -> Any:
    return keystore_call(load(config_path), action)


@keys.command("create")
@CONFIG_OPTION
@click.option("--user", "user_id", required=True, help="user_id the key acts for.")
@click.option("--friend", "friend_id", default=None, help=FRIEND_HELP)
@click.option("--admin", is_flag=True, help="Admin key.")
@click.option("--service", is_flag=True, help="Service key (may name end users).")
@click.option("--group", is_flag=True, help="Group-chat service key: each message's `name` is a speaker under USER.")
@click.option("--model", "models", multiple=True, help="Allowed model glob (repeatable).")
@click.option(
    "--set", "assignments", multiple=True, metavar="NAME=VALUE",
    help="A memory setting of this key (repeatable), e.g. --set recall_rounds=2: between "
    "settings.defaults and the user's own values (README, Settings).",
)
@click.option(
    "--plugin", "enable", multiple=True, metavar="NAME",
    help="Turn a plugin of gateway.yaml's plugins: on for this key (repeatable), e.g. --plugin context_selection.",
)
@click.option("--no-plugin", "disable", multiple=True, metavar="NAME", help="Turn a plugin off for this key (repeatable).")
@click.option(
    "--plugin-config", "plugin_configs", multiple=True, metavar="NAME=JSON",
    help="Config keys of a plugin for this key, merged over its gateway.yaml config (repeatable), "
    "e.g. --plugin-config 'context_selection={\"bot_names\": [\"Kiki\"]}'.",
)
def keys_create(
    config_path: str, user_id: str, friend_id: str | None, admin: bool, service: bool, models: tuple[str, ...],
    group: bool = False, assignments: tuple[str, ...] = (), enable: tuple[str, ...] = (),
    disable: tuple[str, ...] = (), plugin_configs: tuple[str, ...] = (),
) -> None:
    """Mint a key; it is printed once and stored only as its SHA-256: stdout the JSON
    record (the key in "key"), stderr the key alone on its own line with that warning.

    A group-chat bot's key, with context selection on for it (README, Group chats):
    memgate keys create --user groupbot --friend kiki --service --group --plugin context_selection
    --plugin-config 'context_selection={"bot_names": ["Kiki"]}'
    """
    from gateway.cli.support import settings_schema_of
    from gateway.memory.records import check_tenant_id
    from gateway.runtime.errors import InvalidRequest, PermissionDenied
    from gateway.settings.memory_settings import CORE

    config = load(config_path)
    schema = settings_schema_of(config) if assignments else CORE  # no setting: no plugin imports
    friend_id = default_friend(config, user_id, friend_id)
    try:
        check_tenant_id(user_id, "--user")
        check_tenant_id(friend_id, "--friend")
        settings = schema.parse_assignments(assignments, "--set ")
    except InvalidRequest as exc:
        raise click.ClickException(exc.message) from None
    if group and not service:
        raise click.ClickException("--group needs --service (a group key names its end users)")
    plugins = _plugin_overrides(config, enable, disable, plugin_configs)

    async def action(store: Any) -> Any:
        return await store.create(
            user_id, friend_id, admin=admin, service=service, allowed_models=models or ("*",), group=group,
            settings=settings, locked=tuple(config.settings.locked), plugins=plugins, schema=schema,
        )

    try:
        key, stored = _keystore_call(config_path, action)
    except PermissionDenied as exc:
        raise click.ClickException(exc.message) from None
    click.echo(json.dumps({"key": key, **stored.summary(), "plugins": {
        name: override.model_dump() for name, override in plugins.items()}}, indent=2))
    # for people: the key alone on its line, on stderr (stdout stays the JSON record for scripts)
    click.echo(f"memgate: key {stored.key_id} for user {user_id!r}, friend {friend_id!r}; save it now, it is shown "
               "only this once (memgate keeps only its SHA-256; revoke with: memgate keys revoke "
               f"{stored.key_id}):\n{key}", err=True)


def _plugin_overrides(
    config: Any, enable: tuple[str, ...], disable: tuple[str, ...], plugin_configs: tuple[str, ...],
) -> dict[str, Any]:
    """``--plugin`` / ``--no-plugin`` / ``--plugin-config`` as the key's plugin overrides,
    checked against the config's chain as a config key's are at start-up.

    Raises:
        click.ClickException: an unknown plugin, a bad JSON object, an invalid config or a
            conflict (the message names the option and the plugin).
    """
    if not (enable or disable or plugin_configs):  # no override: no plugin imports (a quick command)
        return {}
    from gateway.app import default_registry
    from gateway.chain.chain import validate_key_plugins
    from gateway.runtime.config import PluginOverride

    both = set(enable) & set(disable)
    if both:
        raise click.ClickException(f"--plugin and --no-plugin both name {sorted(both)}")
    configs: dict[str, dict[str, Any]] = {}
    for item in plugin_configs:
        name, sep, text = item.partition("=")
        try:
            value = json.loads(text) if sep else None
        except ValueError as exc:
            raise click.ClickException(f"--plugin-config {name}: not JSON: {exc}") from None
        if not name or not isinstance(value, dict):
            raise click.ClickException(f"--plugin-config {item!r}: expected NAME={{JSON object}}")
        configs[name] = {**configs.get(name, {}), **value}
    names = dict.fromkeys([*enable, *disable, *configs])
    overrides = {
        name: PluginOverride(enabled=True if name in enable else False if name in disable else None,
                             config=configs.get(name, {}))
        for name in names
    }
    try:
        validate_key_plugins(config, overrides, "--plugin", default_registry())
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    return overrides


@keys.command("list")
@CONFIG_OPTION
def keys_list(config_path: str) -> None:
    """List the keys in Redis (never the keys themselves), one JSON object per line (none:
    nothing on stdout, a line on stderr saying so and how to create one)."""

    async def action(store: Any) -> Any:
        return await store.list()

    stored_keys = _keystore_call(config_path, action)
    for stored in stored_keys:
        click.echo(json.dumps(stored.summary()))
    if not stored_keys:
        click.echo("no keys in the key store (config keys live in gateway.yaml, clients:); "
                   "create one with: memgate keys create --user U --friend F", err=True)


@keys.command("revoke")
@CONFIG_OPTION
@click.argument("key_id")
def keys_revoke(config_path: str, key_id: str) -> None:
    """Revoke a key by id; every gateway stops accepting it within auth.cache_ttl_s.

    Keys declared in gateway.yaml (clients:) are not in Redis: the command says so
    and names the entry (remove it there and restart).
    """
    from gateway.runtime.errors import NotFound

    config = load(config_path)
    for i, client in enumerate(config.clients):
        if key_id == (client.key_id or client.digest[:12]):
            raise click.ClickException(
                f"key {key_id!r} is a config key (clients.{i} in {config_path}): config keys live in "
                "gateway.yaml, not in the key store; remove or change it there and restart the gateway"
            )

    async def action(store: Any) -> Any:
        return await store.revoke(key_id)

    try:
        stored = _keystore_call(config_path, action)
    except NotFound as exc:
        raise click.ClickException(exc.message) from None
    click.echo(json.dumps(stored.summary()))


@main.command("mcp")
@CONFIG_OPTION
def mcp_command(config_path: str) -> None:
    """Serve the memory as MCP tools on stdin/stdout (for Claude Desktop, Cursor...).

    The memgate key comes from the environment: MEMGATE_API_KEY (required). A service
    key may act for an end user named by MEMGATE_END_USER / MEMGATE_END_FRIEND
    (percent-encoded as the X-Memgate-User / X-Memgate-Friend headers; not
    MEMGATE_USER, which the default gateway.yaml reads for its dev key). The tools
    and their tenancy are those of /mcp on the gateway (gateway/api/mcp.py); the
    config's store is opened as "memgate memories" does (the embedding model loads on
    the first call that embeds; Redis as for every command: memory.redis_url, else the
    embedded server of a running "memgate serve", else one started for the command).
    stdout carries only the protocol; logs go to stderr.
    """
    from gateway.api.mcp import serve_stdio
    from gateway.memory.factory import open_store
    from gateway.proxy.auth import Authenticator
    from gateway.proxy.keystore import RedisKeyStore
    from gateway.runtime.errors import MemgateError
    from gateway.settings.memory_settings import SettingsService, SettingsStore

    key = os.environ.get("MEMGATE_API_KEY", "").strip()
    if not key:
        raise click.ClickException("MEMGATE_API_KEY is not set: put the memgate key in the environment")
    end_user = {
        header: os.environ[name]
        for header, name in (("x-memgate-user", "MEMGATE_END_USER"), ("x-memgate-friend", "MEMGATE_END_FRIEND"))
        if name in os.environ
    }
    config = load(config_path)

    async def go(url: str) -> None:
        # the store and key lookup as the gateway composes them (gateway.app.compose),
        # without its proxy parts and plugins
        memory, upstream = config.memory, config.upstream
        async with redis_for(url, config.memory.cluster) as client, open_store(
            client, memory, upstream_base_url=upstream.base_url, upstream_api_key=upstream.api_key,
            lazy_embedder=True,
        ) as store:
            auth = Authenticator(config.clients, RedisKeyStore(client, memory.key_prefix), config.auth.cache_ttl_s)
            # the core's settings suffice (the tools read recall_enabled); no plugin imports
            settings = SettingsService(config.settings, SettingsStore(client, memory.key_prefix))
            await serve_stdio(store, auth, key, end_user, settings)

    with redis_url_for(config) as url:
        try:
            asyncio.run(go(url))
        except MemgateError as exc:  # the CLI boundary: one readable line, exit 1
            raise click.ClickException(exc.public_message or exc.message) from None


register_memories(main, CONFIG_OPTION)
register_lorebook(main, CONFIG_OPTION)
register_settings(main, CONFIG_OPTION)
main.add_command(worker_command)


if __name__ == "__main__":  # pragma: no cover
    main()
