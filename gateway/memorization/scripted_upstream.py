"""A small OpenAI-compatible upstream that answers each chat completion with the next
scripted turn of its conversation, and records what it received (LoCoMo replay through
the gateway, :mod:`gateway.memorization.locomo_chat`).

Scripts are keyed by the request's ``metadata.conversation_id`` (the gateway forwards
the body as sent); a request without a script gets ``"ok"``. Non-stream replies only
(``chat.completion`` objects in the OpenAI wire format). Every request body is kept in
:attr:`ScriptedUpstream.received` keyed by ``metadata.question_id`` when present.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict, deque
from typing import Any

from gateway.proxy.asgi import read_body

MAX_BODY = 64 * 1024 * 1024  # bytes; replayed conversations are far smaller


def completion_body(content: str, model: str) -> dict[str, Any]:
    """A ``chat.completion`` object with one assistant message."""
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion", "created": int(time.time()),
        "model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                     "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class ScriptedUpstream:
    """ASGI app; serve it with :class:`gateway.loopback.LoopbackServer` (``lifespan="off"``)."""

    def __init__(self) -> None:
        self.scripts: dict[str, deque[str]] = defaultdict(deque)
        self.received: dict[str, dict[str, Any]] = {}
        self.requests = 0

    def script(self, conversation_id: str, replies: list[str]) -> None:
        self.scripts[conversation_id].extend(replies)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        raw = await read_body(receive, MAX_BODY)
        status, payload = self._answer(scope["path"], raw)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(payload).encode()})

    def _answer(self, path: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model", "owned_by": "script"}]}
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": "not found", "type": "invalid_request_error", "param": None, "code": None}}
        self.requests += 1
        body = json.loads(raw or b"{}")
        meta = body.get("metadata") or {}
        if meta.get("question_id"):
            self.received[meta["question_id"]] = body
        queue = self.scripts.get(meta.get("conversation_id", ""))
        reply = queue.popleft() if queue else "ok"
        return 200, completion_body(reply, body.get("model", "gpt-4o-mini"))
