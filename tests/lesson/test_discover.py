"""Lessons are found, not registered: every lessons/lessonNN.qmd with its data folder lessons/lessonNN/."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.errors import CourseError
from course.lesson.discover import discover_lessons

ROOT = Path(__file__).resolve().parents[2]


def lesson(folder: Path, name: str, number: int) -> Path:
    """A lesson file with a front matter number."""
    path = folder / f"{name}.qmd"
    path.write_text(f"---\ntitle: t\nlesson: {number}\n---\n", "utf-8")
    return path


def test_the_real_lessons_are_found_with_their_data():
    [five] = [f for f in discover_lessons(ROOT / "lessons") if f.stem == "lesson05"]
    assert five.number == 5 and five.checks.name == "checks.yml" and five.figures.name == "figures.py"


def test_lessons_come_in_number_order_and_data_is_optional(tmp_path):
    lesson(tmp_path, "lesson12", 12)
    lesson(tmp_path, "lesson06", 6)
    (tmp_path / "notes.qmd").write_text("x", "utf-8")
    found = discover_lessons(tmp_path)
    assert [f.stem for f in found] == ["lesson06", "lesson12"] and found[0].checks is None


def test_two_lessons_with_one_number_name_the_file_and_line(tmp_path):
    lesson(tmp_path, "lesson05", 5)
    lesson(tmp_path, "lesson06", 5)
    with pytest.raises(CourseError) as err:
        discover_lessons(tmp_path)
    assert str(err.value) == (
        "lesson06.qmd, line 3: front matter says lesson: 5, the file name says lesson 6; "
        "lesson05.qmd already is lesson 5; expected lesson: 6"
    )


def test_a_data_folder_without_its_lesson_is_named(tmp_path):
    lesson(tmp_path, "lesson05", 5)
    (tmp_path / "lesson07").mkdir()
    with pytest.raises(
        CourseError,
        match=r"lesson07: a lesson data folder without its lesson: expected "
        r"lesson07.qmd beside it",
    ):
        discover_lessons(tmp_path)
