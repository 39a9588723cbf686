"""`course grade` on every committed sample: stock nbgrader autograde, the re-check, the gradebook, the messages."""

from __future__ import annotations

import json
import sqlite3

import nbformat
import pytest
from nbgrader.api import Gradebook

from course.grading.gradebook import configured_gradebook
from course.grading.rubric import code_grade_id
from course.nbgrader_hooks.speedups import alembic_head
from course.workflows.grade import run_nbgrader, summary
from tests.assignment.make_submissions import EXPECTED, FIXTURES

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def gradebook_scores(graded, student: str) -> tuple[dict[str, float], bool, list]:
    """Code item scores, the flag and all grades of one student, read back from the gradebook."""
    with Gradebook(configured_gradebook(graded.course_root).url) as gb:
        nb = gb.find_submission_notebook("lesson05", "lesson05", student)
        grades = {g.name: g for g in nb.grades}
        scores = {item: grades[code_grade_id(item)].score for item in graded.code_points}
        return scores, nb.flagged, [(g.name, g.score, g.needs_manual_grade) for g in nb.grades]


@pytest.mark.parametrize("name", list(FIXTURES))
def test_each_sample_scores_what_its_name_says(graded, name):
    scores, flagged, _ = gradebook_scores(graded, name)
    assert scores == EXPECTED[name]["scores"]
    result = graded.student(name)
    kernel = {item: scores[item] for item in scores}
    kernel.update({c.item: c.kernel_score for c in result.changes if c.kernel_score is not None})
    assert (
        kernel == EXPECTED[name].get("kernel", EXPECTED[name]["scores"])
        or "file" in EXPECTED[name]
        or name == "invalid-json"
    )
    assert flagged == result.flagged == ("kernel" in EXPECTED[name] or "problem" in EXPECTED[name])
    if "problem" in EXPECTED[name]:
        assert any(EXPECTED[name]["problem"] in str(p) for p in result.problems), result.problems


def test_unreadable_submissions_leave_nothing_waiting_for_manual_grading(graded):
    for name in ("invalid-json", "renamed-notebook"):
        _, _, grades = gradebook_scores(graded, name)
        assert all(score == 0 and not manual for _, score, manual in grades), grades


def test_stock_autograde_put_the_hidden_tests_back_and_restored_the_deleted_test(graded):
    nb = nbformat.read(graded.course_root / "autograded" / "deleted-test-cell" / "lesson05" / "lesson05.ipynb", 4)
    tests = {c.id: c.source for c in nb.cells if c.id.startswith("test-")}
    assert sorted(tests) == sorted(code_grade_id(i) for i in graded.code_points)
    assert all("### BEGIN HIDDEN TESTS" in source for source in tests.values())


def test_summary_and_report_name_each_flagged_student_and_why(graded):
    text = summary(graded)
    assert "cheat-replaced-checker" in text and "1→0" in text and "kernel 1, re-check 0" in text
    students = len(graded.students)
    assert f"graded {students} — no grade recorded for them before: " in text and "not graded yet" not in text
    assert f"graded {students} (0 already graded, skipped)" in text
    report = json.loads(graded.report.read_text("utf-8"))
    assert report["reference"]["flagged"] is False and report["reference"]["problems"] == []
    assert "not valid JSON" in report["invalid-json"]["problems"][0]


def test_nbgrader_commands_run_stock_nbgrader_without_the_iri_checker_or_an_alembic_subprocess(tmp_path):
    """run_nbgrader is nbgrader's own entry point with its arguments, minus start-up costs that change no result: the
    unused IRI checker is not imported, and a new gradebook is stamped with the head read in process."""
    (tmp_path / "nbgrader_config.py").write_text(
        "import sys, nbgrader.api\nprint('iri checker:', sys.modules.get('rfc3987_syntax', 'absent'))\n"
        "print('head from:', nbgrader.api.get_alembic_version.__name__)\n",
        "utf-8",
    )
    proc = run_nbgrader(tmp_path, "db", "student", "list")
    assert "iri checker: None" in proc.stdout and "rfc3987_syntax" not in proc.stdout
    assert "head from: alembic_head" in proc.stdout
    assert "There are 0 students in the database" in proc.stdout
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchone()[0] == alembic_head()
