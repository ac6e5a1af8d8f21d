"""The ``recall_memory`` tool call spliced into a conversation (seed 002 §3.1 stage two,
§4): pure builders for the tool definition, the result JSON and the two messages.

Wire shape (OpenAI Chat Completions, "function calling"): an assistant message with
``content: null`` and one ``tool_calls`` entry ``{"id", "type": "function", "function":
{"name": "recall_memory", "arguments": "<JSON text>"}}``, followed by a ``tool`` message
whose ``tool_call_id`` is that id. Ids look like OpenAI's: ``call_`` + 24 ASCII letters
and digits. The tool must also be listed in ``tools`` or providers reject the history.

Result JSON (seed 002 §4.2): ``{"profiles": [{"topic", "content", "updated_at"}],
"events": [{"date", "content"}]}`` with ISO dates (``YYYY-MM-DD``); profiles in
relevance order, events in chronological order. Seed 002 lists ``friend_id`` as a tool
parameter; here the friend comes from the caller's key (tenancy by construction), so the
definition does not offer it.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Sequence
from typing import Any

from gateway.chain.sdk import ScoredMemory, profile_topic

__all__ = ['CALL_ID_ALPHABET', 'RECALL_MEMORY_TOOL', 'TOOL_NAME', 'new_call_id', 'recall_payload', 'splice_messages']

TOOL_NAME = "recall_memory"
CALL_ID_ALPHABET = string.ascii_letters + string.digits

RECALL_MEMORY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Semantic search of the user's long-term memories relevant to the "
        "current conversation: profile facts (shared by every assistant of the user) and "
        "event gists (this assistant's conversations with the user).",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search keywords or the user's message."},
                "profile_topk": {"type": "integer", "description": "Most profile entries to return (default 5)."},
                "event_topk": {"type": "integer", "description": "Most event gists to return (default 5)."},
                "similarity_threshold": {"type": "number", "description": "Lowest similarity, 0-1 (default 0.5)."},
            },
            "required": ["query"],
        },
    },
}


def new_call_id() -> str:
    """``call_`` + 24 random ASCII letters and digits (the shape OpenAI's ids have)."""
    return "call_" + "".join(secrets.choice(CALL_ID_ALPHABET) for _ in range(24))


def recall_payload(profiles: Sequence[ScoredMemory], events: Sequence[ScoredMemory]) -> dict[str, Any]:
    """The seed 002 result object (see module docstring)."""
    return {
        "profiles": [
            {"topic": profile_topic(h.record), "content": h.record.text,
             "updated_at": h.record.updated_at.date().isoformat()}
            for h in profiles
        ],
        "events": [
            {"date": h.record.occurred_at.date().isoformat(), "content": h.record.text}
            for h in sorted(events, key=lambda h: h.record.occurred_at)
        ],
    }


def splice_messages(
    call_id: str, query: str, profiles: Sequence[ScoredMemory], events: Sequence[ScoredMemory]
) -> list[dict[str, Any]]:
    """``[assistant message with the recall_memory call, tool message with the result]``."""
    arguments = json.dumps({"query": query}, ensure_ascii=False)
    call = {"id": call_id, "type": "function", "function": {"name": TOOL_NAME, "arguments": arguments}}
    result = json.dumps(recall_payload(profiles, events), ensure_ascii=False)
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]
