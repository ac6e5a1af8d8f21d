"""``gateway.yaml``: parsed once at start-up into frozen pydantic models.

Every model is ``frozen`` with ``extra="forbid"`` and a description on every field, so a
typo stops start-up with the dotted path of the bad key (``plugins.2.config.limt``).
Secrets come from ``${ENV}`` interpolation (``${NAME}`` or ``${NAME:-default}``), never
from the file itself; an unset variable without a default is an error naming it.
Relative paths (``memory.data_dir``, a local embedding model directory) are relative to the
folder of the config file, not the current directory (:func:`load_config`).
Durations: every duration key, here and in each plugin's ``Config``, ends with its unit,
``_ms`` (milliseconds) or ``_s`` (seconds); no other suffix or bare name means a duration.

Top-level sections other code and docs rely on: ``server``, ``upstream``, ``clients``,
``memory``, ``plugins`` (chain order), ``telemetry``; plus ``chain`` (time budgets),
``auth`` (key cache) and ``settings`` (per-user memory settings: operator ``defaults``
and ``locked`` names, :class:`gateway.settings.memory_settings.SettingsConfig`; precedence built-in <
``settings.defaults`` < a key's ``settings`` < the user's stored values, locks win).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gateway.memory.config import MemoryConfig
from gateway.memory.records import tenant_id_problem
from gateway.runtime.errors import InvalidRequest
from gateway.settings.memory_settings import SettingsConfig, check_overrides

_log = logging.getLogger(__name__)

__all__ = ['AuthConfig', 'ChainConfig', 'ClientConfig', 'ConfigError', 'Frozen', 'GatewayConfig', 'McpConfig', 'PluginEntry', 'PluginOverride', 'ResponsesSharedIds', 'ServerConfig', 'TelemetryConfig', 'UpstreamConfig', 'UpstreamRoute', 'UpstreamTarget', 'format_validation_error', 'interpolate_env', 'interpolate_tree', 'load_config', 'parse_config', 'resolve_paths']


class Frozen(BaseModel):
    """Base of every config model: immutable, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ConfigError(ValueError):
    """``gateway.yaml`` is unreadable or invalid; the message names the bad key's path."""


class ServerConfig(Frozen):
    host: str = Field("127.0.0.1", description="Address the gateway listens on.")
    port: int = Field(8080, ge=0, le=65535, description="TCP port (0: any free port).")
    max_body_bytes: int = Field(
        16 * 1024 * 1024, gt=0, description="Largest accepted request body; larger gets 413."
    )
    access_log: bool = Field(False, description="uvicorn access log (off: it costs ~5% rps).")
    workers: int = Field(
        1, ge=1, le=64,
        description="Gateway processes serving the one port (uvicorn's multiprocess supervisor: "
        "one listening socket, N spawned processes, a dead one replaced). Each has its own caches "
        "(keys, settings), upstream pool and memorization workers; the embedded Redis belongs to "
        "the supervisor; /metrics adds up every process (README, Several processes).",
    )


class UpstreamTarget(Frozen):
    base_url: str = Field(
        "https://api.openai.com/v1",
        description="OpenAI-compatible base URL including the version prefix, e.g. "
        "https://api.openai.com/v1. Paths such as /chat/completions are appended.",
    )
    api_key: str | None = Field(
        None,
        description="Key sent upstream as `Authorization: Bearer`; use ${ENV}. None: the "
        "gateway sends no Authorization header (local models).",
    )
    pool_size: int = Field(
        256, gt=0, description="Maximum open connections to this upstream (pool size)."
    )
    connect_timeout_s: float = Field(10.0, gt=0, description="Seconds to open a connection.")
    total_timeout_s: float = Field(
        600.0, gt=0, description="Seconds for a whole call, stream included."
    )
    idle_timeout_s: float = Field(
        120.0,
        gt=0,
        description="Seconds without a byte from upstream (before the first byte, or "
        "between two stream chunks) before the call is failed.",
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="Extra headers sent on every upstream call."
    )
    supports_tools: list[str] = Field(
        default_factory=lambda: ["*"],
        description="Model-name globs that accept `tools`; plugins add no tool for others.",
    )

    @field_validator("api_key", mode="before")
    @classmethod
    def _empty_key_is_none(cls, value: object) -> object:
        return None if value == "" else value


