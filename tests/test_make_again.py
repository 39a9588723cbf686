"""`make` on a fresh clone, again, after a real class is graded, and again: the course holds the real class only.

Runs the Makefile's own `all` target (the environment step left out: the copy uses this checkout's .venv) in a copy
of the project, as issue 34 asked: the demo grades in demo/, never in autograder/, so not a byte of the real course
changes in the third `make` (finding 2 of issue 34: `make` on a live course re-released with --force, regraded the
class, entered the demo graders' scores and recorded their veto again, in the real course); the real class has
graders' points and comments, a veto, reports and exports. It is made with the same commands an instructor types
(`course …` through its entry point, stock nbgrader as the course's tools start it), run in this process: `make` is
what is under test, and a Python start per command would only add seconds.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from tests.assignment.make_submissions import OUT
from tests.classes import submit
from tests.gradebooks import gradebook_rows
from tests.made_project import BIN, made_project, make
from tests.project_copy import copy_built

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.long(75)]
REAL = ["2026001", "2026002"]


def course_command(*argv: str) -> None:
    """`course ARGV` typed in the current folder, through the command line's own entry point."""
    from course.cli import main

    assert main(list(argv)) == 0, argv


def real_state(course: Path) -> dict:
    """What the real class is: the gradebook's rows and every file of the course root with its bytes (releases,
    submissions, the gradebook, veto records, reports and exports)."""
    files = {str(p.relative_to(course)): p.read_bytes() for p in sorted(course.rglob("*")) if p.is_file()}
    return {"gradebook": gradebook_rows(f"sqlite:///{course / 'gradebook.db'}"), "files": files}


def test_make_make_a_real_class_make(built_site, tmp_path, tmp_path_factory, monkeypatch):
    from course.grading.gradebook import gradebook
    from course.workflows.grade import run_nbgrader

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "no-hub-config"))
    made, first = made_project(tmp_path_factory)  # a fresh clone's first `make`, made once per run
    project = copy_built(made, tmp_path / "clone")
    course = project / "autograder"
    assert "The demo course demo/ rehearses the cycle" in first and (project / "demo" / "gradebook.db").is_file()
    assert not (course / "gradebook.db").exists() and not (course / "submitted").exists()
    second = make(project)
    assert "autograder/ (the course) left alone: release none, 0 submitted notebook(s), no gradebook" in second
    assert not (course / "gradebook.db").exists()

    # a real class: released, handed in, graded, scored by graders, reported and exported
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")  # as run() gives a command
    monkeypatch.chdir(project)
    run_nbgrader(course, "generate_assignment", "lesson05")
    for student in REAL:
        submit(course, student, OUT / "reference.ipynb")
    course_command("grade", "lesson05")
    with gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in REAL:
            for question in ("Q1", "Q2", "Q3"):
                grade = gb.find_grade(f"answer-{question}", "lesson05", "lesson05", student)
                grade.manual_score, grade.needs_manual_grade = 2, False
                comment = gb.find_comment(f"answer-{question}", "lesson05", "lesson05", student)
                comment.manual_comment = f"{student} {question}: 评分者的评语"
        gb.db.commit()
    course_command("report", "lesson05", "--veto", REAL[0], "Q1", "activation-shard", "--note", "原话")
    course_command("report")
    run_nbgrader(course, "export")
    graded = real_state(course)
    with open(course / "reports" / "lesson05.csv", encoding="utf-8") as f:
        assert [r["student"] for r in csv.DictReader(f)] == REAL
    with open(course / "reports" / "canvas.csv", encoding="utf-8") as f:
        assert sorted(r[3] for r in list(csv.reader(f))[2:]) == REAL  # SIS Login ID: the real class only
    with open(course / "reports" / "grades.csv", encoding="utf-8") as f:
        assert sorted(r["student_id"] for r in csv.DictReader(f)) == REAL

    assert (course / "vetoes" / "lesson05.yml").is_file()
    third = make(project)
    assert real_state(course) == graded  # not a byte of the course changed: gradebook, vetoes, reports, exports
    assert (
        f"autograder/ (the course) left alone: release lesson05, 2 submitted notebook(s), gradebook "
        f"sqlite:///{course / 'gradebook.db'} with 2 student(s), veto records and reports untouched"
    ) in third
