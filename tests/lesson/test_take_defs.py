"""take_defs: a solution cell keeps only the definitions it names from its included solutions module."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.errors import CourseError, Location
from course.lesson.parse_qmd import parse_lesson
from course.lesson.take_defs import take_definitions, top_level_names

SHARED = Path(__file__).resolve().parents[1] / "assignment" / "fixtures" / "shared_solutions"
MODULE = (SHARED / "solutions" / "lesson98.py").read_text("utf-8")
WHERE = Location("lesson98.qmd", 3, "solution-x")


def test_named_definitions_keep_their_comments_and_the_module_spacing():
    taken = take_definitions(MODULE, ["SCALE", "scale"], WHERE)
    assert taken.startswith("SCALE = 2\n\n\n# 第一题：缩放\ndef scale(x: float) -> float:")
    assert taken.endswith("    return SCALE * x")
    assert "helper_not_in_any_exercise" not in taken and "rms" not in taken and "__main__" not in taken


def test_imports_are_taken_by_the_name_they_bind():
    taken = take_definitions(MODULE, ["math", "rms"], WHERE)
    assert taken.splitlines()[0] == "import math" and "def rms(values: list) -> float:" in taken
    assert "SCALE" not in taken


def test_a_name_the_module_lacks_is_an_error_listing_what_it_has():
    with pytest.raises(
        CourseError,
        match=r"lesson98.qmd, line 3, cell solution-x: course_defs names rmss, which the "
        r"included module does not define at top level; expected some of: "
        r"math, SCALE, scale, helper_not_in_any_exercise, rms",
    ):
        take_definitions(MODULE, ["rms", "rmss"], WHERE)


def test_blanks_are_plain_names_to_the_exercise():
    assert top_level_names("X = 1\ndef f(a):\n    return ______\n") == ["X", "f"]


def test_two_solution_cells_share_one_module_and_each_matches_its_exercise():
    lesson = parse_lesson(SHARED / "lessons" / "lesson98.qmd")
    for name, fill in (("scale", "SCALE * x"), ("rms", "math.sqrt(sum(v * v for v in values) / len(values))")):
        exercise, solution = lesson.cell(f"ex-{name}").source, lesson.cell(f"solution-{name}").source
        assert solution == exercise.replace("______", fill)


def test_course_defs_belongs_on_a_solution_cell(tmp_path):
    qmd = tmp_path / "lesson97.qmd"
    qmd.write_text(
        '---\ntitle: "t"\nlesson: 97\njupyter: python3\n---\n\n```{python}\n#| label: ex-a\n'
        "#| course_role: exercise\n#| course_defs: [a]\ndef a():\n    return ______\n```\n",
        "utf-8",
    )
    with pytest.raises(
        CourseError,
        match=r"lesson97.qmd, line 7, cell ex-a: cell option course_role: "
        r"expected 'solution', got 'exercise'",
    ):
        parse_lesson(qmd)
