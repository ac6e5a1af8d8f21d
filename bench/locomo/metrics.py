"""Evidence recall@k, overall and per LoCoMo category.

For a question with evidence dia ids E and ranked retrieved dia ids R (duplicates count
once), recall@k = |E ∩ R[:k]| / |E|, averaged over questions that have at least one
well-formed evidence id (the LoCoMo paper's retrieval metric, Table 3).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


def recall_at_k(evidence: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """Share of ``evidence`` found in the first ``k`` distinct ids of ``ranked``."""
    if not evidence:
        raise ValueError("recall@k needs at least one evidence id")
    top: list[str] = []
    for item in ranked:
        if item not in top:
            top.append(item)
        if len(top) == k:
            break
    return len(set(evidence) & set(top)) / len(set(evidence))


@dataclass
class RecallTable:
    """Accumulates per-question recall for several k, by category."""

    ks: tuple[int, ...]
    _sums: dict[tuple[str, int], float] = field(default_factory=lambda: defaultdict(float))
    _counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, category: str, evidence: Sequence[str], ranked: Sequence[str]) -> None:
        for label in ("all", category):
            self._counts[label] += 1
            for k in self.ks:
                self._sums[(label, k)] += recall_at_k(evidence, ranked, k)

    def rows(self) -> list[dict[str, Any]]:
        """``[{"category", "questions", "recall@5": 0.61, ...}]``, "all" first."""
        labels = ["all", *sorted(c for c in self._counts if c != "all")]
        return [
            {"category": label, "questions": self._counts[label],
             **{f"recall@{k}": self._sums[(label, k)] / self._counts[label] for k in self.ks}}
            for label in labels if self._counts[label]
        ]

    def format(self) -> str:
        header = f"{'category':<12} {'n':>4} " + " ".join(f"{'R@' + str(k):>7}" for k in self.ks)
        lines = [header]
        for row in self.rows():
            lines.append(f"{row['category']:<12} {row['questions']:>4} "
                         + " ".join(f"{100 * row[f'recall@{k}']:>7.1f}" for k in self.ks))
        return "\n".join(lines)
