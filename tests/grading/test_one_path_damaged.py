"""One grading path for damaged and repaired submissions: stock `nbgrader autograde` and `course grade` give the
same gradebook (a damaged file scores 0 with its reason, never a missing row), the same flags and the same reasons
in the grade report that `course report` shows (INCOMPLETE for a file grading could not take)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.grading.gradebook import configured_gradebook
from course.grading.report import make_report
from course.workflows.grade import GradeOptions, grade_assignment, run_nbgrader
from tests.assignment.make_submissions import EXPECTED
from tests.classes import submit
from tests.grading.test_one_path import SMALL, course, graded, notebook_of, small_limits_config

pytestmark = [pytest.mark.long(30), pytest.mark.slow, pytest.mark.sandbox]

# case → words its reason must contain
DAMAGED = {
    "invalid-json": "not valid JSON",
    "renamed-notebook": "expected lesson05.ipynb, found lesson05 (1).ipynb",
    "not-utf8": "not UTF-8",
    "not-a-notebook": "not a valid Jupyter notebook",
    "no-notebook": "no lesson05.ipynb submitted",
    "huge-output": "over the 20 MB limit",
}
REPAIRED = {
    "edited-test-cell": "cell test-fp32-accum: read-only cell was edited",
    "deleted-test-cell": "cell test-comm-volume: cell was deleted; re-inserted",
    "stripped-metadata": "cell test-fp32-accum: nbgrader metadata was missing",
}


def damaged_class(released: Path, where: Path, *, config: str = "") -> Path:
    """A copy of the released course with the reference, every repaired case and every kind of damaged file."""
    root = course(released, where, ["reference", *REPAIRED, "invalid-json", "not-utf8"], config=config)
    submit(root, "renamed-notebook", notebook_of("renamed-notebook"), EXPECTED["renamed-notebook"]["file"])
    folder = root / "submitted"
    (folder / "not-a-notebook" / "lesson05").mkdir(parents=True)
    (folder / "not-a-notebook" / "lesson05" / "lesson05.ipynb").write_text('{"cells": 3, "metadata": {}}', "utf-8")
    (folder / "no-notebook" / "lesson05").mkdir(parents=True)
    (folder / "no-notebook" / "lesson05" / "notes.txt").write_text("forgot the notebook", "utf-8")
    huge = folder / "huge-output" / "lesson05"
    huge.mkdir(parents=True)
    text = notebook_of("reference").read_text("utf-8")
    padding = '"outputs": [{"output_type": "stream", "name": "stdout", "text": "' + "x" * (21 * 2**20) + '"}],'
    (huge / "lesson05.ipynb").write_text(text.replace('"outputs": [],', padding, 1), "utf-8")
    return root


@pytest.fixture(scope="module")
def both(released, tmp_path_factory):
    """The class graded by stock `nbgrader autograde` (course config, small limits) and by `course grade`."""
    stock = damaged_class(released, tmp_path_factory.mktemp("stock"), config=small_limits_config())
    proc = run_nbgrader(stock, "autograde", "lesson05", "--force", check=False)
    ours = damaged_class(released, tmp_path_factory.mktemp("ours"))
    grade_assignment(ours, "lesson05", GradeOptions(jobs=2, limits=SMALL))
    return stock, ours, proc


def outcomes(root: Path) -> dict:
    """Student → (flagged, problems) as the grade report holds them."""
    data = json.loads((root / "reports" / "lesson05-grade.json").read_text("utf-8"))
    return {student: (o["flagged"], o["problems"]) for student, o in data.items()}


def waiting(root: Path) -> dict:
    """Student → the grade cells nbgrader still marks as needing a grader."""
    with Gradebook(configured_gradebook(root).url) as gb:
        return {
            s.student.id: sorted(g.name for nb in s.notebooks for g in nb.grades if g.needs_manual_grade)
            for s in gb.assignment_submissions("lesson05")
        }


def test_stock_autograde_grades_the_class_without_failing_anyone(both):
    _, _, proc = both
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "There was an error processing" not in proc.stdout + proc.stderr


def test_both_commands_write_the_same_gradebook(both):
    stock, ours, _ = both
    assert graded(stock) == graded(ours)
    assert waiting(stock) == waiting(ours)
    table = graded(stock)
    for case in DAMAGED:
        scores = {name: score for (student, name), score in table["scores"].items() if student == case}
        assert len(scores) == 7 and set(scores.values()) == {0}, (case, scores)  # every cell, answers included
        assert table["flags"][case] and waiting(stock)[case] == [], case
    for case in REPAIRED:
        assert table["flags"][case], case
    assert not table["flags"]["reference"]


@pytest.mark.parametrize("case", [*DAMAGED, *REPAIRED])
def test_both_commands_give_the_same_reason(both, case):
    stock, ours, _ = both
    assert outcomes(stock)[case] == outcomes(ours)[case]
    flagged, problems = outcomes(stock)[case]
    assert flagged and any((DAMAGED | REPAIRED)[case] in p for p in problems), problems


def test_the_report_reads_the_same_result_and_reason_from_both(both):
    stock, ours, _ = both
    reports = [make_report(root.parent, "lesson05") for root in (stock, ours)]
    assert reports[0].csv.read_text("utf-8") == reports[1].csv.read_text("utf-8")
    results = {s.submission.student: s.result for s in reports[0].students}
    # 0 in the gradebook with a reason, and undecided until the student hands in a file grading can take
    assert all(results[case] == "INCOMPLETE" for case in DAMAGED), results
    html = reports[0].html.read_text("utf-8")
    assert all(reason in html for reason in DAMAGED.values())
    assert reports[0].html.read_text("utf-8") == reports[1].html.read_text("utf-8")


def test_an_earlier_submissions_output_goes_when_the_new_one_is_damaged(both, tmp_path):
    stock, _, _ = both
    root = tmp_path / "autograder"
    shutil.copytree(stock, root)
    autograded = root / "autograded" / "reference" / "lesson05" / "lesson05.ipynb"
    assert autograded.is_file()
    (root / "submitted" / "reference" / "lesson05" / "lesson05.ipynb").write_text("{", "utf-8")
    proc = run_nbgrader(root, "autograde", "lesson05", "--student", "reference", check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    stand_in = autograded.read_text("utf-8")
    assert "这份提交无法评分" in stand_in and "not valid JSON" in stand_in
    assert "per_gpu = ______" in stand_in and "opt_fp32 / dp + extra" not in stand_in  # blank, not the old answers
    assert set(v for (s, _), v in graded(root)["scores"].items() if s == "reference") == {0}


@pytest.mark.parametrize("which", ["stock", "ours"])
def test_feedback_tells_a_damaged_submission_why_it_scored_0(both, which, tmp_path):
    stock, ours, _ = both
    root = tmp_path / "autograder"
    shutil.copytree({"stock": stock, "ours": ours}[which], root)
    proc = run_nbgrader(root, "generate_feedback", "lesson05", "--force", check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    for case, reason in DAMAGED.items():
        html = (root / "feedback" / case / "lesson05" / "lesson05.html").read_text("utf-8")
        assert "这份提交无法评分" in html and reason.split(",")[0] in html, case
        assert "Score: 0.0 / 10.0" in html or "Score: 0 / 10" in html, case
