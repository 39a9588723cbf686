"""One grading path: stock `nbgrader autograde` with the course config grades exactly as `course grade` does.

Also: the gradebook is the truth for resuming, nbgrader's own failure reasons reach the rows, and one grading run
per course at a time, whichever command starts it. Damaged and repaired submissions: test_one_path_damaged.py.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course.errors import CourseError
from course.grading.gradebook import configured_gradebook
from course.workflows.grade import GradeOptions, grade_assignment, nbgrader_env, run_nbgrader
from course.workflows.grade_worker import course_config, nbgrader_api
from course.workflows.nbgrader_process import run_forked
from tests.classes import course_with_class, submit
from tests.grading.hostile_class import BATCH, SAMPLES, SMALL, hostile_class

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.long(80)]

CODE = ["test-formulas", "test-fp32-accum", "test-comm-volume", "test-dp1-cross-check"]
# Every hostile and cheating case whose notebook nbgrader can read (damaged files never reach nbgrader).
CASES = [
    "reference",
    "release",
    "cheat-replaced-checker",
    *sorted(p.stem for p in BATCH.glob("*.ipynb") if p.stem.startswith(("hostile-", "cheat-"))),
]
# Cases whose incidents depend on the machine's load, not on the command: a fork bomb's parent either gets
# EAGAIN at once or is starved past the cell limit; a memory bomb fills 768 MiB in well under 4 s on an idle
# machine but not always on a busy one (MemoryError, or the cell limit's KeyboardInterrupt first); the others'
# cells can come close to the 4 s limit on a busy machine (read-source's search of every file the sandbox shows takes
# about a second on an idle one). Their scores must still agree; the sandbox tests check each ending.
LOAD_DEPENDENT = {"hostile-fork-bomb", "hostile-memory-bomb", "hostile-patch-modules", "hostile-read-source"}
STOCK_STEPS = "c.Autograde.autograde_preprocessors = Autograde.class_traits()['autograde_preprocessors'].default()"


def notebook_of(case: str) -> Path:
    """The committed notebook of a case."""
    for folder in (BATCH, SAMPLES):
        if (folder / f"{case}.ipynb").is_file():
            return folder / f"{case}.ipynb"
    from tests.assignment.make_submissions import OUT

    return OUT / f"{case}.ipynb"


def course(released: Path, where: Path, cases: list[str], *, config: str = "") -> Path:
    """A copy of the released course, one student per case, CONFIG appended to its nbgrader_config.py."""
    return course_with_class(released, where, {case: notebook_of(case) for case in cases}, config)


def small_limits_config() -> str:
    """The SMALL limits as nbgrader settings."""
    return "\n".join(f"c.GradingSandbox.{name} = {getattr(SMALL, name)}" for name in SMALL.__dataclass_fields__)


def graded(root: Path, students: list[str] | None = None) -> dict:
    """(student, grade cell) → score, and student → flagged, as the gradebook holds them (of STUDENTS, default all)."""
    with Gradebook(configured_gradebook(root).url) as gb:
        submissions = [s for s in gb.assignment_submissions("lesson05") if students is None or s.student.id in students]
        scores = {(g.student.id, g.name): g.score for s in submissions for nb in s.notebooks for g in nb.grades}
        flags = {s.student.id: any(nb.flagged for nb in s.notebooks) for s in submissions}
    return {"scores": scores, "flags": flags}


def code_points(table: dict, student: str) -> list[float]:
    """A student's four code item scores."""
    return [table["scores"][(student, item)] for item in CODE]


