"""Regrading after the checks are tightened: scores follow the new checks, nobody is flagged, graders' work stays.

A class is released with lax checks (lesson05's, without the hidden checks of `formulas`) and graded; graders
score the written answers. Then the checks are tightened as an instructor would — the hidden checks added back
and a visible check moved to hidden, which changes the released test cell — and the class is graded again, once
by `course grade` on its own and once by stock `nbgrader generate_assignment --force` + `nbgrader autograde
--force`. floor-division (right on every visible check, wrong for Ψ not divisible by N_d) loses its item.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
import yaml
from nbgrader.api import Gradebook

from course.assignment.make_source import make_assignment_source, source_notebook, write_source
from course.assignment.submissions import submission
from course.assignment.versions import assignment_version, history_dir, released_versions
from course.grading.gradebook import configured_gradebook
from course.grading.load_checks import load_checks
from course.lesson.parse_qmd import parse_lesson
from course.nbgrader_hooks.manual_grades import answers_path
from course.workflows.grade import GradeOptions, grade_assignment, run_nbgrader
from tests.assignment.make_submissions import ANSWER, FIXTURES, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.waits]

STUDENTS = {"s-right": "reference", "s-floor": "floor-division", "s-extra": "forgot-extra"}
ANSWERS = {
    "Q1": "激活取决于每卡的 micro-batch，ZeRO 只分片模型状态。",
    "Q2": "2Ψ 对 2Ψ，3Ψ 多一次 all-gather。",
    "Q3": "预取把 all-gather 藏在计算后面。",
}
MANUAL = {"answer-Q1": 2.0, "answer-Q2": 1.5, "answer-Q3": 2.0}
MOVED = "zero_communication_volume(7_000_000_000, 3) == 21_000_000_000"


def checks_file(where: Path, *, tight: bool) -> Path:
    """lesson05's checks: lax (no hidden checks for `formulas`), or tight (those back, one visible check hidden)."""
    data = yaml.safe_load((ROOT / "lessons" / "lesson05" / "checks.yml").read_text("utf-8"))
    if tight:
        comm = data["items"]["comm-volume"]
        comm["visible"].remove(MOVED)
        comm["hidden"].append(MOVED)
    else:
        del data["items"]["formulas"]["hidden"]
    path = where / ("tight" if tight else "lax") / "checks.yml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    return path


def build_source(root: Path, checks: Path) -> None:
    """`course build`'s source notebook and checks for lesson05, made with CHECKS."""
    spec = load_checks(checks, lesson="lesson05")
    made = make_assignment_source(
        parse_lesson(ROOT / "lessons" / "lesson05.qmd"), project_root=ROOT, course_root=root, spec=spec
    )
    write_source(root, made)


def gradebook(root: Path) -> dict:
    """(student, grade id) → (auto score, manual score, needs manual grade), and the flagged students."""
    with Gradebook(configured_gradebook(root).url) as gb:
        subs = gb.assignment_submissions("lesson05")
        grades = {
            (s.student.id, g.name): (g.auto_score, g.manual_score, g.needs_manual_grade)
            for s in subs
            for nb in s.notebooks
            for g in nb.grades
        }
        flagged = {s.student.id for s in subs for nb in s.notebooks if nb.flagged}
    return {"grades": grades, "flagged": flagged}


def grade_by_hand(root: Path) -> None:
    """What formgrader's save does for each written answer, and a grader's review clearing the flags."""
    with Gradebook(configured_gradebook(root).url) as gb:
        for student in STUDENTS:
            for name, points in MANUAL.items():
                grade = gb.find_grade(name, "lesson05", "lesson05", student)
                grade.manual_score, grade.needs_manual_grade = points, False
        gb.db.commit()


def lax_class(released: Path, where: Path) -> Path:
    """A course released with the lax checks, each student's notebook made from that release."""
    root = where / "autograder"
    shutil.copytree(released, root)
    build_source(root, checks_file(where, tight=False))
    run_nbgrader(root, "generate_assignment", "lesson05", "--force")
    release = nbformat.read(root / "release" / "lesson05" / "lesson05.ipynb", as_version=4)
    for student, sample in STUDENTS.items():
        nb = submission(release, ANSWER, FIXTURES[sample][0], answers=ANSWERS)
        folder = root / "submitted" / student / "lesson05"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "lesson05.ipynb")
    return root


@pytest.fixture(scope="module")
def by_course_grade(released, tmp_path_factory):
    """Graded lax, graded by hand, checks tightened, `course grade` run twice: (root, lax state, run, rerun).

    s-extra's remembered answers are removed first: its autograded notebook stands in for them."""
    where = tmp_path_factory.mktemp("regrade-course")
    root = lax_class(released, where)
    first = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    grade_by_hand(root)
    answers_path(root, "lesson05", "s-extra").unlink()  # as if graded before answers were remembered
    lax = gradebook(root)
    lax_version = assignment_version(root, "lesson05")
    build_source(root, checks_file(where, tight=True))  # `course build` after tightening; nothing released yet
    run = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    again = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    return root, first, lax, lax_version, run, again


