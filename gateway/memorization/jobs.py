"""The memorization job: what the request path hands the workers.

A job is one finished chat exchange of one tenant (or, ``kind="inference"``, a request to
draw conclusions over the tenant's memories). It is written to the stream as three fields
by the enqueue script (``h`` header JSON, ``e`` forget epoch read atomically at enqueue,
``t`` JSON array of the turns the dedupe set had not seen) and, once retried, as one full
JSON field ``j``. :func:`job_from_fields` reads both forms.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Turn(_Frozen):
    """One message of the exchange that was not memorized before."""

    role: Literal["user", "assistant"] = Field(description="Who said it.")
    text: str = Field(description="The message text (redacted by the worker before use).")
    hash: str = Field(description="Dedupe hash (:func:`gateway.memorization.dedupe.turn_hash`).")
    at: AwareDatetime = Field(description="Message time: when the gateway received it (UTC).")
    index: int = Field(description="Position in the request's messages; the reply is len(messages).")
    context: str = Field(
        "", description="The end of the message before this one (at most capture.CONTEXT_CHARS "
        "characters; empty for the first): stored as the memory's context.",
    )
    context_after: str = Field(
        "", description="The start of the message after this one in the same job (at most "
        "capture.CONTEXT_AFTER_CHARS characters; empty for the last): stored as the memory's context_after.",
    )
    name: str = Field("", description="The speaker's name (the message's `name`), or empty; "
                      "verbatim memories keep it in their text as `name: text`.")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="The caller's `metadata` of the source message (conversation "
        "ingest): memories formed from the turn keep it in `metadata.source_messages`.",
    )


class JobHeader(_Frozen):
    """Everything but the turns and the epoch (those the enqueue script adds)."""

    job_id: str = Field(description="Stable id across retries (hex); memory ids derive from it.")
    kind: Literal["turns", "inference"] = Field("turns", description="What the worker does.")
    user_id: str = Field(description="Tenant user.")
    friend_id: str = Field(description="Tenant friend (persona).")
    conversation_id: str = Field("", description="Conversation (session) the turns belong to.")
    request_id: str = Field("", description="Gateway request id (x-request-id).")
    model: str | None = Field(None, description="Chat model of the exchange.")
    traceparent: str | None = Field(None, description="W3C traceparent of the request, for span links.")
    partial: bool = Field(False, description="The client abandoned the stream: the reply is cut short.")
    enqueued_at: AwareDatetime = Field(description="When the job was enqueued (UTC).")
    client_metadata: dict[str, str] = Field(default_factory=dict, description="The request's `metadata` strings.")
    inference: bool = Field(
        True, description="The user's `inference` memory setting at enqueue (gateway.settings.memory_settings): false, "
        "this conversation never triggers an inference job.",
    )


class Job(JobHeader):
    """A job as workers see it."""

    epoch: int = Field(0, description="The user's forget epoch when the job was enqueued.")
    turns: tuple[Turn, ...] = Field((), description="New turns, in message order.")
    attempt: int = Field(0, ge=0, description="Failed attempts so far.")
    last_error: str | None = Field(None, description="Error of the last failed attempt.")

    @property
    def enqueued_ms(self) -> int:
        return int(self.enqueued_at.timestamp() * 1000)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def job_from_fields(fields: dict) -> Job:
    """A :class:`Job` from a stream entry's fields (bytes or str keys and values).

    Raises:
        ValueError: neither form, or invalid JSON / schema (pydantic ValidationError).
    """
    plain = {_text(k): _text(v) for k, v in fields.items()}
    if "j" in plain:
        return Job.model_validate_json(plain["j"])
    if "h" not in plain:
        raise ValueError(f"stream entry has no job fields: {sorted(plain)}")
    header = json.loads(plain["h"])
    return Job.model_validate({**header, "epoch": int(plain.get("e") or 0), "turns": json.loads(plain.get("t") or "[]")})


def job_fields(job: Job) -> dict[str, str]:
    """Stream fields of a job re-enqueued by a worker (retry, inference)."""
    return {"j": job.model_dump_json()}


def retried(job: Job, error: str) -> Job:
    """``job`` after one more failed attempt (a new value; ``job`` is unchanged)."""
    return job.model_copy(update={"attempt": job.attempt + 1, "last_error": error[:2000]})
