"""What grading leaves for graders and students to read, through `course grade` and stock `nbgrader autograde`:
an exception in the exercise's cell named with its line, the re-check's corrections in the report, students who
left gone from the grade report, and the re-check's call timeout taken from the course's nbgrader config."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course.grading.gradebook import configured_gradebook
from course.grading.report import make_report
from course.nbgrader_hooks.feedback import CODE_ERROR
from course.workflows.grade import grade_assignment, run_nbgrader
from tests.assignment.make_submissions import OUT
from tests.classes import course_with_class

pytestmark = [pytest.mark.long(40), pytest.mark.slow, pytest.mark.sandbox, pytest.mark.waits]

ANSWER = "ex-zero-memory"
CODE = ["test-formulas", "test-fp32-accum", "test-comm-volume", "test-dp1-cross-check"]
# The reference answer whose memory function takes 3 s on its first call: well inside the kernel's cell limit, but
# past the re-check's default call timeout (2 s), which then fails every item that calls it.
SLOW = """

import time as _time
_first_call = [True]
_fast = zero_memory_per_gpu


def zero_memory_per_gpu(*args, **kwargs):
    if _first_call:
        _first_call.pop()
        _time.sleep(3)
    return _fast(*args, **kwargs)
"""
LONGER_CALLS = "c.GradingSandbox.recheck_call_timeout_s = 8"


def variant(tmp_path: Path, name: str, edit) -> Path:
    """The reference submission with its answer cell's source passed through EDIT."""
    nb = nbformat.read(OUT / "reference.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ANSWER)
    cell.source = edit(cell.source)
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def broken(source: str) -> str:
    """The answer with a syntax error on the line of `return` in its first function (found, not hard-coded)."""
    lines = source.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("return "))
    lines[at] = lines[at].replace("return ", "return (", 1)
    lines.insert(at + 1, "")
    lines.insert(at + 2, "x = ]")
    return "\n".join(lines)


def syntax_error_line(source: str) -> int:
    """Where Python reports the syntax error of SOURCE (1-based line in the cell)."""
    try:
        compile(source, "<cell>", "exec")
    except SyntaxError as error:
        return error.lineno
    raise AssertionError("expected a syntax error")


def code_scores(root: Path, student: str) -> list[float]:
    """A student's code item scores as the gradebook holds them."""
    with Gradebook(configured_gradebook(root).url) as gb:
        nb = gb.find_submission_notebook("lesson05", "lesson05", student)
        return [next(g.score for g in nb.grades if g.name == name) for name in CODE]


