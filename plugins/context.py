"""What the recall plugins inject into one request, and the one renderer that puts it in.

Several plugins add to the same places: ``personalization`` and ``hybrid_injection`` each
contribute a section of one system text (seed 000 layout: client's system prompt, then
personalization, then memory context), ``tool_splice`` adds an assistant/tool message pair
and a tool definition, ``hybrid_injection`` a tool definition, ``token_budget`` trims all
of it. So they share one immutable :class:`InjectedContext` in
``call.state[CONTEXT_KEY]``: each plugin builds a new context with its part changed and
calls :func:`apply`, which first **undoes** what the previous context put in the request
(found by value, not index, so a plugin that moved messages in between does not break it)
and then renders the new context. The result is the same whatever order the injecting
plugins run in, and the client's own system prefix stays byte-identical with the default
``separate`` placement (provider prompt caching, openai-compat item 8).

Placement of the system text (``hybrid_injection.placement``):

- ``separate`` (default): a new system message right after the client's first system
  (or developer) message, or first when there is none;
- ``append``: appended to the first system message after a blank line (a text part when
  its content is a list of parts); a new system message first when there is none.

``InjectedContext.request`` is the latest request a recall plugin returned: what the
memory_search tool loop resends (a plugin outside this family that rewrites later is not
reflected there).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from gateway.proxy.wire import ChatRequest
from gateway.memory.records import ScoredMemory
from gateway.plugin import CallContext
from plugins.prompts import render_memory_context
from plugins.splice import splice_messages

CONTEXT_KEY = "memgate.context"
SYSTEM_ROLES = ("system", "developer")
Placement = Literal["separate", "append"]


@dataclass(frozen=True)
class MemorySection:
    """High-relevance memories rendered with a template (``{{ memoryItems }}``)."""

    template: str
    memories: tuple[ScoredMemory, ...]

    def text(self) -> str | None:
        if not self.memories:
            return None
        return render_memory_context(self.template, [m.record.text for m in self.memories])


@dataclass(frozen=True)
class SpliceSection:
    """A recall_memory tool call and its result (seed 002), with the hits' scores."""

    call_id: str
    query: str
    profiles: tuple[ScoredMemory, ...]
    events: tuple[ScoredMemory, ...]
    tool: dict[str, Any]

    def messages(self) -> list[dict[str, Any]]:
        """``[assistant tool_calls message, tool message]``; [] when nothing was found."""
        if not self.profiles and not self.events:
            return []
        return splice_messages(self.call_id, self.query, self.profiles, self.events)


@dataclass(frozen=True)
class Applied:
    """What a render put into the request, so the next render can take it out."""

    system: dict[str, Any] | None = None
    system_original: dict[str, Any] | None = None
    splice_id: str | None = None
    tool_names: tuple[str, ...] = ()
    tools_were_unset: bool = False


@dataclass(frozen=True)
class InjectedContext:
    """Everything the recall plugins inject into one request (see module docstring)."""

    placement: Placement = "separate"
    personalization: str | None = None
    memory: MemorySection | None = None
    splice: SpliceSection | None = None
    tools: tuple[dict[str, Any], ...] = ()
    applied: Applied | None = None
    request: ChatRequest | None = None

    def system_text(self) -> str | None:
        """Personalization, then memory context, joined by a blank line; None if empty."""
        parts = [self.personalization, self.memory.text() if self.memory else None]
        text = "\n\n".join(p for p in parts if p)
        return text or None


def context_of(call: CallContext) -> InjectedContext:
    """The call's context (an empty one when no plugin injected yet)."""
    return call.state.get(CONTEXT_KEY) or InjectedContext()


def apply(call: CallContext, request: ChatRequest, ctx: InjectedContext) -> ChatRequest:
    """Undo the previous injection in ``request``, render ``ctx``, store ``ctx`` (with what
    was applied and the result) in ``call.state``; returns the new request. Never mutates
    ``request``."""
    previous = context_of(call).applied
    base = undo(request, previous) if previous else request
    result, applied = inject(base, ctx)
    if previous is None and applied == Applied():
        result = request  # nothing injected before or now: the very same object
    call.state[CONTEXT_KEY] = replace(ctx, applied=applied, request=result)
    return result


def first_system_index(messages: list[dict[str, Any]]) -> int | None:
    for i, message in enumerate(messages):
        if message.get("role") in SYSTEM_ROLES:
            return i
    return None


def _last_user_index(messages: list[dict[str, Any]]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None


def _index_of(messages: list[dict[str, Any]], wanted: dict[str, Any]) -> int | None:
    for i, message in enumerate(messages):
        if message == wanted:
            return i
    return None


def _appended(message: dict[str, Any], text: str) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [*content, {"type": "text", "text": text}]}
    return {**message, "content": f"{content or ''}\n\n{text}" if content else text}


def _inject_system(messages: list[dict[str, Any]], text: str, placement: Placement) -> Applied:
    at = first_system_index(messages)
    if at is not None and placement == "append":
        original = messages[at]
        messages[at] = _appended(original, text)
        return Applied(system=messages[at], system_original=original)
    role = messages[at]["role"] if at is not None else "system"
    message = {"role": role, "content": text}
    messages.insert(0 if at is None else at + 1, message)
    return Applied(system=message)


def _with_field(request: ChatRequest, name: str, value: Any) -> ChatRequest:
    """``request`` with field ``name`` set, or absent from the body when ``value`` is None."""
    new = request.model_copy(update={name: value})
    if value is None:
        new.__pydantic_fields_set__.discard(name)  # our fresh copy: the field was not sent
    return new


def inject(request: ChatRequest, ctx: InjectedContext) -> tuple[ChatRequest, Applied]:
    """``request`` with ``ctx`` rendered in it, and what was put in (pure)."""
    messages = list(request.messages)
    applied = Applied()
    text = ctx.system_text()
    if text:
        applied = _inject_system(messages, text, ctx.placement)
    splice = ctx.splice.messages() if ctx.splice else []
    last_user = _last_user_index(messages)
    if splice and last_user is not None:
        messages[last_user + 1:last_user + 1] = splice
        applied = replace(applied, splice_id=ctx.splice.call_id)  # type: ignore[union-attr]
    tools = [*ctx.tools, *([ctx.splice.tool] if applied.splice_id and ctx.splice else [])]
    if tools:
        names = tuple(t["function"]["name"] for t in tools)
        applied = replace(applied, tool_names=names, tools_were_unset=request.tools is None)
        request = _with_field(request, "tools", [*(request.tools or []), *tools])
    if applied == Applied():
        return request, applied
    return request.model_copy(update={"messages": messages}), applied


def _undo_splice(messages: list[dict[str, Any]], call_id: str) -> list[dict[str, Any]]:
    def ours(m: dict[str, Any]) -> bool:
        calls = m.get("tool_calls") or []
        return m.get("tool_call_id") == call_id or any(c.get("id") == call_id for c in calls)

    return [m for m in messages if not ours(m)]


def undo(request: ChatRequest, applied: Applied) -> ChatRequest:
    """``request`` without what ``applied`` describes (pure)."""
    messages = list(request.messages)
    if applied.system is not None:
        at = _index_of(messages, applied.system)
        if at is not None:
            if applied.system_original is None:
                del messages[at]
            else:
                messages[at] = applied.system_original
    if applied.splice_id:
        messages = _undo_splice(messages, applied.splice_id)
    if applied.tool_names:
        kept = [t for t in request.tools or [] if (t.get("function") or {}).get("name") not in applied.tool_names]
        request = _with_field(request, "tools", None if applied.tools_were_unset and not kept else kept)
    return request.model_copy(update={"messages": messages})
