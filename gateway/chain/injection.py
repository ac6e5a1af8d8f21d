"""What plugins inject into one request, as a value, and the one renderer that puts it in.

Several request hooks add to the same places (seed 000's layout: the client's system
prompt, then personalization, then the memory context; seed 002's synthetic
``recall_memory`` exchange after the last user message; tool definitions), and a budget
hook trims all of it. So they never edit the messages themselves: each hook replaces
``call.injection`` with a new :class:`Injection` (values in, values out), and the chain
calls :func:`render` **once**, after the last request hook, to build the request that goes
upstream. A hook that fails has its injection change dropped with the rest of its change.

Placement of the system text (``Injection.placement``):

- ``separate`` (default): a new system message right after the client's first system
  (or developer) message, or first when there is none: the client's own prefix stays
  byte-identical, so provider prompt caching keeps working (openai-compat item 8);
- ``append``: appended to the first system message after a blank line (a text part when
  its content is a list of parts); a new system message first when there is none.

Everything that can be trimmed is an :class:`Item` with a relevance ``score``; budgets
drop the lowest-scored item first (seed 000 risk 3, seed 002 §6.2 "按相关度精选").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from gateway.proxy.wire import ChatRequest

__all__ = [
    "SYSTEM_ROLES",
    "Exchange",
    "Injection",
    "Item",
    "Placement",
    "SystemPart",
    "appended",
    "render",
]

SYSTEM_ROLES = ("system", "developer")
Placement = Literal["separate", "append"]


@dataclass(frozen=True)
class Item:
    """One trimmable piece of injected text.

    Attributes:
        id: a stable id (a memory id), reported when the item is trimmed.
        text: the text as rendered.
        score: relevance in [0, 1]; lower is trimmed first.
        group: a free label the part's ``render`` may use (e.g. ``profile`` / ``event``).
    """

    id: str
    text: str
    score: float
    group: str = ""
    data: Any = None


@dataclass(frozen=True)
class SystemPart:
    """A section of the injected system text.

    Attributes:
        key: who owns it (the plugin name); one part per key.
        order: place in the system text, lowest first (seed 000: personalization 10,
            memory context 20).
        items: the trimmable items; ``render`` gets what is left of them.
        render: ``items -> text`` (None or "" renders nothing).
        droppable: a budget may drop the whole part once no item is left to trim.
    """

    key: str
    order: int
    render: Callable[[tuple[Item, ...]], str | None]
    items: tuple[Item, ...] = ()
    droppable: bool = True

    def text(self) -> str | None:
        return self.render(self.items) or None


@dataclass(frozen=True)
class Exchange:
    """Messages spliced right after the last user message (a synthetic tool call and its
    result, seed 002), and the tool definition they need.

    Attributes:
        key: owner (plugin name).
        render: ``items -> messages`` ([] renders nothing, and then no tool is added).
        items: the trimmable items.
        tools: tool definitions added to the request when the exchange renders.
    """

    key: str
    render: Callable[[tuple[Item, ...]], list[dict[str, Any]]]
    items: tuple[Item, ...] = ()
    tools: tuple[dict[str, Any], ...] = ()

    def messages(self) -> list[dict[str, Any]]:
        return self.render(self.items)


@dataclass(frozen=True)
class Injection:
    """Everything the request hooks inject into one request (module docstring)."""

    placement: Placement = "separate"
    system: tuple[SystemPart, ...] = ()
    exchanges: tuple[Exchange, ...] = ()
    tools: tuple[dict[str, Any], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.system or self.exchanges or self.tools)

    def with_system(self, part: SystemPart) -> Injection:
        """A copy with ``part`` replacing any part of the same key."""
        kept = tuple(p for p in self.system if p.key != part.key)
        return replace(self, system=tuple(sorted((*kept, part), key=lambda p: p.order)))

    def with_exchange(self, exchange: Exchange) -> Injection:
        kept = tuple(e for e in self.exchanges if e.key != exchange.key)
        return replace(self, exchanges=(*kept, exchange))

    def with_tool(self, tool: dict[str, Any]) -> Injection:
        name = tool["function"]["name"]
        kept = tuple(t for t in self.tools if t["function"]["name"] != name)
        return replace(self, tools=(*kept, tool))

    def system_text(self) -> str | None:
        """Every system part's text in order, joined by a blank line; None if empty."""
        text = "\n\n".join(t for t in (p.text() for p in self.system) if t)
        return text or None

    def spliced_messages(self) -> list[dict[str, Any]]:
        return [m for e in self.exchanges for m in e.messages()]

    def items(self) -> list[tuple[str, Item]]:
        """``(owner key, item)`` for every trimmable item."""
        return [(p.key, i) for p in self.system for i in p.items] + [
            (e.key, i) for e in self.exchanges for i in e.items
        ]

    def without_item(self, key: str, item_id: str) -> Injection:
        """A copy without item ``item_id`` of the part or exchange ``key``."""
        system = tuple(
            replace(p, items=tuple(i for i in p.items if i.id != item_id)) if p.key == key else p
            for p in self.system
        )
        exchanges = tuple(
            replace(e, items=tuple(i for i in e.items if i.id != item_id)) if e.key == key else e
            for e in self.exchanges
        )
        return replace(self, system=system, exchanges=exchanges)

    def without_part(self, key: str) -> Injection:
        return replace(self, system=tuple(p for p in self.system if p.key != key))


def first_system_index(messages: Sequence[dict[str, Any]]) -> int | None:
    for i, message in enumerate(messages):
        if message.get("role") in SYSTEM_ROLES:
            return i
    return None


def last_user_index(messages: Sequence[dict[str, Any]]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None


def appended(message: dict[str, Any], text: str) -> dict[str, Any]:
    """``message`` with ``text`` added at the end of its content (a new message; the
    given one is not mutated): a text part for list content, else after a blank line."""
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [*content, {"type": "text", "text": text}]}
    return {**message, "content": f"{content}\n\n{text}" if content else text}


def render(request: ChatRequest, injection: Injection) -> ChatRequest:
    """``request`` with ``injection`` rendered in (pure; ``request`` is not mutated).

    Returns the very same object when nothing renders, so an untouched request still
    goes upstream as the client's exact bytes.
    """
    if injection.empty:
        return request
    messages = list(request.messages)
    changed = False
    text = injection.system_text()
    if text:
        at = first_system_index(messages)
        if at is not None and injection.placement == "append":
            messages[at] = appended(messages[at], text)
        else:
            role = messages[at]["role"] if at is not None else "system"
            messages.insert(0 if at is None else at + 1, {"role": role, "content": text})
        changed = True
    tools: list[dict[str, Any]] = list(injection.tools)
    last_user = last_user_index(messages)
    if last_user is not None:
        spliced: list[dict[str, Any]] = []
        for exchange in injection.exchanges:
            rendered = exchange.messages()
            if rendered:
                spliced += rendered
                tools += exchange.tools
        if spliced:
            messages[last_user + 1:last_user + 1] = spliced
            changed = True
    update: dict[str, Any] = {}
    if changed:
        update["messages"] = messages
    if tools:
        update["tools"] = [*(request.tools or []), *tools]
    if not update:
        return request
    return request.model_copy(update=update)
