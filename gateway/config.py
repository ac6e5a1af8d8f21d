"""The whole ``gateway.yaml`` (:class:`GatewayConfig`) and how it is read
(:func:`load_config`): the sections of every domain composed into one frozen model.

It sits above the domains whose config models it composes (``memory:`` from
:mod:`gateway.memory.config`, ``settings:`` from :mod:`gateway.settings.memory_settings`)
and above :mod:`gateway.runtime.config`, which holds the sections of the infrastructure
(server, upstream, auth, chain budgets, telemetry, MCP), the base :class:`Frozen`,
:class:`ConfigError` and the ``${ENV}`` interpolation; see that module for the rules
every section follows (frozen, unknown keys rejected, durations named by their unit).
Relative paths (``memory.data_dir``, a local embedding model directory) are relative to the
folder of the config file, not the current directory (:func:`load_config`).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from gateway.memory.config import MemoryConfig
from gateway.memory.records import tenant_id_problem
from gateway.runtime.config import (
    AuthConfig,
    ChainConfig,
    ConfigError,
    Frozen,
    McpConfig,
    PluginEntry,
    PluginOverride,
    ResponsesSharedIds,
    ServerConfig,
    TelemetryConfig,
    UpstreamConfig,
    format_validation_error,
    interpolate_tree,
)
from gateway.settings.memory_settings import SettingsConfig, check_names

_log = logging.getLogger(__name__)

__all__ = ['ClientConfig', 'GatewayConfig', 'load_config', 'parse_config', 'resolve_paths']


class ClientConfig(Frozen):
    """A client key declared in gateway.yaml (see also `memgate keys create`)."""

    key: str | None = Field(None, description="The key itself; use ${ENV}.")
    key_sha256: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="Hex SHA-256 of the key, instead of `key`."
    )
    key_id: str | None = Field(
        None, description="Name for logs and telemetry; default: first 12 hex of the hash."
    )
    user_id: str = Field(..., min_length=1, max_length=256, description="Memory owner.")
    friend_id: str = Field(
        "default", min_length=1, max_length=256, description="Persona/bot id (seed 002)."
    )
    admin: bool = Field(False, description="May manage keys and act on any user's memories.")
    service: bool = Field(
        False,
        description="May name the end user per request (body `user`, X-Memgate-User, "
        "X-Memgate-Friend). Ordinary keys can never change their ids.",
    )
    group: bool = Field(
        False,
        description="Group-chat key (needs `service`): each request acts as the speaker of "
        "its last user message, `<user_id>/<messages[i].name>`, and each turn is memorized "
        "for its own speaker (gateway/speakers/group.py; README \"Group chats\").",
    )
    allowed_models: list[str] = Field(
        default_factory=lambda: ["*"], description="Model-name globs this key may use."
    )
    plugins: dict[str, PluginOverride] = Field(
        default_factory=dict, description="Per-key plugin overrides by plugin name."
    )
    settings: dict[str, Any] = Field(
        default_factory=dict, description="Per-key memory settings (gateway.settings.memory_settings), between "
        "settings.defaults and the user's stored values, e.g. {recall_rounds: 2}; checked against the "
        "core's and the plugins' settings at start-up.",
    )
    responses_shared_ids: ResponsesSharedIds = Field(
        default_factory=ResponsesSharedIds,
        description="Upstream containers, vector stores, stored prompts and files this key may name "
        "in a Responses create, in addition to `upstream.responses_shared_ids` (which every key may "
        "name); a listed container stays unrecorded when this key's responses run in it, as "
        "a globally shared one does (gateway/proxy/responses_owners.py).",
    )

    @field_validator("settings")
    @classmethod
    def _valid_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_names(value)  # names and values: gateway.chain.chain.check_settings

    @field_validator("user_id", "friend_id")
    @classmethod
    def _usable_id(cls, value: str) -> str:
        problem = tenant_id_problem(value)  # the one set of id rules
        if problem is not None:
            raise ValueError(f"id {problem}")
        return value

    @model_validator(mode="after")
    def _one_key(self) -> ClientConfig:
        if (self.key is None) == (self.key_sha256 is None):
            raise ValueError("give exactly one of `key` or `key_sha256`")
        if self.group and not self.service:
            raise ValueError("`group: true` needs `service: true` (a group key names its end users)")
        return self

    @property
    def digest(self) -> str:
        """Hex SHA-256 of the key (what is compared at request time)."""
        return self.key_sha256 or hashlib.sha256(str(self.key).encode()).hexdigest()


class GatewayConfig(Frozen):
    server: ServerConfig = Field(default_factory=ServerConfig, description="HTTP server.")
    upstream: UpstreamConfig = Field(
        default_factory=UpstreamConfig, description="Model provider(s)."
    )
    clients: list[ClientConfig] = Field(default_factory=list, description="Client keys.")
    auth: AuthConfig = Field(default_factory=AuthConfig, description="Key cache.")
    memory: MemoryConfig = Field(default_factory=MemoryConfig, description="Memory store.")
    plugins: list[PluginEntry] = Field(
        default_factory=list, description="Plugin chain in order (request hooks run in "
        "this order, stream and completion hooks in reverse)."
    )
    chain: ChainConfig = Field(default_factory=ChainConfig, description="Hook budgets.")
    telemetry: TelemetryConfig = Field(
        default_factory=TelemetryConfig, description="OpenTelemetry."
    )
    mcp: McpConfig = Field(default_factory=McpConfig, description="The /mcp endpoint.")
    settings: SettingsConfig = Field(
        default_factory=SettingsConfig, description="Per-user memory settings: operator defaults "
        "and locks (gateway.settings.memory_settings)."
    )

    @model_validator(mode="after")
    def _unique_keys(self) -> GatewayConfig:
        """Refuse the same key (by SHA-256, so ``key`` and ``key_sha256`` of one key
        clash too) or the same ``key_id`` in two ``clients`` entries: one would silently
        shadow the other."""
        digests: dict[str, int] = {}
        key_ids: dict[str, int] = {}
        for i, client in enumerate(self.clients):
            first = digests.setdefault(client.digest, i)
            if first != i:
                raise ValueError(f"clients.{i}: the same key as clients.{first}; each key once")
            key_id = client.key_id or client.digest[:12]  # the default, as the Principal's
            first = key_ids.setdefault(key_id, i)
            if first != i:
                raise ValueError(
                    f"clients.{i}.key_id: {key_id!r} is also the key_id of clients.{first}; key ids must be unique"
                )
        return self

    @model_validator(mode="after")
    def _speakers_apart(self) -> GatewayConfig:
        """Refuse an ordinary key whose user id lies inside a group key's namespace
        (``<user_id>/...``, where that key's speakers live; gateway/speakers/group.py): the
        key would read and write a speaker's memories. Keys minted in Redis are not
        checked (README "Memory per speaker")."""
        for j, group in enumerate(self.clients):
            if not group.group:
                continue
            inside = group.user_id + "/"
            for i, client in enumerate(self.clients):
                if not client.service and client.user_id.startswith(inside):
                    raise ValueError(
                        f"clients.{i}.user_id: {client.user_id!r} is inside the speaker namespace of the "
                        f"group key clients.{j} ({inside}<name>); give it another id"
                    )
        return self


def parse_config(data: dict[str, Any] | None) -> GatewayConfig:
    """Validate an already-loaded mapping. Raises ConfigError naming the bad key's path."""
    try:
        return GatewayConfig.model_validate(data or {})
    except ValidationError as exc:
        raise ConfigError(f"invalid gateway config: {format_validation_error(exc)}") from None


def load_config(
    path: str | Path, environ: dict[str, str] | None = None, *, skip_unset_clients: bool = False,
) -> GatewayConfig:
    """Read, interpolate and validate ``gateway.yaml``; relative paths in it are made
    absolute against the file's folder (:func:`resolve_paths`), so the result does not
    depend on the current directory.

    ``skip_unset_clients`` (the CLI's commands other than ``serve``): a ``clients`` entry
    that reads an unset variable without a default (``key: ${GROUP_BOT_KEY}``) is left
    out, with a warning naming the entry and the variable, instead of failing the whole
    load: a command that does not use that key still runs. ``serve`` loads strictly, so a
    gateway never starts without a key its operator configured.

    Raises:
        ConfigError: unreadable file, bad YAML, unset variable, or invalid key (with path).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping")
    if skip_unset_clients and data and isinstance(data.get("clients"), list):
        data = {**data, "clients": _clients_with_their_variables(data["clients"], environ, path)}
    config = parse_config(interpolate_tree(data, environ))
    return resolve_paths(config, Path(path).absolute().parent)


def _clients_with_their_variables(clients: list[Any], environ: dict[str, str] | None, path: str | Path) -> list[Any]:
    """``clients`` without the entries that read an unset variable (each logged as a
    warning); the others are interpolated by the caller as usual."""
    kept = []
    for i, entry in enumerate(clients):
        try:
            interpolate_tree(entry, environ)
        except ConfigError as exc:
            _log.warning("%s: clients.%d left out for this command: %s", path, i, exc)
            continue
        kept.append(entry)
    return kept


def resolve_paths(config: GatewayConfig, base_dir: Path) -> GatewayConfig:
    """``config`` with its relative filesystem paths joined to ``base_dir``.

    ``load_config`` passes the config file's folder: running ``memgate`` from another
    directory then uses the same store rather than silently creating an empty one under
    the current directory. ``~`` is expanded first. The paths: ``memory.data_dir``
    (default ``./data``, i.e. ``<config folder>/data``) and a local embedding model given
    as a directory (``memory.embedding.model``; resolved when loaded, see
    ``EmbeddingConfig.config_dir``, so the model's recorded name does not change).
    """
    memory = config.memory
    data_dir = memory.data_dir.expanduser()
    if not data_dir.is_absolute():
        data_dir = base_dir / data_dir
    memory = memory.model_copy(
        update={"data_dir": data_dir, "embedding": memory.embedding.with_config_dir(base_dir)}
    )
    return config.model_copy(update={"memory": memory})
