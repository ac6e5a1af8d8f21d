"""``personalization`` (seed 000 P3, "个性化回答"): adapt the answer style to the user's
stated preferences.

Reads the caller's **profile** memories of type ``preference`` / ``trait`` (up to
``max_memories``), extracts preferences (:mod:`plugins.preferences`, newest wins) and
renders seed 000's personalization prompt as a system part of ``call.injection``
(order 10): the chain renders it between the client's system prompt and the memory
context (order 20), whichever of this plugin and ``hybrid_injection`` runs first.
Nothing found: the request is unchanged. The part is droppable: ``token_budget`` drops it
after the last memory when the injected text is over budget.

Forgetting a user (:class:`~gateway.chain.sdk.Forgetter`) drops the user's cached entries.

How they are read: a filtered vector search with the fixed query :data:`PREFERENCE_QUERY`
(its vector comes from the store's embedding cache after the first request, and the
result does not depend on what the user just asked: preferences apply whatever the
topic). Not ``MemoryStore.list``: it pages newest-first through every profile record and
took ~700 ms to find a few preferences in a 10k-memory tenant (``bench_recall``).

The rendered prompt is cached per tenant for ``cache_ttl_s`` (30 s; 0 disables) in the
plugin instance: per-gateway state like the breaker, not per-call state; a chat session
sends many messages and preferences change rarely, so a new preference applies within
``cache_ttl_s``. At most ``cache_size`` tenants are kept (oldest entry evicted first).

Memory settings (:mod:`gateway.settings.memory_settings`): off for a call when ``recall_enabled`` or
``personalization`` (seed 000 P3's switch) is off (``settings_switches``).
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from typing import ClassVar, Literal

from pydantic import Field

from gateway.chain.sdk import (
    AdmissionConfig,
    BreakerConfig,
    CallContext,
    ChatRequest,
    JsonBoolean,
    PluginConfig,
    Services,
    SystemPart,
    Tenant,
    UserSettings,
    caller_tenant,
    message_text,
    prompt_language,
)
from plugins.preferences import Preference, extract_preferences, render_personalization, resolve

__all__ = ['PERSONALIZATION_ORDER', 'PREFERENCE_QUERY', 'PREFERENCE_TYPES', 'Personalization', 'PersonalizationConfig']

PREFERENCE_TYPES = ("preference", "trait")
#: Place of the personalization section in the injected system text (seed 000 layout:
#: client's system prompt, personalization, memory context).
PERSONALIZATION_ORDER = 10
PREFERENCE_QUERY = "the user's preferences for how answers should be written"


class PersonalizationConfig(PluginConfig):
    max_memories: int = Field(20, ge=1, le=100, description="Preference/trait memories read per request.")
    language: Literal["auto", "zh", "en"] = Field("auto", description="Prompt language; auto: mostly-CJK user text -> zh.")
    timeout_ms: float = Field(800.0, gt=0, description="Time limit of the store query.")
    cache_ttl_s: float = Field(30.0, ge=0, description="Seconds a tenant's preferences are reused; 0: read every request.")
    cache_size: int = Field(10_000, ge=1, description="Most tenants whose preferences are cached.")
    breaker: BreakerConfig = Field(default_factory=BreakerConfig, description="Memory-store circuit breaker.")
    admission: AdmissionConfig = Field(
        default_factory=AdmissionConfig, description="Memory-search admission control (gateway.runtime.admission)."
    )


class Personalization:
    """See module docstring."""

    name: ClassVar[str] = "personalization"
    Config = PersonalizationConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ("token_budget",)

    class Settings(UserSettings):
        """This plugin's per-user setting (``/v1/memory/settings``)."""

        personalization: JsonBoolean = Field(
            True, description="Seed 000 P3 switch: answers personalized from preferences (default on).")

    settings_switches: ClassVar[tuple[str, ...]] = ("recall_enabled", "personalization")

    def __init__(self, config: PersonalizationConfig, services: Services) -> None:
        self.config = config
        self.memory = services.recall(config.breaker, config.timeout_ms / 1000, config.admission)
        self._cache: OrderedDict[Tenant, tuple[float, dict[str, Preference]]] = OrderedDict()

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        chosen = await self.preferences(caller_tenant(call), call.time_left())
        text = render_personalization(chosen, self.language(request))
        if text is None:
            return request
        call.annotations[self.name] = {
            "preferences": [{"type": p.type, "value": p.value, "source": p.source} for p in chosen.values()]
        }
        call.injection = call.injection.with_system(
            SystemPart(self.name, PERSONALIZATION_ORDER, render=functools.partial(_fixed_text, text))
        )
        return request

    async def forget_user(self, user_id: str) -> None:
        """Drop every cached entry of ``user_id`` (all friends)."""
        for tenant in [t for t in self._cache if t.user_id == user_id]:
            del self._cache[tenant]

    async def preferences(self, tenant: Tenant, time_left: float | None = None) -> dict[str, Preference]:
        """The tenant's resolved preferences (cached, see module docstring); ``time_left``:
        seconds left of the request's deadline (cuts the search's time limit).

        Raises:
            RecallSkipped: the store could not be read.
        """
        key, now = tenant, time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        hits = await self.memory.search(
            tenant, PREFERENCE_QUERY, self.config.max_memories, 0.0, ["profile"], PREFERENCE_TYPES,
            time_left=time_left,
        )
        chosen = resolve(extract_preferences(h.record for h in hits))
        if self.config.cache_ttl_s > 0:
            self._cache[key] = (now + self.config.cache_ttl_s, chosen)
            self._cache.move_to_end(key)
            while len(self._cache) > self.config.cache_size:
                self._cache.popitem(last=False)
        return chosen

    def language(self, request: ChatRequest) -> Literal["zh", "en"]:
        if self.config.language != "auto":
            return self.config.language
        last = request.last_user_index()
        return prompt_language(message_text(request.messages[last]) if last is not None else "")


def _fixed_text(text: str, _items: tuple[object, ...]) -> str:
    """The personalization section's render: its text whatever the (no) items."""
    return text
