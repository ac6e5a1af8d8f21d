"""The gateway's own tool loop (``memory_search``) in the Responses form, invisible to the
client, stream or not.

When a plugin offered a tool of its own (:class:`~gateway.chain.sdk.ToolRunner`), each reply is
a *round*. A round is **hidden** when its output calls only the gateway's tools: no
``message`` item and no call the client must answer (:data:`CLIENT_CALL_TYPES`), the
plugin has rounds left and the response ``completed``. The gateway then runs the calls
through the plugin and asks again with the round's output items (reasoning included, as
the API wants them next to their calls) and one ``function_call_output`` per call
appended to ``input``; everything else of the request is what went upstream first
(``previous_response_id``, ``store``, ``instructions`` included). When no plugin has
rounds left and the client has no tools of its own, the next round asks for
``tool_choice: "none"``. The first round that is not hidden is the reply: the client sees
that response (its ``id``, which holds the whole exchange upstream, so a later
``previous_response_id`` works) with any gateway call removed. Before the next round is
asked, a hidden round's output items go to ``record_hidden`` (the route records the
containers they name, e.g. a ``code_interpreter_call``'s ``container_id``, as the
caller's, as it does for the reply's own items).

Streams: a round's events are held until an item the client must see starts
(``response.output_item.added`` of a message or a client call); then they flow. Events of
the gateway's items are dropped; when something was dropped, later events get their
``sequence_number`` renumbered from the client's count and ``output_index`` shifted, and
the ``response`` objects lose the gateway's items (those events are re-serialized); else
every event keeps its bytes. A hidden round's events never reach the client.

Failures (a plugin round raising or overrunning its budget, a round's upstream call
failing before it sent anything): fail open with the last round the gateway has, without
its gateway calls; ``plugin:reason`` is recorded as for any hook
(``memgate_plugin_failures_total{hook="responses_tool_loop"}``, ``x-memgate-degraded`` on
non-stream replies). Usage of hidden rounds is not added to the reply's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.chain.chain import LoadedPlugin, PluginChain
from gateway.chain.sdk import CallContext, ToolRunner
from gateway.proxy.sse import SSEDecoder, SSEEvent
from gateway.routes.responses_wire import CLIENT_CALL_TYPES, container_ids, dumps, input_items, output_of
from gateway.runtime.errors import UpstreamError
from gateway.runtime.telemetry import Telemetry

__all__ = ["Emitter", "ToolLoop"]

log = logging.getLogger("memgate.proxy")

TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
#: Opens a round's upstream call: ``(body) -> async context manager of the response``.
Post = Callable[[bytes], contextlib.AbstractAsyncContextManager[Any]]
Write = Callable[[bytes], Awaitable[None]]
#: Records what a hidden round made: ``(its output items) -> None`` (ToolLoop.record_hidden).
RecordHidden = Callable[[list[dict[str, Any]]], Awaitable[None]]


@dataclass
class Emitter:
    """Writes a visible round's events to the client (module docstring): renumbers
    ``sequence_number`` and shifts ``output_index`` past dropped items, re-serializing
    only the events that change. ``sent`` counts the events the client got (the next
    ``sequence_number``). ``claim`` is awaited with each new response id an event's
    ``response`` carries, before that event is written (the route records its creator);
    ``claim_items`` likewise with each item of a ``response.output_item.added`` or
    ``.done`` event whose id or container ids (:func:`~.responses_wire.container_ids`)
    are new (the route records the item's and the container's owner)."""

    write: Write
    observe: Callable[[dict[str, Any]], None] | None = None
    sent: int = 0
    dropped: set[int] = field(default_factory=set)
    claim: Callable[[str], Awaitable[None]] | None = None
    claimed: set[str] = field(default_factory=set)
    claim_items: Callable[[list[dict[str, Any]]], Awaitable[None]] | None = None
    items_claimed: set[tuple[Any, tuple[str, ...]]] = field(default_factory=set)

    async def claim_id(self, data: dict[str, Any]) -> None:
        """Await :attr:`claim` for the id of ``data["response"]`` when it is new, and
        :attr:`claim_items` for ``data["item"]`` of an output item event when its id or
        container ids are new."""
        item = data.get("item")
        if self.claim_items is not None and isinstance(item, dict) \
                and data.get("type") in ("response.output_item.added", "response.output_item.done"):
            item_id = item.get("id")
            mark = (item_id if isinstance(item_id, str) else None, tuple(container_ids(item)))
            if mark != (None, ()) and mark not in self.items_claimed:
                self.items_claimed.add(mark)
                await self.claim_items([item])
        response = data.get("response")
        if self.claim is None or not isinstance(response, dict):
            return
        rid = response.get("id")
        if isinstance(rid, str) and rid not in self.claimed:
            self.claimed.add(rid)
            await self.claim(rid)

    async def emit(self, event: SSEEvent, data: dict[str, Any] | None) -> None:
        if data is None:
            await self.write(event.raw)
            return
        await self.claim_id(data)
        out = self._rewrite(data)
        raw = event.raw
        if out is not data:
            name = event.event or str(out.get("type", ""))
            raw = b"event: " + name.encode() + b"\ndata: " + dumps(out) + b"\n\n"
        self.sent += 1
        if self.observe is not None:
            self.observe(out)
        await self.write(raw)

    def _rewrite(self, data: dict[str, Any]) -> dict[str, Any]:
        changes: dict[str, Any] = {}
        if "sequence_number" in data and data["sequence_number"] != self.sent:
            changes["sequence_number"] = self.sent
        if self.dropped:
            index = data.get("output_index")
            if isinstance(index, int):
                shifted = index - sum(1 for d in self.dropped if d < index)
                if shifted != index:
                    changes["output_index"] = shifted
            response = data.get("response")
            if isinstance(response, dict) and isinstance(response.get("output"), list):
                changes["response"] = without_items(response, self.dropped)
        return {**data, **changes} if changes else data


def without_items(response: dict[str, Any], indices: set[int]) -> dict[str, Any]:
    """``response`` without the output items at ``indices``."""
    output = output_of(response)
    return {**response, "output": [item for i, item in enumerate(output) if i not in indices]}


def _event_data(event: SSEEvent) -> dict[str, Any] | None:
    if event.data is None:
        return None
    try:
        value = json.loads(event.data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass
class _Round:
    """What one upstream stream of the loop holds back and learns."""

    held: list[tuple[SSEEvent, dict[str, Any] | None]] = field(default_factory=list)
    visible: bool = False
    ours: set[int] = field(default_factory=set)
    terminal: tuple[SSEEvent, dict[str, Any]] | None = None


class ToolLoop:
    """The loop for one call (module docstring); None from :meth:`for_call` when no
    plugin offered a tool of its own."""

    def __init__(
        self, call: CallContext, runners: dict[str, tuple[LoadedPlugin, Any]], sent: dict[str, Any],
        telemetry: Telemetry, record_hidden: RecordHidden | None = None,
    ) -> None:
        self.call = call
        self.runners = runners
        self.sent = sent
        self.telemetry = telemetry
        #: awaited with a hidden round's output items before the next round is asked
        #: (the route records the containers they name as the caller's)
        self.record_hidden = record_hidden
        self.extra: list[Any] = []
        self.rounds = 0

    @classmethod
    def for_call(cls, chain: PluginChain, call: CallContext, sent: dict[str, Any], telemetry: Telemetry,
                 record_hidden: RecordHidden | None = None) -> ToolLoop | None:
        runners: dict[str, tuple[LoadedPlugin, Any]] = {}
        for plugin in chain.plugins:
            if isinstance(plugin.instance, ToolRunner):
                for name in plugin.instance.offered_tools(call):
                    runners[name] = (plugin, plugin.instance)
        return cls(call, runners, sent, telemetry, record_hidden) if runners else None

    # -- rounds ------------------------------------------------------------------------

    def is_ours(self, item: Any) -> bool:
        return isinstance(item, dict) and item.get("type") == "function_call" and item.get("name") in self.runners

    def hidden(self, response: dict[str, Any]) -> bool:
        """Whether this reply is a hidden round (module docstring)."""
        output = output_of(response)
        if response.get("status") != "completed" or not any(self.is_ours(i) for i in output):
            return False
        return not any(
            isinstance(i, dict) and (i.get("type") == "message" or (i.get("type") in CLIENT_CALL_TYPES and not self.is_ours(i)))
            for i in output
        )

    def _client_tools(self) -> bool:
        return any(not (isinstance(t, dict) and t.get("name") in self.runners) for t in self.sent.get("tools") or ())

    async def next_body(self, response: dict[str, Any]) -> dict[str, Any] | None:
        """Run the hidden round's calls; the next round's request, or None when no plugin
        has rounds left for them (the round is then the reply).

        Raises:
            whatever the plugin raised, or TimeoutError past its budget (the caller fails
            open).
        """
        output = output_of(response)
        ours = [i for i in output if self.is_ours(i)]
        by_runner: dict[str, list[dict[str, Any]]] = {}
        for item in ours:
            by_runner.setdefault(self.runners[item["name"]][0].name, []).append(item)
        if any(self.runners[items[0]["name"]][1].tool_rounds_left(self.call) <= 0 for items in by_runner.values()):
            return None
        results: dict[str, str] = {}
        for items in by_runner.values():
            plugin, runner = self.runners[items[0]["name"]]
            async with asyncio.timeout(plugin.reply_budget_s):
                answers = await runner.run_tool_calls(self.call, [(i["name"], i.get("arguments") or "") for i in items])
            results.update((i.get("call_id", ""), a) for i, a in zip(items, answers, strict=True))
        if self.record_hidden is not None:
            await self.record_hidden([i for i in output if isinstance(i, dict)])
        self.rounds += 1
        self.extra += [*output, *({"type": "function_call_output", "call_id": i.get("call_id", ""),
                                   "output": results[i.get("call_id", "")]} for i in ours)]
        body = {**self.sent, "input": [*input_items(self.sent), *self.extra]}
        if not self._client_tools() and all(r.tool_rounds_left(self.call) <= 0 for _, r in self.runners.values()):
            body["tool_choice"] = "none"
        return body

    def failed(self, exc: BaseException) -> None:
        """Record a failed round as a plugin failure (fail open)."""
        plugin = next(iter(self.runners.values()))[0].name
        reason = "timeout" if isinstance(exc, TimeoutError) else f"error:{type(exc).__name__}"
        log.warning("responses tool loop round failed (%s): %r", plugin, exc)
        self.call.degrade(plugin, reason)
        self.telemetry.metrics.inc("memgate_plugin_failures_total", plugin=plugin, hook="responses_tool_loop",
                                   reason=reason.split(":")[0])

    def strip(self, response: dict[str, Any]) -> dict[str, Any] | None:
        """``response`` without the gateway's calls, or None when it has none."""
        output = output_of(response)
        ours = {i for i, item in enumerate(output) if self.is_ours(item)}
        return without_items(response, ours) if ours else None

    # -- non-stream --------------------------------------------------------------------

    async def complete(self, raw: bytes, response: dict[str, Any], post: Post) -> tuple[bytes, dict[str, Any]]:
        """Run hidden rounds until a reply: ``(its bytes, parsed)``; the bytes are the
        upstream's unless a gateway call had to be removed."""
        while self.hidden(response):
            try:
                body = await self.next_body(response)
                if body is None:
                    break
                async with post(dumps({**body, "stream": False})) as upstream:
                    data = await upstream.aread()
                if upstream.status_code != 200:
                    raise UpstreamError(f"tool loop round answered {upstream.status_code}")
                parsed = json.loads(data)
                if not isinstance(parsed, dict):
                    raise UpstreamError("tool loop round answered a non-object")
            except Exception as exc:  # fail open (TimeoutError included); BaseException propagates
                self.failed(exc)
                break
            raw, response = data, parsed
        stripped = self.strip(response)
        if stripped is not None:
            return dumps(stripped), stripped
        return raw, response

    # -- streams -----------------------------------------------------------------------

    async def stream(self, first: Any, post: Post, emitter: Emitter) -> None:
        """Relay ``first`` (the first round's open upstream response) and any further
        rounds to the client through ``emitter``."""
        current = await self._round(first, emitter)
        while current.terminal is not None and not current.visible:
            data = current.terminal[1]
            response = data["response"] if isinstance(data.get("response"), dict) else {}
            body = None
            if self.hidden(response):
                try:
                    body = await self.next_body(response)
                except Exception as exc:
                    self.failed(exc)
            if body is None:
                await self._flush(current, emitter, end=True)
                return
            try:
                async with post(dumps({**body, "stream": True})) as upstream:
                    if upstream.status_code != 200:
                        raise UpstreamError(f"tool loop round answered {upstream.status_code}")
                    following = await self._round(upstream, emitter)
            except UpstreamError as exc:
                if emitter.sent:
                    raise  # the client has part of this round: the route sends an error event
                self.failed(exc)
                await self._flush(current, emitter, end=True)
                return
            current = following
        if not current.visible:
            await self._flush(current, emitter, end=True)

    async def _flush(self, rnd: _Round, emitter: Emitter, *, end: bool) -> None:
        emitter.dropped = rnd.ours
        for event, data in rnd.held:
            await emitter.emit(event, data)
        rnd.held = []
        if end and rnd.terminal is not None:
            await emitter.emit(*rnd.terminal)

    async def _round(self, upstream: Any, emitter: Emitter) -> _Round:
        """One upstream stream: held until visible (then relayed), or until its terminal
        event (kept in ``terminal``, not sent, when the round never became visible)."""
        rnd = _Round()
        decoder = SSEDecoder()
        async for events in _read(upstream, decoder):
            for event in events:
                data = _event_data(event)
                kind = data.get("type") if data is not None else None
                index = data.get("output_index") if data is not None else None
                if kind == "response.output_item.added" and isinstance(index, int):
                    item = data.get("item") if data is not None else None
                    if self.is_ours(item):
                        rnd.ours.add(index)
                        continue
                    if not rnd.visible and isinstance(item, dict) and (
                            item.get("type") == "message" or item.get("type") in CLIENT_CALL_TYPES):
                        rnd.visible = True
                        await self._flush(rnd, emitter, end=False)
                elif isinstance(index, int) and index in rnd.ours:
                    continue
                if kind in TERMINAL and data is not None and not rnd.visible:
                    rnd.terminal = (event, data)
                    continue
                if kind == "error" and not rnd.visible:
                    rnd.visible = True
                    await self._flush(rnd, emitter, end=False)
                if rnd.visible:
                    await emitter.emit(event, data)
                else:
                    rnd.held.append((event, data))
        return rnd


async def _read(upstream: Any, decoder: SSEDecoder) -> AsyncIterator[list[SSEEvent]]:
    async for part in upstream.aiter_raw():
        events = decoder.feed(part)
        if events:
            yield events
    tail = decoder.flush()
    if tail:
        yield list(tail)
