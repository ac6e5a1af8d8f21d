"""``gateway.yaml``'s infrastructure sections, parsed once at start-up into frozen pydantic
models: ``server``, ``upstream``, ``auth`` (key cache), ``plugins`` entries and
per-key overrides, ``chain`` (time budgets), ``telemetry``, ``mcp``; plus the base
:class:`Frozen`, :class:`ConfigError` and the ``${ENV}`` interpolation. The whole file,
with the domains' sections (``memory``, ``settings``, ``clients``), is
:class:`gateway.config.GatewayConfig`, read by :func:`gateway.config.load_config`.

Every model is ``frozen`` with ``extra="forbid"`` and a description on every field, so a
typo stops start-up with the dotted path of the bad key (``plugins.2.config.limt``).
Secrets come from ``${ENV}`` interpolation (``${NAME}`` or ``${NAME:-default}``), never
from the file itself; an unset variable without a default is an error naming it.
Durations: every duration key, here and in each plugin's ``Config``, ends with its unit,
``_ms`` (milliseconds) or ``_s`` (seconds); no other suffix or bare name means a duration.

Per-user memory settings (``settings:``) are :class:`gateway.settings.memory_settings.SettingsConfig`
(operator ``defaults`` and ``locked`` names; precedence built-in < ``settings.defaults`` <
a key's ``settings`` < the user's stored values, locks win).
"""

from __future__ import annotations

import os
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = ['AuthConfig', 'ChainConfig', 'ConfigError', 'Frozen', 'McpConfig', 'PluginEntry', 'PluginOverride', 'ResponsesSharedIds', 'ServerConfig', 'TelemetryConfig', 'UpstreamConfig', 'UpstreamRoute', 'UpstreamTarget', 'format_validation_error', 'interpolate_env', 'interpolate_tree']


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
