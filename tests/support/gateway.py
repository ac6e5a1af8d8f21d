"""Start the real gateway on a loopback port with a test config."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from gateway.app import create_app
from gateway.config import GatewayConfig, parse_config
from tests.support.loopback import LoopbackServer

ALICE_KEY = "sk-test-alice-0123456789"
BOB_KEY = "sk-test-bob-0123456789"
SERVICE_KEY = "sk-test-service-0123456789"
ADMIN_KEY = "sk-test-admin-0123456789"
LIMITED_KEY = "sk-test-limited-0123456789"


#: ms: the chain's time budgets in tests, far above any hook's work on a loaded machine
#: (the defaults, 1 s per hook and 3 s for the request phase, fire there): a test about
#: a budget sets its own, small, and makes the hook wait on something that never comes.
GENEROUS_MS = 60_000.0
#: recall plugins' own store-query time limits (800 ms by default), as generous
GENEROUS_PLUGIN_TIMEOUTS = {
    "auto_recall": ("timeout_ms",), "hybrid_injection": ("timeout_ms",),
    "personalization": ("timeout_ms",), "tool_splice": ("timeout_ms", "search_timeout_ms"),
    "world_book": ("semantic_timeout_ms",),
}


def generous(plugins: Any) -> Any:
    """``plugins`` with the recall plugins' time limits the test left unset raised to
    :data:`GENEROUS_MS`."""
    if not isinstance(plugins, list):
        return plugins
    out = []
    for entry in plugins:
        keys = GENEROUS_PLUGIN_TIMEOUTS.get(str(entry.get("name"))) if isinstance(entry, Mapping) else None
        if keys:
            config = dict(entry.get("config") or {})
            for key in keys:
                config.setdefault(key, GENEROUS_MS)
            entry = {**entry, "config": config}
        out.append(entry)
    return out


def make_config(upstream_url: str, redis_url: str, **sections: Any) -> GatewayConfig:
    """A config pointing at the upstream double and the session Redis, with test keys,
    a fresh key prefix (tests never see each other's Redis keys) and time budgets that
    a slow machine does not trip (:data:`GENEROUS_MS`; a test may set its own)."""
    data: dict[str, Any] = {
        "server": {"host": "127.0.0.1", "port": 0},
        "upstream": {"base_url": upstream_url + "/v1", "api_key": "sk-upstream-secret"},
        "clients": [
            {"key": ALICE_KEY, "user_id": "alice", "friend_id": "tutor", "key_id": "alice"},
            {"key": BOB_KEY, "user_id": "bob", "friend_id": "tutor", "key_id": "bob"},
            {"key": SERVICE_KEY, "user_id": "backend", "service": True, "key_id": "svc"},
            {"key": ADMIN_KEY, "user_id": "ops", "admin": True, "key_id": "ops"},
            {"key": LIMITED_KEY, "user_id": "carol", "allowed_models": ["gpt-4o-mini*"], "key_id": "limited"},
        ],
        "memory": {"redis_url": redis_url, "key_prefix": "t" + uuid.uuid4().hex[:12]},
        "plugins": [],
        "chain": {"request_deadline_ms": GENEROUS_MS, "hook_budget_ms": GENEROUS_MS,
                  "chunk_budget_ms": GENEROUS_MS},
        # the settings read of every chat request (250 ms by default: settings:timeout on a busy machine)
        "settings": {"read_timeout_ms": GENEROUS_MS},
    }
    for key, value in sections.items():
        if isinstance(value, Mapping) and isinstance(data.get(key), Mapping):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    data["plugins"] = generous(data["plugins"])
    return parse_config(data)


class GatewayServer(LoopbackServer):
    """The gateway app under uvicorn; ``spans`` collects every finished span."""

    def __init__(
        self, config: GatewayConfig, registry: Mapping[str, type] | None = None, embedder: Any = None
    ) -> None:
        self.config = config
        self.spans = InMemorySpanExporter()
        self.embedder = embedder
        self.app = create_app(config, span_exporter=self.spans, registry=registry, embedder=embedder)
        super().__init__(self.app)

    @property
    def gateway(self) -> Any:
        return self.app.state.gateway

    @property
    def base_url(self) -> str:
        return self.url + "/v1"
