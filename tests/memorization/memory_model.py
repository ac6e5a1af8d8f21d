"""The upstream double playing the memory model: answers by the response_format schema
name the worker asks for (``memorize_decision``, ``memorize_extraction``,
``memorize_reconcile``, ``memorize_inference``; from ``response_format.json_schema``, or
from the prompt when the client fell back to json_object / prompt-only JSON) with scripted
JSON, and the chat model otherwise. ``reject_formats`` makes it answer a format with
llama-cpp-python's 500. Every memory-model request body is recorded per name."""

from __future__ import annotations

import json
import re
from collections import defaultdict, deque
from typing import Any

from tests.support.upstream_double import JSONReply, Recorded, _default_reply, completion

SCHEMA_NAME_RE = re.compile(r"JSON object \((\w+)\)")

#: What llama-cpp-python's server (llama_cpp.server 0.3.36, seen in ``make e2e-local``)
#: answers to ``response_format: {"type": "json_schema"}``: its request validation error
#: as a 500 (abridged: the message goes on with the input and a pydantic URL).
LLAMA_CPP_PYTHON_500 = JSONReply(
    {"error": {"message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
               "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': "
               "{'expected': \"'text' or 'json_object'\"}}", "type": "internal_server_error", "param": None,
               "code": None}},
    status=500,
)
#: A bare 500 that says nothing about the request (an overloaded or failing server).
BARE_500 = JSONReply({"error": {"message": "Internal Server Error", "type": "internal_server_error",
                                "param": None, "code": None}}, status=500)

DEFAULTS: dict[str, Any] = {
    "memorize_decision": {"should_remember": True, "reason": "facts"},
    "memorize_extraction": {"facts": [], "gist": None},
    "memorize_reconcile": {"decisions": []},
    "memorize_inference": {"inferences": []},
}


class MemoryModel:
    def __init__(self) -> None:
        self.answers: dict[str, deque[Any]] = defaultdict(deque)
        self.calls: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.always: dict[str, Any] = {}
        self.formats: list[str] = []  # response_format type of every memory-model request
        self.reject_formats: set[str] = set()  # these formats get ``reject_with``
        self.reject_with: JSONReply = LLAMA_CPP_PYTHON_500

    def on(self, name: str, *answers: Any) -> MemoryModel:
        self.answers[name].extend(answers)
        return self

    def prompt_texts(self) -> str:
        return json.dumps(self.calls, ensure_ascii=False)

    def __call__(self, rec: Recorded):
        body = rec.json or {}
        fmt = body.get("response_format") or {}
        kind = fmt.get("type") or "prompt"
        if kind == "json_object" and "schema" in fmt:  # the Anyscale-style form llama-cpp-python reads
            kind = "json_object_schema"
        name = (fmt.get("json_schema") or {}).get("name")
        if not name:  # json_object / prompt-only: the client states the schema's name in the prompt
            system = next((m.get("content") for m in body.get("messages", []) if m.get("role") == "system"), "")
            found = SCHEMA_NAME_RE.search(system if isinstance(system, str) else "")
            name = found.group(1) if found else None
        if not name:
            return _default_reply(rec)
        self.formats.append(kind)
        if kind in self.reject_formats:
            return self.reject_with
        self.calls[name].append(body)
        if name in self.always:
            answer = self.always[name]
        elif self.answers[name]:
            answer = self.answers[name].popleft()
        else:
            answer = DEFAULTS[name]
        if callable(answer):
            answer = answer(body)
        return JSONReply(completion(answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)))


def fact(text: str, **fields: Any) -> dict[str, Any]:
    return {"text": text, "speaker": "user", "scope": "profile", "type": "semantic", "keywords": [],
            "importance": 0.7, "emotion": None, "occurred": None, **fields}
