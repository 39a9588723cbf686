"""The similarity engine: run every detector over one lesson's class and rank the pairs they find."""

from __future__ import annotations

from course.similarity.code_fingerprints import code_fingerprints
from course.similarity.collect import ClassWork
from course.similarity.rank import Pair, rank
from course.similarity.rare_answers import rare_answers
from course.similarity.text_overlap import text_overlap


def max_share(n: int) -> int:
    """How many students may share an answer or a gram for it still to count as rare: 2, or 2 % of the class."""
    return max(2, round(0.02 * n))


def find_pairs(work: ClassWork) -> list[Pair]:
    """Ranked pairs of students with shared rare wrong answers, shared own wording or shared own code."""
    limit = max_share(len(work.works))
    return rank(rare_answers(work, limit) + text_overlap(work, limit) + code_fingerprints(work, limit))
