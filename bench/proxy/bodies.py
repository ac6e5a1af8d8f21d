"""The fixed bodies of ``python -m bench proxy``: upstream replies and client requests.

Upstream replies (what a fast provider answers):

- non-stream: a real ``chat.completion`` object (:data:`tests.support.openai_bodies.COMPLETION`,
  the upstream double's, from OpenAI's API reference), about 1 KB;
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

from tests.support.openai_bodies import COMPLETION, FIXTURES

PLAIN_MODEL = "bench-plain"
SSE_MODEL = "bench-sse"
PLAIN_PREFIX = "/plain/v1"
SSE_PREFIX = "/sse/v1"
CHAT_PATH = "/chat/completions"

#: The recorded stream served for ``"stream": true`` (see the module docstring).
DEFAULT_SSE_FIXTURE = FIXTURES / "text_with_usage.sse"

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
