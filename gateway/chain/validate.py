"""Start-up validation of the plugin chain, before anything is started.

Resolves every plugin, checks ``runs_after`` / ``runs_before`` and ``conflicts_with``
(for the global chain and each key's variant), and validates each plugin's config and
every client key's overrides; the first problem stops start-up with
a :class:`ConfigError` naming the key's path.
"""

from __future__ import annotations

from collections.abc import Mapping

from gateway.chain.chain import (
    check_conflicts,
    check_key_overrides,
    check_order,
    enabled_entries,
    plugin_config,
    resolve_plugin_class,
    validate_key_plugins,
)
from gateway.config import GatewayConfig

__all__ = ['validate_key_plugins', 'validate_plugins']


def validate_plugins(config: GatewayConfig, registry: Mapping[str, type]) -> None:
    """Raises ConfigError on the first invalid plugin entry or client override.
    ``registry``: plugin classes by name (the built-in ones:
    :func:`gateway.app.default_registry`, which the caller passes: the chain sits below
    the composition root and never imports it)."""
    classes = {e.name: resolve_plugin_class(e.name, registry) for e in config.plugins}
    check_order([e.name for e in config.plugins], list(classes.values()))
    ordered = [classes[e.name] for e in config.plugins]
    on = enabled_entries(config.plugins, ordered, {})
    check_conflicts([e.name for e, _ in on], [c for _, c in on])
    for i, entry in enumerate(config.plugins):
        plugin_config(classes[entry.name], entry.config, f"plugins.{i}.config")
    for i, client in enumerate(config.clients):
        check_key_overrides(config, classes, ordered, client.plugins, f"clients.{i}.plugins")
