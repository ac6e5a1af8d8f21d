"""Small plugins for chain tests: they record, raise, sleep or inject."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from pydantic import Field

from gateway.chain.sdk import PluginConfig
from gateway.proxy.wire import ChatRequest, Chunk

EVENTS: list[str] = []  # hook calls, in order, across the recording plugins


class RecordingConfig(PluginConfig):
    label: str = Field("r", description="Name written into EVENTS.")


class Recording:
    """Implements every capability; appends ``label.hook`` to EVENTS."""

    name: ClassVar[str] = "recording"
    Config = RecordingConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: RecordingConfig, services: Any) -> None:
        self.label = config.label

    async def rewrite_request(self, call, request: ChatRequest) -> ChatRequest:
        EVENTS.append(f"{self.label}.rewrite_request")
        return request

    async def filter_response(self, call, body):
        EVENTS.append(f"{self.label}.filter_response")
        return body

    def response_fallback(self, call, body):
        return body

    def stream_fallback(self, call):
        return None

    async def on_chunk(self, call, chunk: Chunk):
        if not call.state.get(self.label):
            call.state[self.label] = True
            EVENTS.append(f"{self.label}.on_chunk")
        return [chunk]

    async def on_stream_end(self, call):
        EVENTS.append(f"{self.label}.on_stream_end")
        return
        yield  # an async generator that yields nothing

    async def on_complete(self, call, reply) -> None:
        EVENTS.append(f"{self.label}.on_complete:{'cancelled' if reply.cancelled else 'done'}:{len(reply.text)}")


def _named(base: type, name: str) -> type:
    return type(base.__name__ + "_" + name, (base,), {"name": name})


RecordingA = _named(Recording, "rec_a")
RecordingB = _named(Recording, "rec_b")


class NoConfig(PluginConfig):
    pass


class InjectConfig(PluginConfig):
    text: str = Field("INJECTED", description="System message content added.")


class Inject:
    """Adds a system message after any existing ones (a rewrite)."""

    name: ClassVar[str] = "inject"
    Config = InjectConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: InjectConfig, services: Any) -> None:
        self.text = config.text

    async def rewrite_request(self, call, request: ChatRequest) -> ChatRequest:
        return request.model_copy(
            update={"messages": [{"role": "system", "content": self.text}, *request.messages]}
        )


class Raising(Inject):
    name: ClassVar[str] = "raising"

    async def rewrite_request(self, call, request):
        await super().rewrite_request(call, request)
        raise RuntimeError("plugin bug")


class SleepConfig(PluginConfig):
    seconds: float | None = Field(None, description="How long the hook sleeps; None: it waits "
                                  "on an event that never fires (an overrun whatever the machine's speed).")


class Sleeping:
    name: ClassVar[str] = "sleeping"
    Config = SleepConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: SleepConfig, services: Any) -> None:
        self.seconds = config.seconds

    async def rewrite_request(self, call, request):
        if self.seconds is None:
            await asyncio.Event().wait()
        else:
            await asyncio.sleep(self.seconds)
        return request.model_copy(update={"messages": []})


class MustFollowInject(Recording):
    name: ClassVar[str] = "follower"
    runs_after: ClassVar[tuple[str, ...]] = ("inject",)


class Shout:
    """A stream filter that upper-cases content deltas (and response bodies)."""

    name: ClassVar[str] = "shout"
    Config = NoConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: NoConfig, services: Any) -> None:
        pass

    async def on_chunk(self, call, chunk: Chunk):
        data = chunk.data
        if not data or not data.get("choices"):
            return [chunk]
        delta = data["choices"][0].get("delta") or {}
        if not delta.get("content"):
            return [chunk]
        choice = {**data["choices"][0], "delta": {**delta, "content": delta["content"].upper()}}
        return [Chunk.from_data({**data, "choices": [choice]})]

    async def on_stream_end(self, call):
        return
        yield

    def stream_fallback(self, call):
        return None


REGISTRY = {cls.name: cls for cls in (RecordingA, RecordingB, Inject, Raising, Sleeping, MustFollowInject, Shout)}
