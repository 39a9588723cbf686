"""`course report lessonNN` shows the similarity evidence and each student's strongest pair (CSV column)."""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.cli import main
from course.grading.rubric import load_rubric
from course.similarity.collect import collect
from tests.similarity.planted_class import STUDENTS, write_class

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own add_submission
FAILS_FORMULAS = {"h6", "h7", "h8", "q3-a", "blank-a", "blank-b"}  # the wrong blanks fail the formulas item


@pytest.fixture
def graded(tmp_path, monkeypatch):
    """The planted class with a SQLite gradebook (nbgrader's default place) holding its scores."""
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "no-hub-config"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    project = write_class(tmp_path / "project")
    points = load_rubric(project / "autograder" / "rubrics" / "lesson05.yml").grade_ids()
    with Gradebook(f"sqlite:///{project / 'autograder' / 'gradebook.db'}") as gb:
        gb.add_assignment("lesson05")
        gb.add_notebook("lesson05", "lesson05")
        for grade_id, max_score in points.items():
            gb.add_grade_cell(grade_id, "lesson05", "lesson05", max_score=max_score,
                              cell_type="code" if grade_id.startswith("test-") else "markdown")
            if not grade_id.startswith("test-"):
                gb.add_solution_cell(grade_id, "lesson05", "lesson05")
        for student in STUDENTS:
            gb.add_student(student)
            gb.add_submission("lesson05", student)
            for grade_id, max_score in points.items():
                grade = gb.find_grade(grade_id, "lesson05", "lesson05", student)
                failed = grade_id == "test-formulas" and student in FAILS_FORMULAS
                if grade_id.startswith("test-"):
                    grade.auto_score = 0 if failed else max_score
                else:
                    grade.manual_score = max_score
                grade.needs_manual_grade = False
    return project


def test_report_has_the_section_and_the_strongest_pair_column(graded):
    """The copied pair's students name each other in similar_pair; honest students' cells stay empty."""
    assert main(["report", "lesson05", "--root", str(graded)]) == 0
    reports = graded / "autograder" / "reports"
    rows = {r["student"]: r for r in csv.DictReader((reports / "lesson05.csv").open(encoding="utf-8"))}
    assert rows["para-a"]["similar_pair"].startswith("para-b (")
    assert rows["blank-b"]["similar_pair"].startswith("blank-a (") and "blank 2" in rows["blank-b"]["similar_pair"]
    assert rows["h1"]["similar_pair"] == "" and rows["h7"]["similar_pair"] == ""
    html = (reports / "lesson05.html").read_text("utf-8")
    assert 'class="similarity"' in html and 'data-a="helper-a" data-b="helper-b"' in html and "<mark>" in html


def test_failing_check_patterns_come_from_the_gradebook(graded):
    """The gradebook's scores give each student's failing code items; a pattern six students share is no evidence."""
    work = {w.student: w for w in collect(graded, "lesson05").works}
    assert work["blank-a"].failing == ("formulas",) and work["h1"].failing == ()
