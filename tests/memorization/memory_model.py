"""The upstream double playing the memory model: answers by the response_format schema
name the worker asks for (``memorize_decision``, ``memorize_extraction``,
``memorize_reconcile``, ``memorize_inference``) with scripted JSON, and the chat model
otherwise. Every memory-model request body is recorded per name."""

from __future__ import annotations

import json
from collections import defaultdict, deque
from typing import Any

from tests.support.upstream_double import JSONReply, Recorded, _default_reply, completion

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

    def on(self, name: str, *answers: Any) -> "MemoryModel":
        self.answers[name].extend(answers)
        return self

    def prompt_texts(self) -> str:
        return json.dumps(self.calls, ensure_ascii=False)

    def __call__(self, rec: Recorded):  # noqa: ANN204
        body = rec.json or {}
        fmt = body.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name")
        if not name:
            return _default_reply(rec)
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
