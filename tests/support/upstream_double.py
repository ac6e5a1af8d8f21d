"""An OpenAI-compatible upstream double on loopback: records requests, replays scripts.

The only model double, for the test suite and the benchmarks alike (the proxy
benchmark's fixed-body upstream is a load fixture, not a model). It speaks the exact
wire format: streamed replies are the real recorded streams in ``tests/fixtures/openai/``
(byte for byte), and scripted replies are literal bytes. Each request is recorded (method, path, headers, body) so a
test can diff what the client sent with what the upstream received.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import struct
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.proxy.asgi import read_body
from tests.support.openai_bodies import COMPLETION, FIXTURES, MODELS, completion, fixture, fixture_json

__all__ = ["COMPLETION", "FIXTURES", "MODELS", "ConversationScript", "HangReply", "JSONReply", "Recorded",
           "SSEReply", "UpstreamDouble", "completion", "embeddings_body", "fixture", "fixture_json"]


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    query: str = ""

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class JSONReply:
    body: bytes | dict[str, Any] = field(default_factory=lambda: dict(COMPLETION))
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class SSEReply:
    body: bytes = field(default_factory=lambda: fixture("text_with_usage"))
    pieces: int | None = None  # split the body into writes of this many bytes
    delay: float = 0.0  # seconds between writes
    break_after: int | None = None  # abort the connection after this many bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class HangReply:
    seconds: float = 30.0  # wait this long before answering (disconnect tests)
    then: Any = None


Reply = JSONReply | SSEReply | HangReply
Script = Reply | Callable[[Recorded], Reply]


class Abort(Exception):
    """Raised inside the app to make uvicorn drop the connection mid-response."""


class UpstreamDouble:
    """ASGI app; serve it with :class:`tests.support.loopback.LoopbackServer` (``lifespan="off"``).

    Each request gets the next item of :attr:`script` (:meth:`enqueue`), else
    :attr:`default` (a reply policy: a callable taking the :class:`Recorded` request, such
    as :class:`ConversationScript` or ``tests.memorization.memory_model.MemoryModel``),
    else the built-in answer per path (models, embeddings, a chat completion or the
    recorded ``text_with_usage`` stream, a Responses ``responses_text`` body or stream)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.script: deque[Script] = deque()
        self.default: Callable[[Recorded], Reply] | None = None
        self.disconnects: list[float] = []
        self.open_responses = 0
        self.completed_streams = 0

    def enqueue(self, *replies: Script) -> None:
        self.script.extend(replies)

    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def responses_requests(self) -> list[Recorded]:
        """``POST .../responses`` (create) requests."""
        return [r for r in self.requests if r.method == "POST" and r.path.endswith("/responses")]

    def reset(self) -> None:
        self.requests.clear()
        self.script.clear()
        self.disconnects.clear()
        self.default = None

    def _choose(self, rec: Recorded) -> Reply:
        if self.script:
            item = self.script.popleft()
        elif self.default is not None:
            item = self.default
        else:
            item = _default_reply
        return item(rec) if callable(item) else item

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await read_body(receive, 64 * 1024 * 1024)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        rec = Recorded(scope["method"], scope["path"], headers, body, scope.get("query_string", b"").decode("latin-1"))
        self.requests.append(rec)
        reply = self._choose(rec)
        task = asyncio.current_task()
        watcher = asyncio.ensure_future(self._watch(receive, task))
        self.open_responses += 1
        try:
            await self._send(reply, send)
        except asyncio.CancelledError:
            return
        finally:
            self.open_responses -= 1
            watcher.cancel()

    async def _watch(self, receive: Any, task: Any) -> None:
        message = await receive()
        if message["type"] == "http.disconnect":
            self.disconnects.append(time.monotonic())
            task.cancel()

    async def _send(self, reply: Reply, send: Any) -> None:
        if isinstance(reply, HangReply):
            await asyncio.sleep(reply.seconds)
            reply = reply.then or JSONReply()
        if isinstance(reply, JSONReply):
            body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            headers = {"content-type": "application/json", **reply.headers}
            await send({"type": "http.response.start", "status": reply.status,
                        "headers": [(k.encode(), v.encode()) for k, v in headers.items()]})
            await send({"type": "http.response.body", "body": body})
            return
        headers = {"content-type": "text/event-stream; charset=utf-8", **reply.headers}
        await send({"type": "http.response.start", "status": reply.status,
                    "headers": [(k.encode(), v.encode()) for k, v in headers.items()]})
        data = reply.body
        size = reply.pieces or len(data) or 1
        sent = 0
        for start in range(0, len(data), size):
            piece = data[start:start + size]
            if reply.break_after is not None and sent + len(piece) > reply.break_after:
                piece = piece[: reply.break_after - sent]
                if piece:
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
                await asyncio.sleep(0.01)
                raise Abort("scripted mid-stream connection break")
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            sent += len(piece)
            if reply.delay:
                await asyncio.sleep(reply.delay)
        await send({"type": "http.response.body", "body": b""})
        self.completed_streams += 1


