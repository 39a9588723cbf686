"""The answer cell: solution regions exactly where the exercise has blanks; stubs give back the exercise."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course.assignment.answer_cell import BEGIN, END, answer_cell
from course.errors import CourseError
from course.lesson.model import CodeCell, ExercisePair, Lesson, exercise_pairs
from course.lesson.parse_qmd import parse_lesson
from course.nbgrader_hooks.stubs import ClearSolutionsWithStubs

ROOT = Path(__file__).resolve().parents[2]
LESSON = Lesson(Path("lessons/lesson99.qmd"), {"title": "t"}, ())


def pair(exercise: str, solution: str) -> ExercisePair:
    """An exercise/solution pair from two sources."""
    return ExercisePair(
        "x",
        CodeCell(10, "python", {"label": "ex-x"}, exercise),
        CodeCell(20, "python", {"label": "solution-x"}, solution),
    )


def release(source: str, stubs) -> str:
    """What nbgrader's release makes of the answer cell."""
    cell = nbformat.v4.new_code_cell(
        source,
        metadata={
            "course": {"stubs": list(stubs)},
            "nbgrader": {"solution": True, "grade": False, "grade_id": "ex-x", "locked": False},
        },
    )
    ClearSolutionsWithStubs().preprocess_cell(cell, {"language": "python"}, 0)
    return cell.source


def test_each_blank_line_becomes_one_region_indented_like_the_solution():
    cell = answer_cell(
        LESSON,
        pair("def f(a):\n    x = ______  # 填空\n    return x\n", "def f(a):\n    x = a + 1  # 填空\n    return x\n"),
    )
    assert cell.source.splitlines() == [
        "def f(a):",
        f"    {BEGIN}",
        "    x = a + 1  # 填空",
        f"    {END}",
        "    return x",
    ]
    assert cell.stubs == ("    x = ______  # 填空",)


def test_lesson05_release_is_the_exercise_exactly():
    lesson = parse_lesson(ROOT / "lessons" / "lesson05.qmd")
    p = next(p for p in exercise_pairs(lesson) if p.name == "zero-memory")
    cell = answer_cell(lesson, p)
    assert len(cell.stubs) == 5 and all("______" in s for s in cell.stubs)
    assert cell.source.count(BEGIN) == 5 and "______" not in cell.source
    assert release(cell.source, cell.stubs) == p.exercise.source.rstrip("\n")


def test_a_difference_outside_the_blanks_is_an_authoring_error():
    with pytest.raises(CourseError, match=r"lesson99.qmd, line 10, cell ex-x: exercise line 2 differs"):
        answer_cell(LESSON, pair("a = 1\nb = 2\nc = ______\n", "a = 1\nb = 3\nc = 4\n"))


def test_an_exercise_without_blanks_is_an_error():
    with pytest.raises(CourseError, match="no blank"):
        answer_cell(LESSON, pair("a = 1\n", "a = 1\n"))


def test_a_whole_shared_module_against_one_exercise_names_the_course_defs_fix():
    module = "def f(a):\n    return a + 1\n\ndef g(b):\n    return b * 2\n"
    with pytest.raises(
        CourseError,
        match=r"expected the solution to fill the exercise.s blanks only, but solution-x "
        r"defines g, which ex-x does not\. Fix: if one solutions module backs "
        r"several exercises, keep its whole-file include and add the line "
        r"`#\| course_defs: \[f\]` to solution-x",
    ):
        answer_cell(LESSON, pair("def f(a):\n    return ______\n", module))


def test_any_other_mismatch_says_to_align_the_line_or_blank_it():
    with pytest.raises(
        CourseError,
        match=r"Fix: make this line of ex-x the same as in solution-x .* or put ______ where "
        r"students write",
    ):
        answer_cell(LESSON, pair("a = 1\nb = 2\nc = ______\n", "a = 1\nb = 3\nc = 4\n"))
