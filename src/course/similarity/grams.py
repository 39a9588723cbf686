"""Shared grams between students, found through an inverted index: no all-pairs comparison.

A gram (a character n-gram of an answer, a code fingerprint) that the boilerplate contains, or that more
than MAX_SHARE students share, is no evidence and is dropped; every other gram links the few students who
have it. Candidate pairs come only from those buckets, so the work grows with the class, not its square.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

from course.similarity.normalise import Span


@dataclass(frozen=True)
class SharedGrams:
    """Two students' shared grams: how many, their own totals, and where they lie in each one's text."""

    a: str
    b: str
    shared: int
    total_a: int
    total_b: int
    spans_a: tuple[Span, ...]
    spans_b: tuple[Span, ...]

    @property
    def containment(self) -> float:
        """Share of the smaller answer's grams found in the other."""
        return self.shared / max(1, min(self.total_a, self.total_b))


def shared_grams(
    grams: Mapping[str, Mapping[int, list[Span]]], boilerplate: set[int], max_share: int
) -> list[SharedGrams]:
    """Each pair of students with a rare gram in common, with the counts and spans of all they share."""
    kept = {s: {g: sp for g, sp in gs.items() if g not in boilerplate} for s, gs in grams.items()}
    index: dict[int, list[str]] = defaultdict(list)
    for student, gs in kept.items():
        for g in gs:
            index[g].append(student)
    common = {g for g, owners in index.items() if len(owners) > max_share}
    counts: dict[tuple[str, str], list[int]] = defaultdict(list)
    for g, owners in index.items():
        if g not in common:
            for a, b in combinations(sorted(owners), 2):
                counts[(a, b)].append(g)
    out = []
    for (a, b), shared in counts.items():
        total_a = sum(g not in common for g in kept[a])
        total_b = sum(g not in common for g in kept[b])
        out.append(
            SharedGrams(
                a,
                b,
                len(shared),
                total_a,
                total_b,
                merge_spans(s for g in shared for s in kept[a][g]),
                merge_spans(s for g in shared for s in kept[b][g]),
            )
        )
    return out


def merge_spans(spans) -> tuple[Span, ...]:
    """Overlapping or touching spans joined, in order."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((s, e) for s, e in merged)
