"""``memgate settings get|set``: a user's memory settings from the command line
(:mod:`gateway.settings.memory_settings`). Works on Redis directly (same URL and key prefix as the
gateway's config), whether or not a gateway runs; a running gateway applies a change
within ``settings.cache_ttl_s``.

- ``memgate settings get --user U --friend F``: the settings view as JSON, as
  ``GET /v1/admin/users/{U}/settings?friend_id=F`` gives it, ``in_use`` included (what the
  config's default chain uses for a setting nobody set).
- ``--friend`` defaults as in ``memgate memories``: the friend of U's key(s) in
  ``gateway.yaml`` or, when it has none, in Redis (:func:`gateway.cli.memories.default_friend`),
  else it is required.
- ``memgate settings set --user U --friend F name=value ...``: store values (JSON values:
  ``recall_rounds=2``, ``show_thinking=true``; ``name=null`` removes the stored value),
  then print the view. Unknown names, bad values and locked names are refused (exit 1,
  the name in the message).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import click

from gateway.cli.memories import FRIEND_HELP, default_friend
from gateway.cli.support import composed, load, redis_url_for
from gateway.config import GatewayConfig
from gateway.runtime.config import ConfigError
from gateway.runtime.errors import MemgateError
from gateway.settings.memory_settings import SettingsService

__all__ = ["register"]


def _run(config: GatewayConfig, action: Callable[[SettingsService, dict[str, dict[str, Any]]], Awaitable[Any]]) -> Any:
    """Run ``action`` with the settings service of the config's gateway (its settings are
    the core's and its plugins') and what the gateway's default chain uses for each
    setting nobody set (:meth:`gateway.chain.chain.PluginChain.setting_fallbacks`, the
    view's ``in_use``, as the admin route shows it). The gateway's parts are composed
    without starting the plugins or loading the embedding model
    (:func:`gateway.cli.support.composed`).

    Raises:
        click.ClickException: an invalid config or setting, Redis unreachable, a refused
            write (the message names the setting).
    """
    async def go(url: str) -> Any:
        async with composed(config, url, lazy_embedder=True, warn_upstream=False) as gateway:
            return await action(gateway.settings, gateway.chains.default.setting_fallbacks())

    with redis_url_for(config) as url:
        try:
            return asyncio.run(go(url))
        except MemgateError as exc:  # the CLI boundary: one readable line, exit 1
            raise click.ClickException(exc.public_message or exc.message) from None
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from None


def register(main: click.Group, config_option: Callable[[Any], Any]) -> None:
    """Add the ``settings`` group to ``main``."""

    @main.group("settings")
    def settings() -> None:
        """A user's memory settings (recall, display and plugin switches)."""

    @settings.command("get")
    @config_option
    @click.option("--user", "user_id", required=True, help="The user.")
    @click.option("--friend", "friend_id", default=None, help=FRIEND_HELP)
    def get(config_path: str, user_id: str, friend_id: str | None) -> None:
        """Print the user's settings for the friend (effective, stored, locked, bounds, and
        in_use: what the plugins use for a setting nobody set)."""
        config = load(config_path)
        friend = default_friend(config, user_id, friend_id)
        view = _run(config, lambda service, used: service.view(user_id, friend, {}, used))
        click.echo(json.dumps(view.model_dump(mode="json"), indent=2, ensure_ascii=False))

    @settings.command("set")
    @config_option
    @click.option("--user", "user_id", required=True, help="The user.")
    @click.option("--friend", "friend_id", default=None, help=FRIEND_HELP)
    @click.argument("assignments", nargs=-1, required=True)
    def set_(config_path: str, user_id: str, friend_id: str | None, assignments: tuple[str, ...]) -> None:
        """Store NAME=VALUE settings (JSON values; NAME=null: back to the default)."""
        config = load(config_path)
        friend = default_friend(config, user_id, friend_id)
        view = _run(config, lambda service, used: service.update(
            user_id, friend, service.schema.parse_assignments(assignments), {}, used))
        click.echo(json.dumps(view.model_dump(mode="json"), indent=2, ensure_ascii=False))