def course_grade_command(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`course grade lesson05 --autograder ROOT ARGS` in a process of its own, as an instructor types it (ENV:
    nbgrader_env() unless given), its output captured as text."""
    command = [sys.executable, "-m", "course", "grade", "lesson05", "--autograder", str(root), *args]
    return subprocess.run(command, env=env or nbgrader_env(), capture_output=True, text=True)


@pytest.fixture(scope="module")
def both(released, tmp_path_factory):
    """Every case graded by stock `nbgrader autograde` (course config, small limits) and by `course grade` (the class
    of tests/grading/hostile_class.py, graded once per run, whose students include every case)."""
    ours = hostile_class(released, tmp_path_factory)  # first: this long file starts early, test_grade_batch reads it
    stock = course(released, tmp_path_factory.mktemp("stock"), CASES, config=small_limits_config())
    proc = run_nbgrader(stock, "autograde", "lesson05", "--force", check=False)
    return graded(stock), graded(ours.root, CASES), ours.run, proc, (stock, ours.root)


def test_stock_autograde_and_course_grade_give_the_same_scores_and_flags(both):
    stock, ours, _, proc, _ = both
    assert proc.returncode == 0, proc.stderr[-3000:]
    for case in CASES:
        assert code_points(stock, case) == code_points(ours, case), case
        assert stock["flags"][case] == ours["flags"][case] or case in LOAD_DEPENDENT, case
    assert stock["scores"] == ours["scores"]
    assert stock["flags"]["cheat-replaced-checker"] and stock["flags"]["hostile-os-exit"]
    assert not stock["flags"]["reference"] and not stock["flags"]["release"]


def gradebook_content(root: Path) -> dict:
    """Every value nbgrader keeps for each submitted notebook and each of its grades and comments (ids and times
    aside)."""
    content = {}
    with Gradebook(configured_gradebook(root).url) as gb:
        for submission in gb.assignment_submissions("lesson05"):
            for nb in submission.notebooks:
                key = (submission.student.id, nb.name)
                content[key] = (nb.flagged, nb.late_submission_penalty)
                content.update(
                    {
                        (*key, g.name): (g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                        for g in nb.grades
                    }
                )
                content.update({(*key, c.name, "comment"): (c.auto_comment, c.manual_comment) for c in nb.comments})
    return content


def autograded_cells(root: Path, student: str) -> list:
    """The cells of a student's autograded notebook: type, source, outputs and metadata."""
    nb = nbformat.read(root / "autograded" / student / "lesson05" / "lesson05.ipynb", as_version=4)
    return [(c.cell_type, c.source, c.get("outputs"), c.metadata) for c in nb.cells]


def test_both_paths_leave_the_same_gradebook_rows_and_autograded_notebooks(both):
    *_, (stock, ours) = both
    steady = [case for case in CASES if case not in LOAD_DEPENDENT]
    content = {root: {k: v for k, v in gradebook_content(root).items() if k[0] in steady} for root in (stock, ours)}
    assert content[stock] == content[ours] and len(content[stock]) > 10 * len(steady)
    for case in steady:
        assert autograded_cells(stock, case) == autograded_cells(ours, case), case


@pytest.mark.parametrize("case", ["cheat-read-solutions", "cheat-tamper-gradebook", "cheat-replaced-checker"])
def test_cheats_score_zero_through_both(both, case):
    stock, ours, _, _, _ = both
    assert code_points(stock, case) == code_points(ours, case) == [0, 0, 0, 0]


def test_no_score_leaves_its_range_and_the_reference_keeps_full_marks(both):
    stock, ours, _, _, _ = both
    for table in (stock, ours):
        assert all(0 <= score <= 10 for score in table["scores"].values() if score is not None)
        assert code_points(table, "reference") == [1, 1, 1, 1]


def test_the_cheats_are_real_against_unsandboxed_stock_autograde(released, tmp_path):
    """Without the course's steps (nbgrader's own Execute) the same two notebooks steal and tamper."""
    root = course(
        released,
        tmp_path,
        ["reference", "cheat-read-solutions"],
        config="from nbgrader.converters import Autograde\n" + STOCK_STEPS,
    )
    run_nbgrader(root, "autograde", "lesson05", "--force")
    assert code_points(graded(root), "cheat-read-solutions") == [1, 1, 1, 1]
    submit(root, "cheat-tamper-gradebook", notebook_of("cheat-tamper-gradebook"))  # handed in after the others
    run_nbgrader(root, "autograde", "lesson05", "--force", "--student", "cheat-tamper-gradebook")
    assert code_points(graded(root), "reference") == [999, 999, 999, 999]


def test_without_bubblewrap_both_commands_refuse_the_same_way(released, tmp_path):
    root = course(released, tmp_path, ["reference"])
    env = {**nbgrader_env(), "PATH": str(Path(sys.executable).parent)}  # no bwrap on this PATH
    stock = run_forked(root, ["autograde", "lesson05"], env)  # `python -m nbgrader autograde` with ENV
    ours = course_grade_command(root, env=env)
    assert ours.returncode != 0 and stock.returncode != 0
    for output in (stock.stdout + stock.stderr, ours.stderr):
        assert "no grading sandbox on this machine" in output and "c.GradingSandbox.unsafe = True" in output
    assert not (root / "autograded" / "reference" / "lesson05" / "lesson05.ipynb").exists()  # nothing ran
    assert all(graded(root)["scores"].get(("reference", item)) in (None, 0) for item in CODE)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write("\nc.GradingSandbox.unsafe = True\n")
    done = run_forked(root, ["autograde", "lesson05"], env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert code_points(graded(root), "reference") == [1, 1, 1, 1]


def test_a_setting_that_is_not_valid_stops_both_commands_before_anyone_is_graded(released, tmp_path):
    """A mistyped engine: one line from each command, and the autograded notebook of an earlier run is kept (nbgrader
    would fail the student and remove it)."""
    root = course(released, tmp_path, ["reference"])
    kept = root / "autograded" / "reference" / "lesson05" / "lesson05.ipynb"
    kept.parent.mkdir(parents=True)
    kept.write_text("{}", "utf-8")  # an earlier run's, as far as this test is concerned
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write('\nc.GradingSandbox.engine = "kernal"\n')
    stock = run_nbgrader(root, "autograde", "lesson05", "--force", check=False)
    ours = course_grade_command(root, "--force")
    for run in (stock, ours):
        assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr[-2000:]
        said = [line for line in run.stderr.splitlines() if "c.GradingSandbox.engine = 'kernal'" in line]
        assert len(said) == 1 and "nobody was graded" in said[0], run.stderr[-2000:]
    assert kept.read_text("utf-8") == "{}"
    assert all(graded(root)["scores"].get(("reference", item)) in (None, 0) for item in CODE)


@pytest.fixture(scope="module")
def graded_by_command(released, tmp_path_factory):
    """Two students graded once by the `course grade` command, in a process of its own as instructors run it: the
    course root (never changed: graded_class copies it) and the finished process."""
    root = course(released, tmp_path_factory.mktemp("graded"), ["reference", "release"])
    return root, course_grade_command(root)


def test_course_grade_prints_no_library_warnings(graded_by_command):
    _, proc = graded_by_command
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr and "WARNING" not in proc.stderr, proc.stderr


@pytest.fixture
def graded_class(graded_by_command, tmp_path):
    """Two students graded once by course grade: a copy of that course, this test's own to change."""
    root, proc = graded_by_command
    assert proc.returncode == 0, proc.stderr
    return Path(shutil.copytree(root, tmp_path / "autograder"))


def test_a_fresh_gradebook_means_everyone_is_graded_again(graded_class):
    root = graded_class
    before = graded(root)
    (root / "gradebook.db").unlink()
    run_nbgrader(root, "generate_assignment", "lesson05", "--force")  # as after a lost gradebook
    assert graded(root)["scores"] == {}
    again = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert again.stats.students == 2 and again.stats.skipped == 0
    assert graded(root) == before


def test_a_stale_gradebook_row_is_graded_again(graded_class):
    root = graded_class
    before = graded(root)
    with Gradebook(configured_gradebook(root).url) as gb:  # e.g. restored from an older copy
        gb.find_grade("test-formulas", "lesson05", "lesson05", "release").auto_score = 1.0
        gb.db.commit()
    again = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert again.stats.students == 1 and again.stats.skipped == 1
    assert graded(root) == before


def test_a_deleted_gradebook_stops_before_grading_and_names_the_fix(graded_class):
    root = graded_class
    (root / "gradebook.db").unlink()
    with pytest.raises(CourseError, match=r"nbgrader generate_assignment lesson05 --force"):
        grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert not (root / "gradebook.db").exists()


def test_a_failing_nbgrader_step_shows_its_own_reason(graded_class):
    root = graded_class
    with Gradebook(configured_gradebook(root).url) as gb:
        gb.remove_submission("lesson05", "reference")
        gb.remove_notebook("lesson05", "lesson05")
    run = grade_assignment(root, "lesson05", GradeOptions(jobs=1))
    problems = " ".join(str(p) for p in run.student("reference").problems)
    assert "No notebooks found" in problems and "above traceback" not in problems


HOLD = (
    "import sys, time\nfrom pathlib import Path\nfrom course.nbgrader_hooks.batch_lock import batch_lock\n"
    "with batch_lock(Path(sys.argv[1]), sys.argv[2]):\n    print('held', flush=True)\n    time.sleep(60)\n"
)


def hold_lock(root: Path, command: str) -> subprocess.Popen:
    """Another process holding the course's batch lock as COMMAND."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root), command], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def autograded_files(root: Path) -> dict[Path, bytes]:
    """Every file under autograded/ with its bytes."""
    return {p: p.read_bytes() for p in sorted((root / "autograded").rglob("*")) if p.is_file()}


@pytest.mark.parametrize("other", ["course grade lesson05", "nbgrader autograde lesson05"])
def test_while_another_run_grades_the_course_both_commands_refuse_and_change_nothing(graded_class, other):
    root = graded_class
    before, files = graded(root), autograded_files(root)
    holder = hold_lock(root, other)
    try:
        with pytest.raises(CourseError, match=rf"pid {holder.pid}, `{other}`"):
            grade_assignment(root, "lesson05", GradeOptions(jobs=1))
        stock = run_nbgrader(root, "autograde", "lesson05", "--force", check=False)
    finally:
        holder.kill()
        holder.wait()
    log = stock.stdout + stock.stderr
    assert stock.returncode != 0 and f"pid {holder.pid}, `{other}`" in log and "wait for that run to finish" in log
    assert "Converting notebook" not in log  # stopped before grading anyone
    assert graded(root) == before and autograded_files(root) == files  # --force removed no earlier output
    # the holder died without cleaning up (SIGKILL): its lock file is stale and the next run simply takes it
    again = run_nbgrader(root, "autograde", "lesson05", "--force", check=False)
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    assert graded(root) == before
    assert grade_assignment(root, "lesson05", GradeOptions(jobs=1)).stats.students == 0  # course grade's agrees


def test_an_in_process_autograde_takes_the_lock_and_gives_it_back(graded_class):
    """nbgrader's API in a long-lived process (formgrader's autograde button) holds the lock only while it grades."""
    root = graded_class
    api = nbgrader_api(course_config(root, {}))
    holder = hold_lock(root, "course grade lesson05")
    try:
        busy = api.autograde("lesson05", "reference", force=True, create=True)
    finally:
        holder.kill()
        holder.wait()
    assert not busy["success"] and f"pid {holder.pid}" in busy["log"]
    done = api.autograde("lesson05", "reference", force=True, create=True)
    assert done["success"], done.get("log", "")[-3000:]
    fd = os.open(root / ".course-grade" / "batch.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises BlockingIOError if the API still held it
    finally:
        os.close(fd)


def test_a_changed_submission_is_graded_again(graded_class):
    root = graded_class
    assert code_points(graded(root), "release") == [0, 0, 0, 0]
    submit(root, "release", notebook_of("reference"))  # the student resubmitted, now complete
    again = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert again.stats.students == 1 and again.stats.skipped == 1
    assert code_points(graded(root), "release") == [1, 1, 1, 1]
