"""course grade's batch: agrees with stock autograde, survives SIGKILL, stays put when done, contains attacks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.grading.gradebook import configured_gradebook
from course.workflows.grade import GradeOptions, grade_assignment, run_nbgrader
from tests.classes import course_with_class
from tests.grading.hostile_class import BATCH, SAMPLES, STUDENTS, hostile_class
from tests.workflows.batches import kill_mid_batch

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.long(25)]

WELL_BEHAVED = ["reference", "forgot-extra", "zero2-shards-params", "swapped-comm-volumes", "release"]
CODE = ["test-formulas", "test-fp32-accum", "test-comm-volume", "test-dp1-cross-check"]


def scores(root: Path) -> dict:
    """Every grade nbgrader stored: (student, grade cell) → (score, needs manual grading)."""
    with Gradebook(configured_gradebook(root).url) as gb:
        return {
            (g.student.id, g.name): (g.score, g.needs_manual_grade)
            for s in gb.assignment_submissions("lesson05")
            for nb in s.notebooks
            for g in nb.grades
        }


@pytest.fixture(scope="module")
def well_behaved(released, graded, tmp_path_factory):
    """The same five students graded by stock `nbgrader autograde` and by `course grade` (among every committed sample:
    the run's graded class, tests/conftest.py)."""
    stock = course_with_class(
        released, tmp_path_factory.mktemp("stock"), {n: SAMPLES / f"{n}.ipynb" for n in WELL_BEHAVED}
    )
    run_nbgrader(stock, "autograde", "lesson05", "--force")
    return scores(stock), graded.course_root, graded


def test_course_grade_fills_the_gradebook_exactly_like_stock_autograde(well_behaved):
    stock, ours, run = well_behaved
    assert {key: value for key, value in scores(ours).items() if key[0] in WELL_BEHAVED} == stock
    assert {s.student for s in run.students if s.flagged and s.student in WELL_BEHAVED} == set()
    assert stock[("reference", "test-formulas")] == (1.0, False) and stock[("release", "test-formulas")] == (0.0, False)


def test_running_a_finished_batch_again_changes_nothing(well_behaved, tmp_path):
    _, graded, run = well_behaved
    root = tmp_path / "autograder"
    shutil.copytree(graded, root)
    with Gradebook(configured_gradebook(root).url) as gb:  # a grader's manual score must survive the rerun
        grade = gb.find_grade("answer-Q1", "lesson05", "lesson05", "reference")
        grade.manual_score, grade.needs_manual_grade = 2, False
        gb.db.commit()
    before = scores(root)
    again = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert again.stats.students == 0 and again.stats.skipped == len(run.students) >= len(WELL_BEHAVED)
    assert scores(root) == before and before[("reference", "answer-Q1")] == (2.0, False)


def test_a_batch_killed_with_sigkill_resumes_and_ends_with_the_same_gradebook(released, well_behaved, tmp_path):
    stock, _, _ = well_behaved
    root = course_with_class(released, tmp_path, {name: SAMPLES / f"{name}.ipynb" for name in WELL_BEHAVED})
    finished = kill_mid_batch(root, "lesson05", len(WELL_BEHAVED), seconds=90)
    # the private gradebook copies it could not remove are in the temporary folder it was given, not in /dev/shm
    assert list((root.parent / "tmp").glob("course-grade-*/template.db"))
    resumed = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert resumed.stats.skipped == finished and resumed.stats.students == len(WELL_BEHAVED) - finished
    assert scores(root) == stock


@pytest.fixture(scope="module")
def hostile_batch(released, tmp_path_factory):
    """The correct answer, every attack and every damaged file, graded in one batch with small limits (once per run,
    shared with tests/grading/test_one_path.py)."""
    graded = hostile_class(released, tmp_path_factory)
    return graded.root, graded.run, graded.seconds


def outputs_text(path: Path) -> str:
    """Everything a graded notebook's cells printed or displayed."""
    import json

    return json.dumps([c.get("outputs", []) for c in json.loads(path.read_text("utf-8"))["cells"]])


def code_points(root: Path, student: str) -> list[float]:
    """The four code items' scores of one student."""
    table = scores(root)
    return [table[(student, item)][0] for item in CODE]


def test_the_batch_finishes_and_the_correct_answer_is_untouched(hostile_batch):
    root, run, seconds = hostile_batch
    assert seconds < 240
    assert code_points(root, "reference") == [1, 1, 1, 1] and not run.student("reference").flagged
    assert {s.student for s in run.students} == set(STUDENTS) and len(run.students) == len(STUDENTS)
    assert {p.stem for p in BATCH.glob("*.ipynb")} < set(STUDENTS)  # every batch fixture, one student each


@pytest.mark.parametrize(
    "student, expected",
    [
        ("hostile-infinite-loop-in-function", [1, 1, 0, 1]),
        ("hostile-os-exit", [0, 0, 0, 0]),
        ("hostile-kill-parent", [1, 1, 1, 1]),  # pid 1 of its namespace: the signals find no target
        ("reordered-test-cells", [1, 1, 1, 1]),
        ("extra-cells", [1, 1, 1, 1]),
        ("nbformat-v3", [1, 1, 1, 1]),
    ],
)
def test_each_case_gets_what_the_sandbox_allows(hostile_batch, student, expected):
    root, run, _ = hostile_batch
    assert code_points(root, student) == expected
    grade = run.student(student)
    for item, passed in zip(["formulas", "fp32-accum", "comm-volume", "dp1-cross-check"], expected):
        assert grade.verdicts[item].passed == bool(passed)
        if not passed:
            assert grade.verdicts[item].reason  # every lost point says why


@pytest.mark.parametrize(
    "student",
    [
        "hostile-fork-bomb",
        "hostile-memory-bomb",
        "hostile-sys-exit",
        "hostile-write-outside",
        "hostile-read-source",
        "hostile-patch-modules",
        "hostile-huge-print",
    ],
)
def test_attacks_after_a_correct_answer_change_nothing_outside_the_sandbox(hostile_batch, student):
    root, run, _ = hostile_batch
    table = scores(root)
    assert all((student, item) in table for item in CODE)  # graded, not stuck
    assert not any(table[(student, g)][1] for g in CODE)  # nothing left waiting for manual grading
    assert not Path("/work/pwned.txt").exists() and not (root.parent / "pwned.txt").exists()
    printed = outputs_text(root / "autograded" / student / "lesson05" / "lesson05.ipynb")
    assert "BEGIN HIDDEN TESTS" not in printed and "SQLite format" not in printed  # no source, no gradebook


@pytest.mark.parametrize(
    "student, message",
    [
        ("not-utf8", "not UTF-8"),
        ("huge-output", "over the 20 MB limit"),
    ],
)
def test_damaged_files_get_a_clear_row_and_zero(hostile_batch, student, message):
    root, run, _ = hostile_batch
    assert any(message in str(p) for p in run.student(student).problems)
    assert all(score == 0 and not manual for (s, _), (score, manual) in scores(root).items() if s == student)


def test_the_workers_get_ready_while_the_batch_is_still_prepared(released, tmp_path):
    root = course_with_class(released, tmp_path, {})
    script = (
        "import gc, os, sys\n"
        "from pathlib import Path\n"
        "from course.workflows.grade_batch import worker_pool\n"
        "from course.workflows.grade_worker import course_config\n"
        "def ready():\n"
        "    return 'IPython' in sys.modules, gc.get_freeze_count() > 0, os.getpid()\n"
        f"root = Path({str(root)!r})\n"
        "print('IPython' in sys.modules)\n"
        "with worker_pool(root, 'lesson05', course_config(root, {}), 2) as pool:\n"
        "    for here in [pool.submit(ready).result() for _ in range(4)]:\n"
        "        print(*here[:2], here[2] != os.getpid())\n"
    )
    lines = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    # the grading process has not imported IPython; before its first student, every worker has looked up the kernel
    # (which imports it) and frozen its heap (course.nbgrader_hooks.speedups)
    assert lines == ["False"] + ["True True True"] * 4
