"""``python -m bench verbatim``: what verbatim mode stores, measured on labelled turns
(issue 11, item 4).

The labelled set is ``tests/fixtures/worth_remembering.jsonl`` (zh + en companion /
assistant chat written for this measurement, not from any benchmark): one object per
line, ``text`` (the user's turn), optional ``context`` (the assistant message it
answers), ``worth`` (true: something to remember) and, when worth, ``type`` (``profile``:
a lasting preference, trait or fact about the user, seed 002's profile; ``event``:
anything else). Each row goes through the product's own planner
(:func:`gateway.memorization.verbatim.verbatim_plan`, user turns only, small-talk skip
and profile filing on, the defaults): a row is *kept* when the plan stores a memory for
it, and its type is the scope of that memory.

Figures: precision and recall of "worth remembering" (positive class: worth), the
accuracy of profile/event on the worth rows the plan kept, and the same per language;
``--errors`` lists the rows it gets wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from gateway.memorization.jobs import Job, Turn
from gateway.memorization.verbatim import verbatim_plan

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "worth_remembering.jsonl"
AT = datetime(2026, 5, 1, 12, tzinfo=UTC)


def load_rows(path: Path = FIXTURE) -> list[dict[str, Any]]:
    """The labelled rows of ``path`` (JSON Lines)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def classify(row: dict[str, Any]) -> str | None:
    """What verbatim mode does with ``row``'s user turn: ``"profile"``, ``"event"`` or None
    (not stored). The turn answers ``row["context"]`` when given (the assistant's message
    before it, as the chat path and conversation ingest pass it)."""
    turn = Turn(role="user", text=row["text"], hash="h0", at=AT, index=1, context=row.get("context", ""))
    job = Job(job_id="b" * 32, user_id="u", friend_id="f", enqueued_at=AT, turns=(turn,))
    plan = verbatim_plan(job, [turn.text], ("user",), skip_small_talk=True, profile=True)
    memories = [op.memory for op in plan.ops if op.memory is not None]
    return memories[0].scope.value if memories else None


@dataclass
class Figures:
    """Counts over a set of rows; the ratios are properties."""

    tp: int = 0  # worth, kept
    fp: int = 0  # not worth, kept
    fn: int = 0  # worth, dropped
    tn: int = 0  # not worth, dropped
    typed_right: int = 0  # worth and kept with the expected type
    errors: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def type_accuracy(self) -> float:
        return self.typed_right / self.tp if self.tp else 1.0

    def line(self, name: str) -> str:
        return (f"{name:<8} rows {self.tp + self.fp + self.fn + self.tn:>3}  worth {self.tp + self.fn:>3}  "
                f"precision {self.precision:.3f}  recall {self.recall:.3f}  "
                f"profile/event accuracy {self.type_accuracy:.3f} ({self.typed_right}/{self.tp})")


def measure(rows: list[dict[str, Any]]) -> dict[str, Figures]:
    """Figures for ``all`` rows, per ``lang`` and per ``split`` (``dev``: the rows the
    rules were written against; ``held-out``: rows written after the rules, measured
    before any change)."""
    out: dict[str, Figures] = {"all": Figures()}
    for row in rows:
        got = classify(row)
        for key in ("all", row.get("lang", "?"), row.get("split", "dev")):
            f = out.setdefault(key, Figures())
            if row["worth"] and got:
                f.tp += 1
                f.typed_right += got == row["type"]
                if got != row["type"] and key == "all":
                    f.errors.append(f"type {got} (expected {row['type']}): {row['text']!r}")
            elif row["worth"]:
                f.fn += 1
                if key == "all":
                    f.errors.append(f"dropped (worth): {row['text']!r} after {row.get('context', '')!r}")
            elif got:
                f.fp += 1
                if key == "all":
                    f.errors.append(f"kept as {got} (not worth): {row['text']!r} after {row.get('context', '')!r}")
            else:
                f.tn += 1
    return out


@click.command("verbatim")
@click.option("--fixture", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=FIXTURE,
              show_default=True, help="Labelled turns (JSON Lines).")
@click.option("--errors", is_flag=True, help="List the rows verbatim mode gets wrong.")
def command(fixture: Path, errors: bool) -> None:
    """Precision / recall of what verbatim mode stores, and its profile/event accuracy."""
    figures = measure(load_rows(fixture))
    for name in ("all", *sorted(k for k in figures if k != "all")):
        click.echo(figures[name].line(name))
    if errors:
        for e in figures["all"].errors:
            click.echo("  " + e)
