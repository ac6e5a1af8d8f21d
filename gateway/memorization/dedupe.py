"""Recognising turns already memorized, sans-IO.

Clients resend the whole history with every request. Each user/assistant message gets a
content hash; the tenant's Redis set of hashes (``QueueKeys.seen``) is checked and
updated by the enqueue script in the same round trip as the XADD, so only turns never
seen before reach a job.

The hash covers the conversation id, the role, the text and the *occurrence* (how many
identical (role, text) messages came before it in this conversation): a user who says
"yes" twice in one conversation has said two things, while the same history resent is
recognised message by message. The same sentence in another conversation is a new turn;
extract mode's reconcile step then makes it a NOOP.
"""

from __future__ import annotations

import hashlib


def turn_hash(conversation_id: str, role: str, text: str, occurrence: int) -> str:
    """32 hex digits of SHA-256 over the four parts, ``\\x1f``-separated.

    >>> turn_hash("c1", "user", "hi", 0) == turn_hash("c1", "user", "hi", 0)
    True
    >>> turn_hash("c1", "user", "hi", 0) == turn_hash("c1", "user", "hi", 1)
    False
    """
    data = "\x1f".join((conversation_id, role, str(occurrence), text)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


def occurrences(messages: list[tuple[str, str]]) -> list[int]:
    """For each ``(role, text)``, how many identical ones came before it."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for pair in messages:
        n = seen.get(pair, 0)
        seen[pair] = n + 1
        out.append(n)
    return out


def hashed_turns(conversation_id: str, messages: list[tuple[str, str]], first: int = 0) -> list[str]:
    """:func:`turn_hash` of each ``(role, text)`` from index ``first`` on (occurrences
    counted over all of them: the SHA-256 work is only spent on the candidates)."""
    counts = occurrences(messages)
    return [turn_hash(conversation_id, role, text, n)
            for (role, text), n in zip(messages[first:], counts[first:], strict=True)]
