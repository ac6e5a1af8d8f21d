"""The core's implementation of the plugin SDK's capabilities (:class:`gateway.chain.sdk.Services`).

:class:`PluginServices` is what the composition root (:func:`gateway.app.compose`) hands every
plugin constructor; it holds the Redis client, the memory store, the upstream pool and the
telemetry, and gives a plugin only the narrow views the SDK declares:

- ``recall(breaker, timeout_s, admission)``: guarded searches
  (:class:`gateway.chain.recall.GuardedMemory`) of :class:`StoreRecall`, the store's
  ``search`` and ``search_many`` and nothing else, under the gateway's breakers
  (``breakers``) and admission control (``admission``);
- ``store(name)``: the plugin's keys and streams under the key prefix
  (:class:`gateway.chain.plugin_store.RedisPluginStore`);
- ``metrics``: declare and count the plugin's own families;
- ``embed(texts)``, ``model_client(config)``, ``token_counter(encodings)``, ``memorization(config)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gateway.chain.plugin_store import RedisPluginStore
from gateway.chain.recall import GuardedMemory, MemoryRecall
from gateway.memory.records import MemoryRecord, ScoredMemory, Tenant
from gateway.proxy.model_client import ModelClient, ModelConfig
from gateway.runtime.admission import AdmissionConfig, AdmissionRegistry
from gateway.runtime.breaker import BreakerConfig, BreakerRegistry
from gateway.runtime.config import TelemetryConfig
from gateway.runtime.errors import MemoryUnavailable
from gateway.runtime.telemetry import Telemetry
from gateway.runtime.tokens import TokenCounter

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from gateway.chain.sdk import GuardedRecall, Lorebooks, Memorizer, MemoryModel, PluginMetrics, PluginStore, TokenCounting
    from gateway.memorization.config import MemorizeConfig
    from gateway.memorization.service import Memorization
    from gateway.memory.embeddings.base import Embedder
    from gateway.memory.store import MemoryStore
    from gateway.proxy.upstream import UpstreamPool

__all__ = ["PluginServices", "StoreRecall"]


class StoreRecall:
    """The memory store as recall searches it (:class:`gateway.chain.recall.MemoryRecall`):
    forwards ``search``, ``search_many`` and ``get_many`` (reads of known ids, visible to
    the tenant) to the store; the store's other methods (writes,
    deletes, listing, the embedder, the Redis client) are not reachable through it."""

    __slots__ = ("_store",)

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    async def search(
        self, tenant: Tenant, query: str, top_k: int = 5, threshold: float = 0.0,
        scopes: Iterable[str] | None = None, types: Iterable[str] | None = None,
    ) -> list[ScoredMemory]:
        return await self._store.search(tenant, query, top_k=top_k, threshold=threshold, scopes=scopes, types=types)

    async def search_many(
        self, tenant: Tenant, query: str, searches: Sequence[Mapping[str, Any]],
    ) -> list[list[ScoredMemory]]:
        allowed = {"top_k", "threshold", "scopes", "types"}
        for options in searches:
            unknown = set(options) - allowed
            if unknown:
                raise ValueError(f"search_many: unknown search options {sorted(unknown)} (allowed: {sorted(allowed)})")
        return list(await self._store.search_many(tenant, query, [dict(options) for options in searches]))

    async def get_many(self, tenant: Tenant, memory_ids: Sequence[str]) -> list[MemoryRecord]:
        return await self._store.get_many(tenant, memory_ids)


class PluginServices:
    """The resources handed to plugin constructors (:class:`gateway.chain.sdk.Services`),
    built once by the composition root. The Redis client, the whole memory store, the
    upstream pool and the embedder stay private: a plugin reaches them only through the
    capabilities below."""

    def __init__(
        self,
        *,
        redis: aioredis.Redis | None = None,
        memory: MemoryStore | None = None,
        upstreams: UpstreamPool | None = None,
        telemetry: Telemetry | None = None,
        breakers: BreakerRegistry | None = None,
        admission: AdmissionRegistry | None = None,
        key_prefix: str = "mg",
        embedder: Embedder | None = None,
        lorebooks: Lorebooks | None = None,
        memorizations: list[Memorization] | None = None,
    ) -> None:
        """``redis``: the gateway's async client (None when memory is not configured),
        for :meth:`store` and :meth:`memorization`; ``memory``: the store (None: memory
        off); ``key_prefix``: ``memory.key_prefix``; ``memorizations``: the composition
        root's list that every memorization handed out by :meth:`memorization` is appended
        to (the admin console reads it there)."""
        self._redis = redis
        self._key_prefix = key_prefix
        self._store = memory
        self._upstreams = upstreams
        self._embedder = embedder
        self.telemetry = telemetry if telemetry is not None else Telemetry(TelemetryConfig())
        self.memory: MemoryRecall | None = StoreRecall(memory) if memory is not None else None
        self.breakers = breakers if breakers is not None else BreakerRegistry()
        self.admission = admission if admission is not None else AdmissionRegistry()
        self.lorebooks = lorebooks
        self._memorizations: list[Memorization] = memorizations if memorizations is not None else []

    def recall(
        self, breaker: BreakerConfig, timeout_s: float, admission: AdmissionConfig | None = None,
    ) -> GuardedRecall:
        """See :meth:`gateway.chain.sdk.Services.recall`: the store's searches (``memory``)
        under ``breakers.get(breaker)`` and ``admission.get(admission)``."""
        queue = self.admission.get(admission) if admission is not None else None
        return GuardedMemory(self.memory, self.breakers.get(breaker), timeout_s, queue)

    def recall_saturated(self) -> bool:
        """See :meth:`gateway.chain.sdk.Services.recall_saturated`."""
        return self.admission.busy()

    def store(self, plugin: str) -> PluginStore:
        """See :meth:`gateway.chain.sdk.Services.store`.

        Raises:
            ValueError: memory is not configured (no Redis).
        """
        if self._redis is None:
            raise ValueError(f"{plugin} needs Redis (memory: section)")
        return RedisPluginStore(self._redis, self._key_prefix, plugin)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """See :meth:`gateway.chain.sdk.Services.embed`.

        Raises:
            MemoryUnavailable: no embedder, the model failed, or its queue is full.
        """
        if self._embedder is None:
            raise MemoryUnavailable("no embedding model (memory: section)")
        if not texts:
            return np.zeros((0, self._embedder.dimensions), dtype=np.float32)
        try:
            return await self._embedder.embed_many(list(texts))
        except MemoryUnavailable:
            raise
        except Exception as exc:  # one documented error for plugins
            raise MemoryUnavailable(f"embedding failed: {type(exc).__name__}: {exc}") from exc

    @property
    def metrics(self) -> PluginMetrics:
        """The gateway's Prometheus metrics, as a plugin uses them."""
        return self.telemetry.metrics

    def model_client(self, config: ModelConfig) -> MemoryModel:
        """A client for the memory model ``config`` names (the caller closes it)."""
        return ModelClient(config, self._upstreams)

    def token_counter(self, encodings: Mapping[str, str]) -> TokenCounting:
        """See :meth:`gateway.chain.sdk.Services.token_counter`: a
        :class:`gateway.runtime.tokens.TokenCounter` of its own (its cache per plugin)."""
        return TokenCounter(encodings)

    def memorization(self, config: MemorizeConfig) -> Memorizer:
        """The memorization queue and workers for ``config`` (seeds 000, 002, 003).

        Raises:
            ValueError: memory is not configured (no Redis).
        """
        from gateway.memorization.service import Memorization

        if self._redis is None:
            raise ValueError("memorization needs Redis (memory: section)")
        memorization = Memorization(config, self._redis, self._store, self._upstreams, self.telemetry)
        self._memorizations.append(memorization)
        return memorization
