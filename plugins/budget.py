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
from typing import Any

import tiktoken

from gateway.chain.sdk import Injection, TokenCounting

__all__ = ['SYSTEM_ROLES', 'droppable_units', 'fit_window', 'injected_tokens', 'trim_injected']

SYSTEM_ROLES = ("system", "developer")


def injected_tokens(injection: Injection, counter: TokenCounting, encoding: tiktoken.Encoding) -> int:
    """Tokens the injection adds: its system text and its spliced messages."""
    total = counter.text(encoding, injection.system_text() or "")
    return total + sum(counter.message(encoding, m) for m in injection.spliced_messages())


def trim_injected(
    injection: Injection, counter: TokenCounting, encoding: tiktoken.Encoding, budget: int
) -> tuple[Injection, list[str], int, int]:
    """``(trimmed injection, dropped ids, tokens before, tokens after)``: drop the
    lowest-scored item (over every part and exchange) while over ``budget``, then whole
    droppable system parts without items (personalization), last first."""
    before = tokens = injected_tokens(injection, counter, encoding)
    dropped: list[str] = []
    while tokens > budget:
        items = injection.items()
        if items:
            key, victim = min(items, key=lambda pair: pair[1].score)
            injection, name = injection.without_item(key, victim.id), victim.id
        else:
            parts = [p for p in injection.system if p.droppable and p.text()]
            if not parts:
                break
            injection, name = injection.without_part(parts[-1].key), parts[-1].key
        dropped.append(name)
        tokens = injected_tokens(injection, counter, encoding)
    return injection, dropped, before, tokens


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
        counts: tokens of each message (``TokenCounting.message``).
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
