"""The fixed bodies of ``memgate bench proxy``: upstream replies and client requests.

Upstream replies (what a fast provider answers):

- non-stream: a real ``chat.completion`` object (the one in the test upstream double,
  itself from OpenAI's API reference), about 1 KB;
- stream: ``tests/fixtures/openai/text_with_usage.sse``, a real recorded OpenAI stream
  (8.7 KB, 40 events, a usage chunk, ``data: [DONE]``), relayed byte for byte.

Client requests are small chat requests without ``stream_options`` (what most SDK calls
send), so a streamed call through the gateway takes its default path: the gateway asks
upstream for usage and strips the usage chunk again (``upstream.request_stream_usage``).

The upstream tells the two replies apart by path (``/plain/v1`` vs ``/sse/v1``); proxies
route there by model name (:data:`PLAIN_MODEL`, :data:`SSE_MODEL`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

PLAIN_MODEL = "bench-plain"
SSE_MODEL = "bench-sse"
PLAIN_PREFIX = "/plain/v1"
SSE_PREFIX = "/sse/v1"
CHAT_PATH = "/chat/completions"

#: The recorded stream served for ``"stream": true`` (see the module docstring).
DEFAULT_SSE_FIXTURE = (
    Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "openai" / "text_with_usage.sse"
)

COMPLETION = {
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

_MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Describe the image in one sentence."},
]


@dataclass(frozen=True)
class Bodies:
    """Upstream replies and client requests, as bytes."""

    plain_reply: bytes
    sse_reply: bytes
    plain_request: bytes
    sse_request: bytes


def load_bodies(sse_fixture: Path = DEFAULT_SSE_FIXTURE) -> Bodies:
    """The bench bodies; raises ``FileNotFoundError`` naming the fixture if it is missing."""
    return Bodies(
        plain_reply=json.dumps(COMPLETION, separators=(",", ":")).encode(),
        sse_reply=sse_fixture.read_bytes(),
        plain_request=json.dumps({"model": PLAIN_MODEL, "messages": _MESSAGES}).encode(),
        sse_request=json.dumps(
            {"model": SSE_MODEL, "messages": _MESSAGES, "stream": True}
        ).encode(),
    )
