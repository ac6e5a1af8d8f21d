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
    _group_sums: dict[tuple[str, str, int], float] = field(default_factory=lambda: defaultdict(float))
    _group_counts: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))

    def add(self, category: str, evidence: Sequence[str], ranked: Sequence[str], group: str | None = None) -> None:
        """One question's recall; ``group`` (a conversation's ``sample_id``) also counts it
        in that group's breakdown (:meth:`group_rows`)."""
        for label in ("all", category):
            self._counts[label] += 1
            if group is not None:
                self._group_counts[(group, label)] += 1
            for k in self.ks:
                recall = recall_at_k(evidence, ranked, k)
                self._sums[(label, k)] += recall
                if group is not None:
                    self._group_sums[(group, label, k)] += recall

    def group_rows(self) -> list[dict[str, Any]]:
        """Per group, in the order first seen: ``{"group", "questions", "multi-hop
        questions", "recall@5": ..., "multi-hop recall@5": ...}`` (multi-hop None when the
        group has no multi-hop question)."""
        groups = list(dict.fromkeys(g for g, _ in self._group_counts))
        out = []
        for g in groups:
            n, mh = self._group_counts[(g, "all")], self._group_counts.get((g, "multi-hop"), 0)
            row: dict[str, Any] = {"group": g, "questions": n, "multi-hop questions": mh}
            for k in self.ks:
                row[f"recall@{k}"] = self._group_sums[(g, "all", k)] / n
                row[f"multi-hop recall@{k}"] = self._group_sums[(g, "multi-hop", k)] / mh if mh else None
            out.append(row)
        return out

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
        groups = self.group_rows()
        if groups:
            lines.append(f"{'conversation':<12} {'n':>4} " + " ".join(f"{'R@' + str(k):>7}" for k in self.ks)
                         + f" {'mh n':>5} " + " ".join(f"{'mhR@' + str(k):>7}" for k in self.ks))
            for row in groups:
                mh = [row[f"multi-hop recall@{k}"] for k in self.ks]
                lines.append(f"{row['group']:<12} {row['questions']:>4} "
                             + " ".join(f"{100 * row[f'recall@{k}']:>7.1f}" for k in self.ks)
                             + f" {row['multi-hop questions']:>5} "
                             + " ".join(f"{100 * v:>7.1f}" if v is not None else f"{'-':>7}" for v in mh))
        return "\n".join(lines)
