"""One piece of evidence that two students' work is related: never a decision, only what a grader should look at."""

from __future__ import annotations

from dataclasses import dataclass

from course.similarity.normalise import Span


@dataclass(frozen=True)
class Evidence:
    """What two students share in one item, how strong it is (0..1) and where it is in each one's text."""

    a: str
    b: str
    kind: str  # "rare-answer", "failing-checks", "text", "code"
    item: str  # the blank, question or "own code" it is about
    score: float
    reason: str
    text_a: str = ""
    text_b: str = ""
    spans_a: tuple[Span, ...] = ()
    spans_b: tuple[Span, ...] = ()