def _default_reply(rec: Recorded) -> Reply:
    if rec.path.endswith("/models"):
        return JSONReply(MODELS)
    if "/models/" in rec.path:  # models.retrieve
        wanted = rec.path.rsplit("/models/", 1)[1]
        for model in MODELS["data"]:
            if model["id"] == wanted:
                return JSONReply(model)
    if rec.path.endswith("/embeddings"):
        return JSONReply(embeddings_body(rec.json))
    if rec.path.endswith("/chat/completions"):
        if (rec.json or {}).get("stream"):
            return SSEReply()
        return JSONReply()
    if rec.method == "POST" and rec.path.endswith("/responses"):  # constructed fixtures
        if (rec.json or {}).get("stream"):
            return SSEReply(fixture("responses_text"))
        return JSONReply(fixture_json("responses_text"))
    return JSONReply({"error": {"message": "not found", "type": "invalid_request_error", "param": None, "code": None}}, status=404)


def embeddings_body(request: dict[str, Any]) -> dict[str, Any]:
    """Deterministic embeddings in the requested ``encoding_format``."""
    inputs = request.get("input")
    texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
    dims = int(request.get("dimensions") or 8)
    data = []
    for i, text in enumerate(texts):
        seed = hashlib.sha256(str(text).encode()).digest()
        vector = [seed[d % 32] / 255.0 for d in range(dims)]
        if request.get("encoding_format") == "base64":
            emb: Any = base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode()
        else:
            emb = vector
        data.append({"object": "embedding", "index": i, "embedding": emb})
    return {"object": "list", "data": data, "model": request.get("model"),
            "usage": {"prompt_tokens": 3, "total_tokens": 3}}


class ConversationScript:
    """Reply policy playing the other side of scripted conversations
    (``double.default = ConversationScript()``; the LoCoMo via-chat benchmark).

    A chat completion gets the next reply scripted for its ``metadata.conversation_id``
    (:meth:`script`; the gateway forwards ``metadata`` as sent), or ``"ok"`` when none is
    left, as a non-stream ``chat.completion`` naming the requested model. Bodies carrying
    ``metadata.question_id`` are kept in :attr:`received` under it. Other paths get the
    double's built-in answers.
    """

    def __init__(self) -> None:
        self.scripts: dict[str, deque[str]] = defaultdict(deque)
        self.received: dict[str, dict[str, Any]] = {}

    def script(self, conversation_id: str, replies: list[str]) -> None:
        self.scripts[conversation_id].extend(replies)

    def __call__(self, rec: Recorded) -> Reply:
        if not rec.path.endswith("/chat/completions"):
            return _default_reply(rec)
        body = rec.json or {}
        meta = body.get("metadata") or {}
        if meta.get("question_id"):
            self.received[meta["question_id"]] = body
        queue = self.scripts.get(meta.get("conversation_id", ""))
        reply = queue.popleft() if queue else "ok"
        return JSONReply(completion(reply, body.get("model")))
