"""Token budgets, sans-IO: trim what the recall plugins inject, fit the context window.

:func:`trim_injected` (the memory budget): while the injected text (system section plus
the spliced recall messages) is over budget, drop the lowest-scored memory among the
injected memories and the spliced profiles/events, then, if still over, the
personalization section. Seed 000 risk 3 and seed 002 §6.2 ("按相关度...精选").

:func:`fit_window` (the context window): drop whole units of the oldest non-system
turns until the prompt fits. Never dropped: system/developer messages, the last user
message and everything after it (the current turn, spliced recall included). A unit is
one message, or an assistant message with ``tool_calls`` together with the ``tool``
messages answering it, so a call is never separated from its results (providers reject
a ``tool`` message without its call). If the prompt cannot fit, it goes as it is and the
provider's own context-length error reaches the client.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import tiktoken

from plugins.context import SYSTEM_ROLES, InjectedContext
from plugins.tokens import TokenCounter


def injected_tokens(ctx: InjectedContext, counter: TokenCounter, encoding: tiktoken.Encoding) -> int:
    """Tokens the context adds: its system text and its spliced messages."""
    total = counter.text(encoding, ctx.system_text() or "")
    if ctx.splice:
        total += sum(counter.message(encoding, m) for m in ctx.splice.messages())
    return total


def _drop_lowest(ctx: InjectedContext) -> tuple[InjectedContext, str] | None:
    """``ctx`` without its lowest-scored memory and that memory's id; None if none."""
    pools: list[tuple[float, str, str]] = []
    if ctx.memory:
        pools += [(h.score, "memory", h.record.id) for h in ctx.memory.memories]
    if ctx.splice:
        pools += [(h.score, "profiles", h.record.id) for h in ctx.splice.profiles]
        pools += [(h.score, "events", h.record.id) for h in ctx.splice.events]
    if not pools:
        return None
    _, where, victim = min(pools, key=lambda p: p[0])
    if where == "memory":
        kept = tuple(h for h in ctx.memory.memories if h.record.id != victim)  # type: ignore[union-attr]
        return replace(ctx, memory=replace(ctx.memory, memories=kept)), victim  # type: ignore[arg-type]
    kept = tuple(h for h in getattr(ctx.splice, where) if h.record.id != victim)
    return replace(ctx, splice=replace(ctx.splice, **{where: kept})), victim  # type: ignore[arg-type]


def trim_injected(
    ctx: InjectedContext, counter: TokenCounter, encoding: tiktoken.Encoding, budget: int
) -> tuple[InjectedContext, list[str], int, int]:
    """``(trimmed context, dropped memory ids, tokens before, tokens after)``."""
    before = tokens = injected_tokens(ctx, counter, encoding)
    dropped: list[str] = []
    while tokens > budget:
        step = _drop_lowest(ctx)
        if step is not None:
            ctx, victim = step
        elif ctx.personalization is not None:
            ctx, victim = replace(ctx, personalization=None), "personalization"
        else:
            break
        dropped.append(victim)
        tokens = injected_tokens(ctx, counter, encoding)
    return ctx, dropped, before, tokens


def droppable_units(messages: Sequence[dict[str, Any]]) -> list[list[int]]:
    """Indices of the messages :func:`fit_window` may drop, grouped into units, oldest
    first (see module docstring)."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=len(messages) - 1)
    units: list[list[int]] = []
    i = 0
    while i < last_user:
        message = messages[i]
        if message.get("role") in SYSTEM_ROLES:
            i += 1
            continue
        unit = [i]
        if message.get("role") == "assistant" and message.get("tool_calls"):
            while i + 1 < last_user and messages[i + 1].get("role") == "tool":
                i += 1
                unit.append(i)
        units.append(unit)
        i += 1
    return units


def fit_window(
    messages: Sequence[dict[str, Any]], counts: Sequence[int], fixed: int, limit: int
) -> tuple[list[dict[str, Any]], int, int]:
    """``(messages that fit, messages dropped, resulting tokens)``.

    Args:
        counts: tokens of each message (``TokenCounter.message``).
        fixed: tokens outside the messages (reply priming, tool definitions).
        limit: the most prompt tokens allowed (window minus the completion reserve).
    """
    total = fixed + sum(counts)
    dropped: set[int] = set()
    for unit in droppable_units(messages):
        if total <= limit:
            break
        dropped.update(unit)
        total -= sum(counts[i] for i in unit)
    return [m for i, m in enumerate(messages) if i not in dropped], len(dropped), total
