"""``hybrid_injection`` (seed 000 P2, "上下文注入"): high-relevance memories into the
prompt, low-relevance ones behind a ``memory_search`` tool the gateway runs itself.

Request phase (this module): reads ``auto_recall``'s
:class:`~plugins.auto_recall.RecallResult`; the high set becomes a system part of
``call.injection`` (order 20, after personalization), rendered with ``template``
(default seed 000 ``memoryContextPrompt``, Chinese when the last user message is mostly
CJK, else English; :mod:`plugins.prompts`), one line per distinct memory text with the
day it happened or was said (:func:`memory_items`: seed 002's ``date`` + ``content``), at ``placement`` (``separate`` by default:
the client's own system prefix stays byte-identical). When there are low-relevance hits
the ``memory_search`` tool is added, unless the client sent ``tool_choice: "none"``,
asked for ``n`` > 1, already defines a tool of that name, or the model is not in the
upstream's ``supports_tools`` globs.

Memory settings (:mod:`gateway.settings.memory_settings`, ``call.settings``): off for a call when
``recall_enabled`` is off (``settings_switches``; with ``auto_recall`` off there is
nothing to inject either). When set (yaml ``settings.defaults``, the key, the user),
``recall_rounds`` replaces ``max_rounds`` and ``similarity_threshold`` replaces
``search_threshold`` for the call.

Reply phase: the tool loop, :mod:`plugins.memory_search_rounds` (non-stream
:meth:`HybridInjection.filter_response`; streams :meth:`~HybridInjection.on_chunk` /
:meth:`~HybridInjection.on_stream_end`), with its fallbacks for a failed round. On
``/v1/responses`` the gateway runs the loop in the Responses form and this plugin answers
each round (:class:`~gateway.chain.sdk.ToolRunner`: :meth:`HybridInjection.run_tool_calls`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any, ClassVar, Literal

from pydantic import Field

from gateway.chain.sdk import (
    BreakerConfig,
    CallContext,
    ChatRequest,
    Chunk,
    Item,
    PluginConfig,
    ScoredMemory,
    Services,
    SystemPart,
    folded,
    message_text,
    prompt_language,
)
from plugins.auto_recall import RecallResult
from plugins.memory_search_loop import MEMORY_SEARCH_TOOL, TOOL_NAME, ToolCall
from plugins.memory_search_rounds import LoopSettings, LoopState, MemorySearchRounds
from plugins.prompts import MEMORY_CONTEXT, memory_line, render_memory_context
from plugins.splice import TOOL_NAME as SPLICE_TOOL

__all__ = ["HybridInjection", "HybridInjectionConfig"]

GATEWAY_TOOLS = (TOOL_NAME, SPLICE_TOOL)
#: Place of the memory context in the injected system text (seed 000 layout).
MEMORY_ORDER = 20


class HybridInjectionConfig(PluginConfig):
    placement: Literal["separate", "append"] = Field(
        "separate", description="separate: a new system message after the client's first one "
        "(its own prefix stays byte-identical for prompt caching); append: added to it.",
    )
    template: str | None = Field(
        None, description="Memory context template with {{ memoryItems }}; None: seed 000's "
        "memoryContextPrompt (zh) or its English translation, by the user's language.",
    )
    language: Literal["auto", "zh", "en"] = Field("auto", description="Template language; auto: mostly-CJK user text -> zh.")
    offer_tool: bool = Field(True, description="Offer memory_search when low-relevance memories exist (seed 000 P2).")
    max_rounds: int = Field(3, ge=1, le=5, description="Most memory_search rounds the gateway runs per request.")
    search_top_k: int = Field(5, ge=1, le=10, description="Memories per memory_search call when the model gives no top_k.")
    max_top_k: int = Field(10, ge=1, le=50, description="Largest top_k a memory_search call may ask for.")
    search_threshold: float = Field(0.3, ge=0.0, le=1.0, description="Lowest cosine score a memory_search hit needs.")
    timeout_ms: float = Field(800.0, gt=0, description="Time limit of one memory_search store query.")
    breaker: BreakerConfig = Field(default_factory=BreakerConfig, description="Memory-store circuit breaker.")


class HybridInjection:
    """See module docstring."""

    name: ClassVar[str] = "hybrid_injection"
    Config = HybridInjectionConfig
    runs_after: ClassVar[tuple[str, ...]] = ("auto_recall",)
    runs_before: ClassVar[tuple[str, ...]] = ("token_budget",)
    settings_switches: ClassVar[tuple[str, ...]] = ("recall_enabled",)

    def __init__(self, config: HybridInjectionConfig, services: Services) -> None:
        self.config = config
        memory = services.recall(config.breaker, config.timeout_ms / 1000)
        settings = LoopSettings(config.max_rounds, config.search_top_k, config.max_top_k, config.search_threshold, GATEWAY_TOOLS)
        self.loop = MemorySearchRounds(memory, settings, self.name)

    def setting_fallbacks(self) -> dict[str, Any]:
        """What this plugin uses for a memory setting nobody set (its own config)."""
        return {"recall_rounds": self.config.max_rounds, "similarity_threshold": self.config.search_threshold}

    # -- request phase ----------------------------------------------------------------

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        recall = call.state.get("auto_recall")
        if not isinstance(recall, RecallResult) or not (recall.high or recall.low):
            return request
        offer = bool(recall.low) and self.config.offer_tool and self.tool_allowed(call, request)
        injection = replace(call.injection, placement=self.config.placement)
        if recall.high:
            template = self.template(request)
            items = memory_items(recall.high)
            injection = injection.with_system(SystemPart(
                self.name, MEMORY_ORDER, items=items,
                render=functools.partial(_render_memories, template),
            ))
        if offer:
            injection = injection.with_tool(MEMORY_SEARCH_TOOL)
        call.injection = injection
        settings = call.settings
        call.state[self.name] = LoopState(
            offered=offer, max_rounds=settings.value("recall_rounds", self.config.max_rounds),
            threshold=settings.value("similarity_threshold", self.config.search_threshold),
        )
        call.annotations[self.name] = {
            "placement": self.config.placement, "tool_offered": offer,
            "injected": [{"id": h.record.id, "score": round(h.score, 4)} for h in recall.high],
        }
        return request

    def template(self, request: ChatRequest) -> str:
        if self.config.template is not None:
            return self.config.template
        language = self.config.language
        if language == "auto":
            last = request.last_user_index()
            language = prompt_language(message_text(request.messages[last]) if last is not None else "")
        return MEMORY_CONTEXT[language]

    @staticmethod
    def tool_allowed(call: CallContext, request: ChatRequest) -> bool:
        """Whether memory_search may be offered for this request (module docstring)."""
        if request.tool_choice == "none" or (request.model_extra or {}).get("n", 1) not in (None, 1):
            return False
        if any((t.get("function") or {}).get("name") == TOOL_NAME for t in request.tools or []):
            return False
        return call.upstream.upstream.supports_tools(request.model)

    def _state(self, call: CallContext) -> LoopState | None:
        state = call.state.get(self.name)
        return state if isinstance(state, LoopState) and state.offered else None

    # -- reply phase: the tool loop (plugins.memory_search_rounds) --------------------

    async def filter_response(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        state = self._state(call)
        if state is None:
            return body
        return await self.loop.complete(call, state, body)

    def response_fallback(self, call: CallContext, body: dict[str, Any]) -> dict[str, Any]:
        return self.loop.response_fallback(self._state(call), body)

    async def on_chunk(self, call: CallContext, chunk: Chunk) -> list[Chunk]:
        state = self._state(call)
        if state is None:
            return [chunk]
        return self.loop.on_chunk(state, chunk)

    async def on_stream_end(self, call: CallContext) -> AsyncIterator[Chunk]:
        state = self._state(call)
        if state is None:
            return
        async for chunk in self.loop.on_stream_end(call, state):
            yield chunk

    def stream_fallback(self, call: CallContext) -> list[Chunk] | None:
        return self.loop.stream_fallback(self._state(call))

    # -- the tool loop of other wire formats (gateway.chain.sdk.ToolRunner: /v1/responses) --

    def offered_tools(self, call: CallContext) -> frozenset[str]:
        return frozenset((TOOL_NAME,)) if self._state(call) is not None else frozenset()

    def tool_rounds_left(self, call: CallContext) -> int:
        state = self._state(call)
        return 0 if state is None else max(0, self.config.max_rounds - state.rounds)

    async def run_tool_calls(self, call: CallContext, calls: Sequence[tuple[str, str]]) -> list[str]:
        """One round of memory_search calls (the same searches as the chat loop's)."""
        state = self._state(call)
        if state is None:
            raise ValueError("memory_search was not offered for this call")
        results = await self.loop.run_calls(call, state, [ToolCall("", name, arguments) for name, arguments in calls])
        state.rounds += 1
        return results


def memory_items(hits: Sequence[ScoredMemory]) -> tuple[Item, ...]:
    """One item per distinct memory text (NFKC, case and spacing folded: the same fact
    stored twice, or said to two friends, is one line), in ``hits`` order; each line is
    :func:`plugins.prompts.memory_line` (``date: text``)."""
    seen: set[str] = set()
    items = []
    for hit in hits:
        key = folded(hit.record.text).rstrip(".!。！")
        if key in seen:
            continue
        seen.add(key)
        items.append(Item(hit.record.id, memory_line(hit.record), hit.score))
    return tuple(items)


def _render_memories(template: str, kept: tuple[Item, ...]) -> str | None:
    """The memory context for the items left after any trimming; None when none are."""
    return render_memory_context(template, [i.text for i in kept]) if kept else None