class UpstreamRoute(UpstreamTarget):
    models: list[str] = Field(
        ..., min_length=1, description="Model-name globs (fnmatch) routed to this upstream."
    )


class ResponsesSharedIds(Frozen):
    """Upstream resource ids every key may name in a Responses create (the operator's
    own: made at the upstream, not through the gateway); any other id is refused unless
    the gateway saw it created for the caller (gateway/proxy/responses_owners.py)."""

    containers: list[str] = Field(
        default_factory=list, description="Container ids (`cntr_...`, `tools[].container`, a shell "
        "tool's `environment.container_id`) every key may use; the containers a key's own "
        "responses created are its own without this.")
    vector_stores: list[str] = Field(
        default_factory=list, description="Vector store ids (`vs_...`, a file_search tool's "
        "`vector_store_ids`) every key may search.")
    prompts: list[str] = Field(
        default_factory=list, description="Stored prompt ids (`pmpt_...`, `prompt.id`) every key may use.")
    files: list[str] = Field(
        default_factory=list, description="File ids (`file-...`: `input_file` / `input_image` "
        "`file_id`, a container's `file_ids`, an image mask, a prompt variable) every key may name.")


class UpstreamConfig(UpstreamTarget):
    """The default upstream, plus optional routes chosen by the first matching model glob."""

    routes: list[UpstreamRoute] = Field(
        default_factory=list,
        description="Other upstreams, tried in order; the first whose `models` glob "
        "matches the request's model wins, else this default upstream.",
    )
    request_stream_usage: bool = Field(
        True,
        description="Add stream_options.include_usage to streamed calls so the gateway "
        "records usage; the usage chunk is removed for clients that did not ask. False: "
        "the upstream body stays exactly the client's.",
    )
    responses_retention_s: float = Field(
        30 * 86400.0,
        gt=0,
        description="How long the default upstream keeps stored Responses (OpenAI: 30 "
        "days); the gateway's record of which tenant created each response id expires "
        "after it (gateway/proxy/responses_owners.py).",
    )
    conversation_claims_ttl_s: float = Field(
        30 * 86400.0,
        gt=0,
        description="How long the gateway's claim of a conversation id by the first tenant "
        "that used it lasts after its last use (each create naming it by its owner "
        "restarts the time); past it, the id is unclaimed and the next tenant to use it "
        "claims it (gateway/proxy/responses_owners.py).",
    )
    responses_shared_ids: ResponsesSharedIds = Field(
        default_factory=ResponsesSharedIds,
        description="Containers, vector stores, stored prompts and files of the default upstream "
        "that every key may name in a Responses create; other ids of these kinds are refused "
        "(404 naming the field) unless the gateway saw the container created by the caller's "
        "own response (gateway/proxy/responses_owners.py).",
    )


class PluginOverride(Frozen):
    enabled: bool | None = Field(None, description="Turn the plugin on/off for this key.")
    config: dict[str, Any] = Field(
        default_factory=dict, description="Keys merged over the plugin's global config."
    )


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
        "settings.defaults and the user's stored values, e.g. {recall_rounds: 2}.",
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
        try:
            return {k: v for k, v in check_overrides(value, "").items() if v is not None}
        except InvalidRequest as exc:
            raise ValueError(exc.message) from None

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


class PluginEntry(Frozen):
    name: str = Field(..., description="Built-in plugin name, or `module:Class`.")
    enabled: bool = Field(True, description="Off: the plugin is not built at all.")
    config: dict[str, Any] = Field(
        default_factory=dict, description="Validated by the plugin's own Config model."
    )
    budget_ms: float | None = Field(
        None, gt=0, description="Time budget of this plugin's request hook (default "
        "chain.hook_budget_ms) and of its response filter / stream end (default "
        "chain.reply_budget_ms)."
    )
    on_failure: Literal["original", "skip"] = Field(
        "original",
        description="When a request hook raises or overruns: `original` sends the "
        "client's original request upstream (transparent pass-through); `skip` drops "
        "only this plugin's change and lets later plugins run.",
    )


