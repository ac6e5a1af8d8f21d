"""``tool_splice`` (seed 002): recall before the main call, spliced in as if the model
had called a ``recall_memory`` tool itself.

The recall agent (:mod:`plugins.recall_agent`) runs first; its result becomes an assistant
message with one ``recall_memory`` tool call and the matching ``tool`` message, right
after the last user message, with the tool's definition added to ``tools``
(:mod:`plugins.splice` for the exact shape; an :class:`~gateway.chain.sdk.Exchange` of
``call.injection`` that the chain renders), so
the main model sees a standard tool-call chain (seed 002 §3.1 stage two).

Skipped (request unchanged) when: nothing was found (seed 002 §6.1), the model is not in
the upstream's ``supports_tools`` globs, there is no user text, or the client already
defines a tool named ``recall_memory``. Time: the agent must be done ``timeout_ms`` after
the request arrived (default 2.5 s, inside seed 002's 3 s and the chain's 3 s request
deadline; give the plugin entry a ``budget_ms`` of about 3000, the chain's default hook
budget of 1 s would cut it off); past it, what was found so far is spliced. When the agent
found nothing because of a failure (store down, model error, timeout), the hook raises
:class:`~gateway.chain.sdk.Skipped` with the first such note (``tool_splice:timeout`` in
``x-memgate-degraded``); notes of a partial success are in the annotations.

Memory settings (:mod:`gateway.settings.memory_settings`, per user and friend, ``call.settings``): off
when ``recall_enabled`` is off (``settings_switches``); ``recall_rounds``,
``profile_topk``, ``event_topk`` and ``similarity_threshold`` replace ``rounds``,
``profile_topk``, ``event_topk`` and ``similarity_threshold`` of the config for the call
when set (yaml ``settings.defaults``, the key, the user). The annotation carries the
agent's reasoning (``thinking``, :attr:`plugins.recall_agent.Found.steps`) and the spliced
call in the OpenAI tool-call shape (``tool_call``; shown by ``recall_report``).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, ClassVar

from pydantic import Field

from gateway.chain.sdk import (
    BreakerConfig,
    CallContext,
    ChatRequest,
    Exchange,
    Item,
    MemoryModel,
    ModelConfig,
    PluginConfig,
    ScoredMemory,
    Services,
    Skipped,
    caller_tenant,
    message_text,
)
from plugins.auto_recall import RecallResult, build_query
from plugins.recall_agent import AgentSettings, Found, RecallAgent
from plugins.splice import RECALL_MEMORY_TOOL, TOOL_NAME, new_call_id, splice_messages

__all__ = ['ToolSplice', 'ToolSpliceConfig']


class ToolSpliceConfig(PluginConfig):
    rounds: int = Field(3, ge=1, le=5, description="Most recall-agent search rounds (seed 002 §5.1: 1-5, default 3).")
    profile_topk: int = Field(5, ge=1, le=10, description="Most profile memories spliced (seed 002: 5).")
    event_topk: int = Field(5, ge=1, le=10, description="Most event memories spliced (seed 002: 5).")
    similarity_threshold: float = Field(
        0.5, ge=0.0, le=1.0, description="Lowest strength kept (seed 002: 0.5): the calibrated relevance "
        "P(related) when the store has a calibration, else the cosine (plugins.recall_agent).",
    )
    first_round_direct: bool = Field(
        True, description="Round one searches the user's message without a model call (saves a model round trip)."
    )
    model: ModelConfig = Field(default_factory=ModelConfig, description="The memory model that plans further rounds.")
    timeout_ms: float = Field(
        2500.0, gt=0, description="Recall must be done this long after the request arrived (seed 002 §6.3: < 3 s).",
    )
    search_timeout_ms: float = Field(800.0, gt=0, description="Time limit of one store query.")
    breaker: BreakerConfig = Field(default_factory=BreakerConfig, description="Memory-store circuit breaker.")


class ToolSplice:
    """See module docstring."""

    name: ClassVar[str] = "tool_splice"
    Config = ToolSpliceConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ("token_budget",)
    #: Both inject the recalled memories (seed 002 splices them, seed 000 puts them in the
    #: prompt): together the model would see every memory twice.
    conflicts_with: ClassVar[tuple[str, ...]] = ("hybrid_injection",)
    #: Seed 002 §5.1 "启用记忆召回": off, no recall for the call.
    settings_switches: ClassVar[tuple[str, ...]] = ("recall_enabled",)

    def __init__(self, config: ToolSpliceConfig, services: Services) -> None:
        self.config = config
        memory = services.recall(config.breaker, config.search_timeout_ms / 1000)
        needs_model = config.rounds > 1 or not config.first_round_direct
        self.model: MemoryModel | None
        try:  # a user's recall_rounds setting may ask for more rounds than the config
            self.model = services.model_client(config.model)
        except ValueError:  # no upstream pool and no base_url (unit tests)
            if needs_model:
                raise
            self.model = None
        settings = AgentSettings(config.rounds, config.profile_topk, config.event_topk,
                                 config.similarity_threshold, config.first_round_direct)
        self.agent = RecallAgent(memory, self.model, settings)

    def setting_fallbacks(self) -> dict[str, Any]:
        """What this plugin uses for a memory setting nobody set (its own config)."""
        c = self.config
        return {"recall_rounds": c.rounds, "profile_topk": c.profile_topk, "event_topk": c.event_topk,
                "similarity_threshold": c.similarity_threshold}

    def settings_for(self, call: CallContext) -> AgentSettings:
        """The agent's settings for this call: the caller's memory settings where set,
        else the config (module docstring)."""
        c, s = self.config, call.settings
        return AgentSettings(
            s.value("recall_rounds", c.rounds), s.value("profile_topk", c.profile_topk),
            s.value("event_topk", c.event_topk), s.value("similarity_threshold", c.similarity_threshold),
            c.first_round_direct,
        )

    async def aclose(self) -> None:
        if self.model is not None:
            await self.model.aclose()

    def applies(self, call: CallContext, request: ChatRequest) -> bool:
        if any((t.get("function") or {}).get("name") == TOOL_NAME for t in request.tools or []):
            return False
        return call.upstream.upstream.supports_tools(request.model)

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        recall = call.state.get("auto_recall")
        query = recall.query if isinstance(recall, RecallResult) else build_query(request.messages)
        last = request.last_user_index()
        if not query or last is None or not self.applies(call, request):
            return request
        found = Found()
        settings = self.settings_for(call)
        try:
            left = self.config.timeout_ms / 1000 - (call.deadline_s - call.time_left())
            async with asyncio.timeout(max(left, 0.0)):
                await self.agent.run(caller_tenant(call), message_text(request.messages[last]), query, found, settings)
        except TimeoutError:
            found.notes.append("timeout")
        return self.splice(call, request, found, query, settings)

    def splice(
        self, call: CallContext, request: ChatRequest, found: Found, query: str, settings: AgentSettings | None = None
    ) -> ChatRequest:
        s = settings or self.agent.settings
        profiles = found.best("profiles", s.profile_topk)
        events = found.best("events", s.event_topk)
        if not profiles and not events:
            if found.notes:
                raise Skipped(found.notes[0])
            return request
        call_id = new_call_id()
        call.annotations[self.name] = {
            "call_id": call_id, "rounds": found.rounds, "queries": list(found.queries),
            "profiles": [{"id": h.record.id, "score": round(h.score, 4)} for h in profiles],
            "events": [{"id": h.record.id, "score": round(h.score, 4)} for h in events],
            "notes": list(found.notes),
            "thinking": list(found.steps),
        }
        items = tuple(_item(h, "profile") for h in profiles) + tuple(_item(h, "event") for h in events)
        call.injection = call.injection.with_exchange(Exchange(
            self.name, items=items, tools=(RECALL_MEMORY_TOOL,),
            render=functools.partial(_render, call_id, query),
        ))
        return request


def _item(hit: ScoredMemory, group: str) -> Item:
    return Item(hit.record.id, hit.record.text, hit.score, group=group, data=hit)


def _render(call_id: str, query: str, kept: tuple[Item, ...]) -> list[dict[str, object]]:
    """The spliced pair for what is left after any trimming; [] when nothing is."""
    profiles = [i.data for i in kept if i.group == "profile"]
    events = [i.data for i in kept if i.group == "event"]
    if not profiles and not events:
        return []
    return splice_messages(call_id, query, profiles, events)
