"""Reading LoCoMo-format files (``locomo10.json`` and subsets of it).

A file is a JSON list of samples: ``sample_id``; ``conversation`` with ``speaker_a``,
``speaker_b``, ``session_N`` (turns with ``speaker``, ``dia_id`` like ``D3:7``, ``text``,
optional ``img_url`` / ``blip_caption``) and ``session_N_date_time`` (``1:56 pm on 8 May,
2023``); ``qa`` items with ``question``, ``answer`` or ``adversarial_answer``,
``evidence`` (dia ids) and ``category`` (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial).

Evidence ids are normalised: a string holding several ids (``"D8:6; D9:17"``) is split;
malformed ids (``"D10:"``) are dropped and counted in :attr:`Question.malformed`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DIA_ID = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    image_caption: str | None
    at: datetime


@dataclass(frozen=True)
class Question:
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]
    malformed: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    def sessions(self) -> list[list[Turn]]:
        """Turns grouped by session, in order."""
        grouped: dict[int, list[Turn]] = {}
        for turn in self.turns:
            grouped.setdefault(turn.session, []).append(turn)
        return [grouped[k] for k in sorted(grouped)]


def parse_session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> aware UTC datetime (LoCoMo gives no zone).

    Raises:
        ValueError: an unrecognised format.
    """
    cleaned = " ".join(text.replace(",", " ").split())
    for fmt in ("%I:%M %p on %d %B %Y", "%I:%M %p on %d %b %Y", "%H:%M on %d %B %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo session time {text!r}")


def evidence_ids(raw: list[str] | None) -> tuple[tuple[str, ...], int]:
    """Well-formed dia ids in order (deduplicated) and the count of malformed ones."""
    ids: list[str] = []
    malformed = 0
    for item in raw or ():
        for part in re.split(r"[;,\s]+", str(item)):
            if not part:
                continue
            if _DIA_ID.fullmatch(part):
                if part not in ids:
                    ids.append(part)
            else:
                malformed += 1
    return tuple(ids), malformed


def _session_number(key: str) -> int:
    """``N`` of a ``session_N`` key (one :data:`_SESSION` matches)."""
    match = _SESSION.match(key)
    assert match is not None, key
    return int(match.group(1))


def _conversation(sample: dict) -> Conversation:
    conv = sample["conversation"]
    turns: list[Turn] = []
    for key in sorted((k for k in conv if _SESSION.match(k)), key=_session_number):
        number = _session_number(key)
        at = parse_session_time(conv[f"{key}_date_time"])
        for turn in conv[key] or ():
            turns.append(Turn(turn["dia_id"], number, turn["speaker"], turn.get("text", ""),
                              turn.get("blip_caption"), at))
    questions = []
    for qa in sample.get("qa", ()):
        ids, malformed = evidence_ids(qa.get("evidence"))
        answer = qa.get("answer", qa.get("adversarial_answer", ""))
        questions.append(Question(qa["question"], str(answer), int(qa.get("category", 0)), ids, malformed))
    return Conversation(str(sample.get("sample_id", len(turns))), (conv.get("speaker_a", "A"), conv.get("speaker_b", "B")),
                        tuple(turns), tuple(questions))


def load_locomo(path: str | Path) -> list[Conversation]:
    """Every conversation of a LoCoMo-format file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = [data]
    return [_conversation(sample) for sample in data]