def grade_report(root: Path) -> dict:
    """reports/lesson05-grade.json."""
    return json.loads((root / "reports" / "lesson05-grade.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def graded_class(released, tmp_path_factory):
    """`course grade` over a syntax error, a slow function, a cheat and the reference, with longer calls configured."""
    work = tmp_path_factory.mktemp("readable")
    syntax = variant(work, "syntax", broken)
    slow = variant(work, "slow", lambda s: s + SLOW)
    students = {
        "syntax": syntax,
        "slow": slow,
        "cheat": OUT / "cheat-replaced-checker.ipynb",
        "reference": OUT / "reference.ipynb",
    }
    root = course_with_class(released, work, students, LONGER_CALLS)
    run = grade_assignment(root, "lesson05")
    return root, run, nbformat.read(syntax, as_version=4)


def test_a_syntax_error_is_reported_with_its_line_in_the_grade_report_feedback_and_report(graded_class):
    root, run, nb = graded_class
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ANSWER)
    where = f"cell {ANSWER}, line {syntax_error_line(answer.source)}: SyntaxError"
    verdict = grade_report(root)["syntax"]["verdicts"]["formulas"]
    assert [e["error"] for e in verdict["errors"]] == ["SyntaxError"] and where in verdict["reason"]
    assert "KeyError" not in verdict["reason"] and code_scores(root, "syntax") == [0, 0, 0, 0]
    run_nbgrader(root, "generate_feedback", "lesson05", "--student", "syntax", "--force")
    feedback = (root / "feedback" / "syntax" / "lesson05" / "lesson05.html").read_text("utf-8")
    assert f"{CODE_ERROR}{where}" in feedback
    html = make_report(root.parent, "lesson05").html.read_text("utf-8")
    assert f"运行学生的代码单元时出错：{where}" in html


def test_the_rechecks_correction_of_a_cheat_is_in_the_report_html_and_csv(graded_class):
    root, run, _ = graded_class
    assert run.student("cheat").changes and code_scores(root, "cheat") == [0, 0, 0, 0]
    result = make_report(root.parent, "lesson05")
    with open(result.csv, encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert "学生进程内得 1 分，课程复核改为 0 分" in rows["cheat"]["flags"] and rows["reference"]["flags"] == ""
    html = result.html.read_text("utf-8")
    section = html.split('id="student-cheat"')[1].split("</section>")[0]
    assert "评分时发现的问题" in section and "学生进程内得 1 分，课程复核改为 0 分" in section


def test_course_grade_takes_the_call_timeout_from_the_course_config(graded_class):
    root, run, _ = graded_class
    assert code_scores(root, "slow") == [1, 1, 1, 1] and not run.student("slow").flagged


def test_a_student_who_left_leaves_the_grade_report_of_course_grade(graded_class, tmp_path):
    root = tmp_path / "autograder"
    shutil.copytree(graded_class[0], root)
    shutil.rmtree(root / "submitted" / "syntax")
    grade_assignment(root, "lesson05")
    assert sorted(grade_report(root)) == ["cheat", "reference", "slow"]


@pytest.fixture(scope="module")
def stock_graded(released, tmp_path_factory):
    """Stock `nbgrader autograde` over the slow function (longer calls configured) and the reference."""
    work = tmp_path_factory.mktemp("stock-readable")
    root = course_with_class(
        released,
        work,
        {"slow": variant(work, "slow", lambda s: s + SLOW), "reference": OUT / "reference.ipynb"},
        LONGER_CALLS,
    )
    run_nbgrader(root, "autograde", "lesson05")
    return root


def test_stock_autograde_takes_the_call_timeout_from_the_course_config(stock_graded):
    assert code_scores(stock_graded, "slow") == [1, 1, 1, 1]
    assert grade_report(stock_graded)["slow"]["flagged"] is False


def test_the_default_call_timeout_fails_the_slow_function(released, tmp_path):
    root = course_with_class(released, tmp_path, {"slow": variant(tmp_path, "slow", lambda s: s + SLOW)})
    run_nbgrader(root, "autograde", "lesson05")
    assert code_scores(root, "slow") == [0, 0, 1, 0]  # the kernel passed them; the re-check's calls timed out
    assert "CallTimeout" in grade_report(root)["slow"]["verdicts"]["formulas"]["reason"]


def test_a_student_who_left_leaves_the_grade_report_of_stock_autograde(stock_graded, tmp_path):
    root = tmp_path / "autograder"
    shutil.copytree(stock_graded, root)
    shutil.rmtree(root / "submitted" / "reference")
    run_nbgrader(root, "autograde", "lesson05", "--student", "slow", "--force")
    assert sorted(grade_report(root)) == ["slow"]


def test_course_grade_call_timeout_option_sets_the_sandbox_setting_for_one_run(monkeypatch):
    import course.workflows.grade as grade
    from course.cli import main

    class Graded(Exception):
        """Raised instead of grading: the settings the command passed are all this test needs."""

    def instead(root, assignment, options, **kwargs):
        raise Graded(dict(options.settings))

    monkeypatch.setattr(grade, "grade_assignment", instead)
    with pytest.raises(Graded) as given:
        main(["grade", "lesson05", "--call-timeout", "7.5"])
    assert given.value.args[0] == {"recheck_call_timeout_s": 7.5}