class ChainConfig(Frozen):
    request_deadline_ms: float = Field(
        3000.0,
        gt=0,
        description="Deadline for the whole request phase (all rewrite hooks); past it "
        "the original request goes upstream. Default 3 s from seed 002 (§6.3).",
    )
    hook_budget_ms: float = Field(
        1000.0, gt=0, description="Default time budget of one hook; plugins may set theirs."
    )
    reply_budget_ms: float = Field(
        300_000.0, gt=0, description="Default time budget of a response filter and of a "
        "stream filter's end (tool loops call the model again: a few model calls)."
    )
    chunk_budget_ms: float = Field(
        1000.0, gt=0, description="Time budget of one stream filter call for one chunk."
    )
    completion_budget_ms: float = Field(
        30_000.0, gt=0, description="Time budget of one completion hook (runs after the reply)."
    )
    max_pending_completions: int = Field(
        2000,
        gt=0,
        description="Completion hook runs in flight; beyond it new ones are shed (counted "
        "and logged) so capture never blocks the relay.",
    )
    max_capture_bytes: int = Field(
        1_000_000, gt=0, description="Assembled reply text kept per choice; beyond, truncated."
    )


class AuthConfig(Frozen):
    cache_ttl_s: float = Field(
        5.0,
        ge=0,
        description="How long a key looked up in the Redis key store is cached; a revoked "
        "key stops working on every gateway process within this time.",
    )


class McpConfig(Frozen):
    """The Streamable HTTP MCP endpoint at ``/mcp`` (gateway/api/mcp.py)."""

    dns_rebinding_protection: bool = Field(
        True, description="Check the Host and Origin headers of /mcp requests against the lists below "
        "(421 / 403 otherwise), so a web page cannot reach the endpoint through a rebound DNS name.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"],
        description="Host header values /mcp accepts: exact, or `name:*` for any port. Add the name "
        "clients reach the gateway by (e.g. `memgate.example.com`, `memgate:*` in compose).",
    )
    allowed_origins: list[str] = Field(
        default_factory=lambda: ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*",
                                 "http://127.0.0.1", "http://localhost", "http://[::1]"],
        description="Origin header values /mcp accepts (a request without Origin, i.e. not from a "
        "browser, passes): exact, or `scheme://name:*` for any port.",
    )


class TelemetryConfig(Frozen):
    exporter: Literal["none", "console", "otlp"] = Field("none", description="Span exporter.")
    otlp_endpoint: str | None = Field(
        None, description="OTLP/HTTP traces endpoint, e.g. http://collector:4318/v1/traces."
    )
    service_name: str = Field("memgate", description="OpenTelemetry service.name.")


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


_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate_env(text: str, environ: dict[str, str] | None = None) -> str:
    """Replace ``${NAME}`` / ``${NAME:-default}`` in ``text`` from ``environ``.

    Raises:
        ConfigError: a variable is unset and has no default (the message names it).
    """
    env = os.environ if environ is None else environ

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"environment variable {name} is not set (used as ${{{name}}})")

    return _ENV_RE.sub(sub, text)


def format_validation_error(exc: ValidationError, prefix: str = "") -> str:
    """One line per error: ``dotted.path: message``."""
    lines = []
    for err in exc.errors():
        path = ".".join(str(p) for p in (prefix, *err["loc"]) if p != "")
        lines.append(f"{path or '<root>'}: {err['msg']}")
    return "; ".join(lines)


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


def interpolate_tree(value: Any, environ: dict[str, str] | None = None) -> Any:
    """A copy of a parsed YAML tree with ``${ENV}`` replaced in every string value.

    Interpolating values (not the raw text) keeps comments and keys inert.
    """
    if isinstance(value, str):
        return interpolate_env(value, environ)
    if isinstance(value, dict):
        return {k: interpolate_tree(v, environ) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate_tree(v, environ) for v in value]
    return value
