"""The released notebook students get: the seed's exercise verbatim, visible checks only, nothing hidden."""

from __future__ import annotations

import pytest

from course.lesson.parse_qmd import parse_lesson
from course.workflows.grade import run_nbgrader
from tests.assignment.hidden_checks import leaked
from tests.assignment.make_submissions import ROOT

pytestmark = pytest.mark.slow

SEED_LINES = [
    "        per_gpu = ______                      # 填空：优化器状态分片",
    "        per_gpu = ______                      # 填空：优化器状态 + 梯度分片",
    "        per_gpu = ______                      # 填空：三者全分片",
    "        return ______",
]


def by_id(nb) -> dict:
    """Cells by id."""
    return {c.id: c for c in nb.cells}


def test_the_answer_cell_is_the_lessons_exercise_blanks_and_comments_included(release_nb):
    exercise = parse_lesson(ROOT / "lessons" / "lesson05.qmd").cell("ex-zero-memory").source
    answer = by_id(release_nb)["ex-zero-memory"].source
    assert answer == exercise.rstrip("\n")
    assert all(line in answer.splitlines() for line in SEED_LINES)
    assert "NotImplementedError" not in "".join(c.source for c in release_nb.cells)


def test_nothing_hidden_reaches_the_release(released, release_nb):
    assert leaked((released / "release" / "lesson05" / "lesson05.ipynb").read_text("utf-8")) == []
    assert (
        "_course.equals(zero_memory_per_gpu(7_000_000_000, 8, 1), 38_500_000_000)"
        in by_id(release_nb)["test-formulas"].source
    )


def test_written_answers_start_empty_right_under_their_question(release_nb):
    ids = [c.id for c in release_nb.cells]
    for q in ("Q1", "Q2", "Q3"):
        assert ids[ids.index(f"answer-{q}") - 1] == f"question-{q}"
        assert by_id(release_nb)[f"answer-{q}"].source == ""


def test_students_can_validate_with_stock_nbgrader(released):
    demo = ROOT / "demo" / "classes" / "lesson05" / "zhangsan" / "lesson05.ipynb"
    proc = run_nbgrader(released, "validate", str(demo))
    assert "Success! Your notebook passes all the tests." in proc.stdout, proc.stdout[-2000:]
