"""What the memory model must answer, as pydantic models (validated by
``ModelClient.complete_json``; a mismatch is a ``ModelOutputError``: one repair call,
then dead-lettered). Unknown keys are ignored; numbers outside [0, 1] are clamped rather than
rejected, since a model that says importance 1.2 still meant "vital"."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


class Decision(_Answer):
    """Seed 003 decision: is anything here worth remembering?"""

    should_remember: bool = Field(description="True when the exchange holds lasting information.")
    reason: str = Field("", description="Short justification.")


class ExtractedFact(_Answer):
    """One atomic fact."""

    text: str = Field("", description="The fact, third person, self-contained (empty and "
                      "placeholder texts are dropped, not an error: gateway.memorization.facts).")
    speaker: Literal["user", "assistant"] = Field("user", description="Whose message it comes from.")
    scope: Literal["profile", "event"] = Field("event", description="profile: lasting; event: happened/planned.")
    type: Literal["episodic", "semantic", "trait", "goal", "preference"] = Field("semantic", description="Kind.")
    slot: str | None = Field(None, max_length=64, description="Preference slot (technical_depth, language, ...).")
    value: str | None = Field(None, max_length=200, description="Preference value.")
    keywords: list[str] = Field(default_factory=list, description="Search terms.")
    importance: float = Field(0.5, description="0 trivial .. 1 vital.")
    emotion: str | None = Field(None, description="One word, or null.")
    occurred: str | None = Field(None, description="ISO date or the relative expression as said.")

    _importance = field_validator("importance")(_clamp)


class Extraction(_Answer):
    """Facts of one exchange and the conversation's updated gist."""

    facts: list[ExtractedFact] = Field(default_factory=list, description="Atomic facts.")
    gist: str | None = Field(None, description="Updated summary of the conversation so far.")


class ReconcileDecision(_Answer):
    """mem0's update step for one fact."""

    fact: int = Field(ge=0, description="Index of the new fact.")
    event: Literal["ADD", "UPDATE", "DELETE", "NOOP"] = Field(description="What to do.")
    target: str | None = Field(None, description="Short id (m1, m2, ...) of the existing memory.")
    text: str | None = Field(None, description="UPDATE: the merged, up-to-date memory text.")


class Reconciliation(_Answer):
    decisions: list[ReconcileDecision] = Field(default_factory=list, description="One per fact.")


class Inference(_Answer):
    """Seed 000 P4: one conclusion over several memories."""

    conclusion: str = Field(min_length=1, description="The conclusion.")
    confidence: float = Field(description="0..1.")
    based_on: list[str] = Field(default_factory=list, alias="basedOn", description="Short ids of memories.")

    _confidence = field_validator("confidence")(_clamp)


class Inferences(_Answer):
    inferences: list[Inference] = Field(default_factory=list, description="Conclusions.")
