"""A notebook grading cannot take as the assignment — the lesson's reading notebook, the assignment under another
name — is scored 0 in the gradebook with its reason and reported INCOMPLETE, never a silent FAIL or a 0 in the LMS
exports (issue 34, finding 3)."""

from __future__ import annotations

import csv
import io
import shutil

import nbformat
import pytest

from tests.assignment.make_submissions import OUT
from tests.classes import submit
from tests.conftest import ROOT

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.fixture(scope="module")
def graded(released, built_site, tmp_path_factory):
    """A course (lessons/ beside autograder/) whose class handed in the notes notebook, the assignment under its site
    name of old, and the right file, graded by `course grade`; then both reports written."""
    from course.grading.report import make_report
    from course.grading.semester import make_semester_report
    from course.workflows.grade import grade_assignment

    project = tmp_path_factory.mktemp("wrong-notebook")
    shutil.copytree(released.parent / "lessons", project / "lessons")
    shutil.copy(ROOT / "lessons" / "lesson05.qmd", project / "lessons")
    root = project / "autograder"
    shutil.copytree(released, root)
    notes = nbformat.read(built_site / "student" / "lesson05-notes.ipynb", as_version=4)
    nbformat.write(notes, project / "notes.ipynb")
    submit(root, "notes", project / "notes.ipynb")
    submit(root, "misnamed", OUT / "reference.ipynb", "lesson05-assignment.ipynb")
    submit(root, "reference", OUT / "reference.ipynb")
    run = grade_assignment(root, "lesson05")
    return run, make_report(project, "lesson05"), make_semester_report(project)


def test_the_reading_notebook_is_not_graded_as_the_assignment(graded):
    run, report, _ = graded
    notes = run.student("notes")
    assert notes.ungradable and "not the assignment notebook: this is the lesson's reading notebook" in notes.ungradable
    assert not [p for p in notes.problems if "cell was deleted" in str(p)]  # not 12 deleted-cell flags
    decided = {s.submission.student: s for s in report.students}
    assert decided["notes"].result == "INCOMPLETE" and "reading notebook" in decided["notes"].reasons[0]


def test_a_misnamed_assignment_is_incomplete_with_the_reason_not_fail_0(graded):
    _, report, semester = graded
    decided = {s.submission.student: s for s in report.students}
    assert decided["misnamed"].result == "INCOMPLETE" and decided["reference"].result == "FAIL"  # 4/10, Q1–Q3 empty
    assert "expected lesson05.ipynb, found lesson05-assignment.ipynb" in decided["misnamed"].reasons[0]
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO(report.csv.read_text("utf-8")))}
    assert rows["misnamed"]["result"] == "INCOMPLETE"
    canvas = list(csv.DictReader(io.StringIO(semester.canvas.read_text("utf-8"))))
    column = next(c for c in canvas[0] if c.startswith("lesson05"))
    marks = {r["SIS Login ID"]: r[column] for r in canvas if r.get("SIS Login ID")}
    assert marks["misnamed"] == "" and marks["notes"] == ""  # no 0 sent to the LMS while the file is wrong