@pytest.fixture(scope="module")
def by_stock(released, tmp_path_factory):
    """The same class through stock nbgrader only: autograde, graded by hand, tightened, released, autograde --force."""
    where = tmp_path_factory.mktemp("regrade-stock")
    root = lax_class(released, where)
    run_nbgrader(root, "autograde", "lesson05", "--force")
    grade_by_hand(root)
    build_source(root, checks_file(where, tight=True))
    refused = run_nbgrader(root, "autograde", "lesson05", "--force", check=False)
    run_nbgrader(root, "generate_assignment", "lesson05", "--force")
    run_nbgrader(root, "autograde", "lesson05", "--force")
    return root, refused


def test_the_lax_checks_miss_floor_division_and_every_answer_is_graded_by_hand(by_course_grade):
    _, first, lax, _, _, _ = by_course_grade
    assert lax["grades"][("s-floor", "test-formulas")][0] == 1.0  # no hidden check catches it yet
    assert not any(needs for (_, name), (_, _, needs) in lax["grades"].items())
    assert {s.student for s in first.students if s.flagged} == set()


def test_course_grade_regrades_everyone_on_its_own_and_says_why(by_course_grade):
    root, _, _, lax_version, run, _ = by_course_grade
    tight_version = assignment_version(root, "lesson05")
    assert tight_version != lax_version
    assert run.stats.students == 3 and run.stats.skipped == 0
    assert run.stats.released and f"version {lax_version}" in run.stats.released
    [(reason, students)] = run.stats.reasons.items()
    assert f"version {lax_version} → {tight_version}" in reason and sorted(students) == sorted(STUDENTS)
    assert all(s.version == tight_version for s in run.students)
    report = json.loads((root / "reports" / "lesson05-grade.json").read_text("utf-8"))
    assert {s: r["version"] for s, r in report.items()} == dict.fromkeys(STUDENTS, tight_version)
    assert released_versions(root, "lesson05")[-2:] == [lax_version, tight_version]
    assert (history_dir(root, "lesson05") / lax_version / "lesson05.ipynb").is_file()


def test_scores_follow_the_new_checks_and_nobody_is_flagged_for_the_re_release(by_course_grade):
    root, _, lax, _, run, _ = by_course_grade
    now = gradebook(root)
    assert now["grades"][("s-floor", "test-formulas")][0] == 0.0  # the hidden checks caught it
    changed = {k for k in now["grades"] if now["grades"][k] != lax["grades"][k]}
    assert changed == {("s-floor", "test-formulas")}
    assert now["flagged"] == set() and {s.student for s in run.students if s.flagged} == set()
    release = nbformat.read(root / "release" / "lesson05" / "lesson05.ipynb", as_version=4)
    test = next(c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test-comm-volume")
    assert MOVED.split(" ==")[0] not in test.source  # the student's visible cell really changed with the release


def test_manual_scores_and_their_graded_state_survive_the_regrade(by_course_grade):
    root, *_ = by_course_grade
    grades = gradebook(root)["grades"]
    for student in STUDENTS:
        for name, points in MANUAL.items():
            assert grades[(student, name)] == (None, points, False)


def test_a_second_run_skips_everyone_graded_for_this_version(by_course_grade):
    *_, again = by_course_grade
    assert again.stats.students == 0 and again.stats.skipped == 3 and not again.stats.released


def test_stock_autograde_refuses_a_stale_release_then_gives_the_same_result(by_course_grade, by_stock):
    ours, *_ = by_course_grade
    stock, refused = by_stock
    assert refused.returncode != 0 and "changed since it was released" in refused.stdout + refused.stderr
    assert gradebook(stock) == gradebook(ours)


def test_course_grade_after_stock_autograde_skips_what_is_graded_for_this_version(by_stock):
    stock, _ = by_stock
    before = gradebook(stock)
    run = grade_assignment(stock, "lesson05", GradeOptions(jobs=2))
    assert run.stats.students == 0 and run.stats.skipped == 3
    assert gradebook(stock) == before


def test_course_grade_force_regrades_the_named_students_and_keeps_their_manual_grades(by_stock, tmp_path):
    stock, _ = by_stock
    root = tmp_path / "autograder"
    shutil.copytree(stock, root)
    before = gradebook(root)
    run = grade_assignment(root, "lesson05", GradeOptions(jobs=2, force_students=("s-extra",)))
    assert run.stats.reasons == {"asked for with --force": ("s-extra",)} and run.stats.skipped == 2
    assert gradebook(root) == before


def test_a_release_that_adds_or_removes_graded_cells_is_refused_and_deletes_nothing(by_stock, tmp_path):
    stock, _ = by_stock
    root = tmp_path / "autograder"
    shutil.copytree(stock, root)
    released = (root / "release" / "lesson05" / "lesson05.ipynb").read_bytes()
    source = source_notebook(root, "lesson05")
    nb = nbformat.read(source, as_version=4)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test-dp1-cross-check"]
    nbformat.write(nb, source)
    proc = run_nbgrader(root, "generate_assignment", "lesson05", "--force", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "removes test-dp1-cross-check" in out and "nbgrader db assignment remove" in out
    assert (root / "release" / "lesson05" / "lesson05.ipynb").read_bytes() == released
    run_nbgrader(root, "db", "assignment", "remove", "lesson05", "--force")  # the way out the message names
    run_nbgrader(root, "generate_assignment", "lesson05", "--force")
    release = nbformat.read(root / "release" / "lesson05" / "lesson05.ipynb", as_version=4)
    assert "test-dp1-cross-check" not in {c.metadata.get("nbgrader", {}).get("grade_id") for c in release.cells}
