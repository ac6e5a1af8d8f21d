"""OpenAI wire-format bodies shared by the upstream double and the proxy benchmark.

No imports beyond the standard library: the benchmark's child processes (fixed-body
upstream, load generator) import this module too.

- :data:`FIXTURES`: ``tests/fixtures/openai/``, real recorded streams (see its README);
- :data:`COMPLETION`: a real ``chat.completion`` object (OpenAI's API reference), ~1 KB;
- :data:`MODELS`: a ``/v1/models`` list.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "openai"


def fixture(name: str) -> bytes:
    """A recorded stream by file stem, e.g. ``fixture("text_with_usage")``.

    Raises:
        FileNotFoundError: no ``<name>.sse`` in :data:`FIXTURES`.
    """
    return (FIXTURES / f"{name}.sse").read_bytes()


def fixture_json(name: str) -> bytes:
    """A constructed non-stream body by file stem, e.g. ``fixture_json("responses_text")``
    (``<name>.json`` in :data:`FIXTURES`; see its README)."""
    return (FIXTURES / f"{name}.json").read_bytes()


COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
    "object": "chat.completion",
    "created": 1741570283,
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "The image shows a wooden boardwalk extending through a lush green marshland.",
                "refusal": None,
                "annotations": [],
            },
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 1117,
        "completion_tokens": 46,
        "total_tokens": 1163,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    },
    "service_tier": "default",
    "system_fingerprint": "fp_fc9f1d7035",
}

MODELS: dict[str, Any] = {
    "object": "list",
    "data": [
        {"id": "gpt-4o-mini", "object": "model", "created": 1721172741, "owned_by": "system"},
        {"id": "gpt-4o", "object": "model", "created": 1715367049, "owned_by": "system"},
        {"id": "text-embedding-3-small", "object": "model", "created": 1705948997, "owned_by": "system"},
    ],
}


def completion(content: str, model: str | None = None) -> dict[str, Any]:
    """:data:`COMPLETION` (a fresh copy) with one assistant message ``content`` and, when
    given, ``model``."""
    body = copy.deepcopy(COMPLETION)
    body["choices"][0]["message"]["content"] = content
    if model is not None:
        body["model"] = model
    return body
