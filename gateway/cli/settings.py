"""``memgate settings get|set``: a user's memory settings from the command line
(:mod:`gateway.settings.memory_settings`). Works on Redis directly (same URL and key prefix as the
gateway's config), whether or not a gateway runs; a running gateway applies a change
within ``settings.cache_ttl_s``.

- ``memgate settings get --user U --friend F``: the settings view as JSON (the shape of
  ``GET /v1/admin/users/{U}/settings?friend_id=F``).
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

from gateway.cli.support import load, redis_for, redis_url_for, settings_schema_of
from gateway.runtime.errors import MemgateError
from gateway.settings.memory_settings import SettingsService, SettingsStore

__all__ = ["register"]


def _run(config_path: str, action: Callable[[SettingsService], Awaitable[Any]]) -> Any:
    """Run ``action`` with the settings service of the config's gateway: its settings are
    the core's and its plugins' (:func:`gateway.cli.support.settings_schema_of`)."""
    config = load(config_path)
    schema = settings_schema_of(config)

    async def go(url: str) -> Any:
        async with redis_for(url, config.memory.cluster) as client:
            return await action(SettingsService(
                config.settings, SettingsStore(client, config.memory.key_prefix), schema=schema))

    with redis_url_for(config) as url:
        try:
            return asyncio.run(go(url))
        except MemgateError as exc:  # the CLI boundary: one readable line, exit 1
            raise click.ClickException(exc.public_message or exc.message) from None


def register(main: click.Group, config_option: Callable[[Any], Any]) -> None:
    """Add the ``settings`` group to ``main``."""

    @main.group("settings")
    def settings() -> None:
        """A user's memory settings (recall, display and plugin switches)."""

    @settings.command("get")
    @config_option
    @click.option("--user", "user_id", required=True, help="The user.")
    @click.option("--friend", "friend_id", required=True, help="The friend (persona).")
    def get(config_path: str, user_id: str, friend_id: str) -> None:
        """Print the user's settings for the friend (effective, stored, locked, bounds)."""
        view = _run(config_path, lambda service: service.view(user_id, friend_id, {}))
        click.echo(json.dumps(view.model_dump(mode="json"), indent=2, ensure_ascii=False))

    @settings.command("set")
    @config_option
    @click.option("--user", "user_id", required=True, help="The user.")
    @click.option("--friend", "friend_id", required=True, help="The friend (persona).")
    @click.argument("assignments", nargs=-1, required=True)
    def set_(config_path: str, user_id: str, friend_id: str, assignments: tuple[str, ...]) -> None:
        """Store NAME=VALUE settings (JSON values; NAME=null: back to the default)."""
        view = _run(config_path, lambda service: service.update(
            user_id, friend_id, service.schema.parse_assignments(assignments), {}))
        click.echo(json.dumps(view.model_dump(mode="json"), indent=2, ensure_ascii=False))
