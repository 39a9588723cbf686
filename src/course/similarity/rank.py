"""Rank pairs of students by the evidence they share: strongest first, every reason kept beside its score."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from course.similarity.evidence import Evidence

MIN_SCORE = 0.5  # pairs below this are not listed: a lone failing-check pattern, a faint text overlap


@dataclass(frozen=True)
class Pair:
    """Two students and all the evidence found between them."""

    a: str
    b: str
    score: float  # 1 - Π(1 - evidence score): more independent evidence, stronger pair
    evidence: tuple[Evidence, ...]

    @property
    def reasons(self) -> str:
        """The reasons, strongest first, on one line."""
        return "; ".join(e.reason for e in self.evidence)


def rank(evidence: list[Evidence], min_score: float = MIN_SCORE) -> list[Pair]:
    """Pairs with their evidence, strongest first (ties by name, so the order is stable)."""
    by_pair: dict[tuple[str, str], list[Evidence]] = defaultdict(list)
    for e in evidence:
        by_pair[tuple(sorted((e.a, e.b)))].append(e if e.a <= e.b else _swapped(e))
    pairs = []
    for (a, b), found in by_pair.items():
        remaining = 1.0
        for e in found:
            remaining *= 1.0 - e.score
        score = 1.0 - remaining
        if score >= min_score:
            pairs.append(Pair(a, b, round(score, 3), tuple(sorted(found, key=lambda e: -e.score))))
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


def strongest_pair(pairs: list[Pair]) -> dict[str, Pair]:
    """Each listed student's strongest pair."""
    out: dict[str, Pair] = {}
    for p in pairs:  # already strongest first
        out.setdefault(p.a, p)
        out.setdefault(p.b, p)
    return out


def _swapped(e: Evidence) -> Evidence:
    """The same evidence with its two students in the other order."""
    return Evidence(e.b, e.a, e.kind, e.item, e.score, e.reason, e.text_b, e.text_a, e.spans_b, e.spans_a)
