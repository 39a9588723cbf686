"""Veto records: a new lesson's veto file shows how to add one with that lesson's own ids."""

from __future__ import annotations

from pathlib import Path

from course.grading.rubric import load_rubric
from course.grading.vetoes import VetoRecord, add_veto, load_vetoes

SHARED = Path(__file__).resolve().parents[1] / "assignment" / "fixtures" / "shared_solutions"
RUBRIC = load_rubric(SHARED / "autograder" / "rubrics" / "lesson98.yml")


def test_a_new_veto_file_shows_examples_from_its_own_rubric(tmp_path):
    path = tmp_path / "vetoes" / "lesson98.yml"
    path.parent.mkdir()
    add_veto(path, RUBRIC, {"s1"}, VetoRecord("s1", "Q1", "no-root", "说不开方也行"))
    text = path.read_text("utf-8")
    assert "#   course report lesson98 --veto STUDENT Q1 no-root --note" in text
    assert "#     - {student: STUDENT, question: Q1, veto: no-root, note: 学生原话或问题所在}" in text
    assert "(question: scale, the code item's id)" in text
    assert "comm-volume" not in text and "Q2" not in text
    assert [(r.student, r.question, r.veto) for r in load_vetoes(path, RUBRIC, {"s1"})] == [("s1", "Q1", "no-root")]


def test_a_mistyped_student_is_refused_naming_the_nearest(tmp_path):
    import pytest

    from course.errors import CourseError

    path = tmp_path / "vetoes" / "lesson98.yml"
    path.parent.mkdir()
    with pytest.raises(CourseError) as refused:
        add_veto(path, RUBRIC, {"2026001", "2026002"}, VetoRecord("2026O01", "Q1", "no-root", "说不开方也行"))
    assert "got '2026O01' (did you mean 2026001?)" in str(refused.value)
