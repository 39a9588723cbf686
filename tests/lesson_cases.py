"""The lessons that lesson-generic tests run over: every lesson course.lesson.discover finds in this project.

A test of behaviour every lesson must have (no answer leaks, notebooks that run, images that render, pages that
read well) takes `stem` through @each_lesson and so runs once per discovered lesson; adding a lesson to lessons/
adds its cases. tests/test_adding_a_lesson.py reruns exactly these (marker `lesson_generic`) on a copy of the
project with a lesson of its own added. Tests of lesson 5's content name lesson 5 instead.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from course.lesson.discover import discover_lessons

ROOT = Path(__file__).resolve().parents[1]
LESSONS = [f.stem for f in discover_lessons(ROOT / "lessons")]


GRADED = [f.stem for f in discover_lessons(ROOT / "lessons") if f.checks is not None]


def each_lesson(test):
    """Run TEST once per discovered lesson (argument `stem`), marked lesson_generic."""
    return pytest.mark.lesson_generic(pytest.mark.parametrize("stem", LESSONS)(test))


def each_graded_lesson(test):
    """Run TEST once per lesson with checks (so an nbgrader assignment), marked lesson_generic."""
    return pytest.mark.lesson_generic(pytest.mark.parametrize("stem", GRADED)(test))


@cache
def lesson(stem: str):
    """The parsed lesson lessons/STEM.qmd."""
    from course.lesson.parse_qmd import parse_lesson

    return parse_lesson(ROOT / "lessons" / f"{stem}.qmd")


def solutions(stem: str) -> dict[str, str]:
    """Each exercise's label → its reference solution's code, as a student who solved it would hand it in."""
    from course.lesson.model import exercise_pairs

    return {pair.exercise.label: pair.solution.source for pair in exercise_pairs(lesson(stem))}


def has_assignment(stem: str) -> bool:
    """Whether the lesson is graded (checks.yml beside it), so the student site offers its nbgrader release."""
    return stem in GRADED
