"""A recording pass-through in front of the memory model (``--mode extract --model-url``).

An ASGI app on loopback that forwards every request unchanged to the real model server
(``target``, e.g. ``http://127.0.0.1:8090/v1``) and records each chat call: which step
asked (``memorize_decision``, ``memorize_extraction``, ``memorize_reconcile``,
``memorize_inference``: the ``json_schema`` name or the ``(<name>)`` of the keys hint the
model client adds to the system message), the format asked for, the prompt's
conversation (the text after the last ``Conversation:`` / ``对话：``), the reply's content,
the status and the seconds it took. The benchmark reads the records for its examples
(what a user turn led to) and its per-step counts; nothing is changed on the wire.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from typing import Any

import httpx

_NAME = re.compile(r"\((memorize_[a-z_]+)\)")
_CONVERSATION = re.compile(r"(?:Conversation:|对话：)\n(.*?)(?:\n\n|$)", re.DOTALL)


@dataclass
class ModelCall:
    step: str
    response_format: str
    conversation: str
    content: str | None
    status: int
    seconds: float
    repair: bool


def describe(body: Any) -> tuple[str, str, str, bool]:
    """``(step, response_format type, conversation text, is a repair call)`` of a chat request body."""
    messages = (body.get("messages") or []) if isinstance(body, dict) else []
    fmt = (body.get("response_format") or {}) if isinstance(body, dict) else {}
    kind = str(fmt.get("type", "none"))
    step = str((fmt.get("json_schema") or {}).get("name", "")) if kind == "json_schema" else ""
    texts: list[str] = [m["content"] for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str)]
    if not step:
        found = next((_NAME.search(t) for t in texts if _NAME.search(t)), None)
        step = found.group(1) if found else "unknown"
    user = next((m["content"] for m in messages if isinstance(m, dict) and m.get("role") == "user"
                 and isinstance(m.get("content"), str)), "")
    conversation = _CONVERSATION.findall(user)
    repair = any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)
    return step, kind, (conversation[-1] if conversation else user[-400:]), repair


class ModelTap:
    """ASGI app: forwards to ``target`` and appends a :class:`ModelCall` per chat call to :attr:`calls`."""

    def __init__(self, target: str, timeout_s: float = 900.0) -> None:
        self.target = target.rstrip("/")
        self.timeout_s = timeout_s
        self.calls: list[ModelCall] = []

    def rows(self) -> list[dict[str, Any]]:
        return [asdict(c) for c in self.calls]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        path = scope["path"].removeprefix("/v1")
        headers = {k.decode(): v.decode() for k, v in scope["headers"] if k.lower() not in (b"host", b"content-length")}
        started = time.monotonic()
        async with httpx.AsyncClient(timeout=self.timeout_s) as client:
            response = await client.request(scope["method"], self.target + path, content=raw, headers=headers)
        if path.endswith("/chat/completions"):
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            step, kind, conversation, repair = describe(body)
            content = None
            if response.status_code < 400:
                try:
                    content = response.json()["choices"][0]["message"]["content"]
                except (ValueError, KeyError, IndexError, TypeError):
                    content = None
            else:
                content = response.text[:300]
            self.calls.append(ModelCall(step, kind, conversation, content, response.status_code,
                                        round(time.monotonic() - started, 2), repair))
        await send({"type": "http.response.start", "status": response.status_code,
                    "headers": [(b"content-type", response.headers.get("content-type", "application/json").encode())]})
        await send({"type": "http.response.body", "body": response.content})
