"""SSE bodies for the memory_search loop, shaped like the recorded OpenAI stream
``tests/fixtures/openai/gpt-4o-mini_tool_call_round1.sse`` (same fields: ``service_tier``,
``system_fingerprint``, ``usage: null`` on ordinary chunks, ``obfuscation``)."""

from __future__ import annotations

import json
from typing import Any

from gateway.proxy.sse import SSEDecoder
from gateway.proxy.wire import Chunk
from tests.support.upstream_double import fixture

ROUND1_ID = "chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl"
SEARCH_CALL_ID = "call_ZR5UUuTt3pf61kjwAJIYdVMj"
CLIENT_CALL_ID = "call_Qm3Pf61kjwAJIYdVMjZR5UUu"


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, *, id_: str = ROUND1_ID,
           usage: dict[str, Any] | None = None, choices: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": id_, "object": "chat.completion.chunk", "created": 1782955817,
        "model": "gpt-4o-mini-2024-07-18", "service_tier": "default", "system_fingerprint": "fp_d0469e1700",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}] if choices else [],
        "usage": usage, "obfuscation": "C63r",
    }
    return body


def sse(datas: list[dict[str, Any]]) -> bytes:
    events = [b"data: " + json.dumps(d, separators=(",", ":")).encode() + b"\n\n" for d in datas]
    return b"".join(events) + b"data: [DONE]\n\n"


USAGE = {"prompt_tokens": 53, "completion_tokens": 15, "total_tokens": 68}


def tool_round(query: str = "science fiction", *, client_call: bool = False, text: str | None = None) -> bytes:
    """Round one: the model calls memory_search (index 0), optionally a client tool
    ``get_weather`` (index 1) and optionally says ``text`` first."""
    args = json.dumps({"query": query})
    first = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
        {"index": 0, "id": SEARCH_CALL_ID, "type": "function", "function": {"name": "memory_search", "arguments": ""}}]}
    datas = []
    if text:
        datas += [_chunk({"role": "assistant", "content": "", "refusal": None}), _chunk({"content": text})]
        del first["role"]
    datas.append(_chunk(first))
    datas += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + 7]}}]}) for i in range(0, len(args), 7)]
    if client_call:
        datas.append(_chunk({"tool_calls": [{"index": 1, "id": CLIENT_CALL_ID, "type": "function",
                                             "function": {"name": "get_weather", "arguments": ""}}]}))
        datas.append(_chunk({"tool_calls": [{"index": 1, "function": {"arguments": "{\"city\":\"Paris\"}"}}]}))
    datas.append(_chunk({}, "tool_calls"))
    datas.append(_chunk(None, usage=USAGE, choices=False))
    return sse(datas)


def answer_round() -> bytes:
    """Round two: the recorded text answer (``The capital of ...``)."""
    return fixture("gpt-4o-mini_tool_call_round2")


def chunks(body: bytes) -> list[Chunk]:
    """The data chunks of an SSE body, ``[DONE]`` excluded."""
    return [Chunk(e.raw, e.data) for e in SSEDecoder().feed(body) if e.data and e.data != "[DONE]"]
