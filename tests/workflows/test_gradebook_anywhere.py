"""One gradebook, wherever nbgrader's db_url puts it: course grade, stock autograde, course report and a grader in
formgrader all read and write the configured one (SQLite or PostgreSQL), never a gradebook.db left beside it."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course.errors import CourseError
from course.grading.gradebook import configured_gradebook, gradebook
from course.grading.report import make_report
from course.workflows.grade import GradeOptions, grade_assignment, run_nbgrader
from tests import gradebooks
from tests.classes import course_with_class, submit
from tests.gradebooks import hub_config
from tests.workflows.batches import kill_mid_batch

pytestmark = [pytest.mark.long(40), pytest.mark.slow, pytest.mark.sandbox]

SAMPLES = Path(__file__).parents[1] / "assignment" / "submissions"
QUESTIONS = ("answer-Q1", "answer-Q2", "answer-Q3")


def course(released: Path, where: Path, students: list[str]) -> Path:
    """A project folder whose autograder/ is a copy of the released course with one submission per student."""
    shutil.copytree(Path(__file__).parents[2] / "lessons" / "lesson05", where / "lessons" / "lesson05")
    return course_with_class(released, where, {student: SAMPLES / f"{student}.ipynb" for student in students})


def save_grade_as_formgrader(db_url: str, student: str, grade_id: str, points: float) -> None:
    """What formgrader's API does when a grader saves a score (nbgrader's GradeHandler.put): by id, then commit."""
    with gradebook(db_url) as gb:
        grade_row = gb.find_grade(grade_id, "lesson05", "lesson05", student)
        grade = gb.find_grade_by_id(grade_row.id)
        grade.manual_score, grade.extra_credit = points, None
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        gb.db.commit()


def scores(db_url: str) -> dict:
    """(student, grade cell) → (auto score, manual score) as the gradebook holds them."""
    with gradebook(db_url) as gb:
        return {
            (s.student.id, g.name): (g.auto_score, g.manual_score)
            for s in gb.assignment_submissions("lesson05")
            for nb in s.notebooks
            for g in nb.grades
        }


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_command_reads_and_writes_the_configured_gradebook(released, gradebook_db, tmp_path):
    root = course(released, tmp_path, ["reference", "release"])
    url = configured_gradebook(root).url
    stale = root / "gradebook.db"  # left over from an earlier run: on PostgreSQL nobody may read or write it
    if gradebook_db.kind == "postgresql":
        assert url == gradebook_db.url
        with gradebook(f"sqlite:///{stale}") as gb:  # a stale file that would PASS someone nobody graded
            gb.add_student("stale-only")
            gb.add_submission("lesson05", "stale-only")
        before = digest(stale)
    else:
        assert url == f"sqlite:///{stale}"
    gradebook_db.prepare(root)

    run_nbgrader(root, "autograde", "lesson05", "--student", "release")  # stock nbgrader, the course config
    assert {s for s, _ in scores(url)} == {"release"}
    run = grade_assignment(
        root, "lesson05", GradeOptions(jobs=2)
    )  # what stock autograde graded for this version is kept
    assert run.stats.students == 1 and run.stats.skipped == 1
    graded = scores(url)
    assert graded[("reference", "test-formulas")] == (1.0, None) and graded[("release", "test-formulas")] == (0.0, None)

    for grade_id in QUESTIONS:  # a grader scores reference's answers, there and nowhere else
        save_grade_as_formgrader(url, "reference", grade_id, 2)
    rows = {s.submission.student: s for s in make_report(root.parent, "lesson05").students}
    assert set(rows) == {"reference", "release"}
    assert rows["reference"].result == "PASS" and rows["release"].result == "FAIL"  # blank answers score 0
    assert rows["reference"].submission.total == 10
    for grade_id in ("answer-Q2", "answer-Q3"):  # changed there: the report follows
        save_grade_as_formgrader(url, "reference", grade_id, 0)
    rows = {s.submission.student: s for s in make_report(root.parent, "lesson05").students}
    assert rows["reference"].result == "FAIL" and rows["reference"].submission.total == 6

    with gradebook(url) as gb:  # a student removed from the gradebook is graded again, the other skipped
        gb.remove_submission("lesson05", "release")
    again = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert again.stats.students == 1 and again.stats.skipped == 1
    assert scores(url)[("release", "test-formulas")] == (0.0, None)
    assert scores(url)[("reference", "answer-Q1")][1] == 2.0  # the grader's score survives the rerun
    with gradebook(url) as gb:  # a row changed there (restored from an older copy): that student is graded again
        gb.find_grade("test-formulas", "lesson05", "lesson05", "release").auto_score = 1.0
        gb.db.commit()
    again = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert again.stats.students == 1 and again.stats.skipped == 1
    assert scores(url)[("release", "test-formulas")] == (0.0, None)
    if gradebook_db.kind == "postgresql":
        assert digest(stale) == before


def test_a_grader_saving_in_formgrader_while_course_grade_runs_loses_no_write(released, gradebook_db, tmp_path):
    students = ["reference", "release", "forgot-extra", "zero2-shards-params"]
    root = course(released, tmp_path, students[:1])
    gradebook_db.prepare(root)
    url = configured_gradebook(root).url
    grade_assignment(root, "lesson05", GradeOptions(jobs=1))  # reference is autograded; a grader starts on its answers
    for student in students[1:]:
        submit(root, student, SAMPLES / f"{student}.ipynb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "course", "grade", "lesson05", "--autograder", str(root), "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    saved, points = 0, 0.0
    while proc.poll() is None:
        points = [0.5, 1.0, 1.5, 2.0][saved % 4]
        for grade_id in QUESTIONS:
            save_grade_as_formgrader(url, "reference", grade_id, points)
        saved += 1
        time.sleep(0.2)
    output = proc.stdout.read()
    assert proc.returncode == 0, output
    assert saved >= 3, "the grader's saves should overlap the grading run"
    graded = scores(url)
    assert all(graded[("reference", q)][1] == points for q in QUESTIONS)  # the grader's last save
    assert {s for s, _ in graded} == set(students)  # and every student the run graded
    assert [graded[(s, "test-formulas")][0] for s in students] == [1.0, 0.0, 1.0, 0.0]


def test_an_unreachable_gradebook_is_named_without_its_password(postgres_server, tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))
    hub_config(tmp_path / "hub", [f"c.CourseDirectory.db_url = {postgres_server.url('nosuch', 's3cret')!r}"])
    root = tmp_path / "autograder"
    (root / "rubrics").mkdir(parents=True)
    shutil.copy(Path(__file__).parents[2] / "autograder" / "rubrics" / "lesson05.yml", root / "rubrics")
    with pytest.raises(CourseError) as err:
        make_report(tmp_path, "lesson05")
    message = str(err.value)
    assert message.startswith("gradebook postgresql://postgres:***@/nosuch?host=")
    assert 'database "nosuch" does not exist' in message and "s3cret" not in message
    assert "generate_assignment" not in message and str(tmp_path / "hub" / "nbgrader_config.py") in message


def test_an_empty_database_is_no_gradebook_and_is_left_empty(postgres_server, tmp_path, monkeypatch):
    postgres_server.admin("CREATE DATABASE empty_gradebook")
    url = postgres_server.url("empty_gradebook")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))
    hub_config(tmp_path / "hub", [f"c.CourseDirectory.db_url = {url!r}"])
    root = tmp_path / "autograder"
    (root / "rubrics").mkdir(parents=True)
    shutil.copy(Path(__file__).parents[2] / "autograder" / "rubrics" / "lesson05.yml", root / "rubrics")
    with pytest.raises(CourseError, match=r"no gradebook: the database is empty; nothing is graded there yet"):
        make_report(tmp_path, "lesson05")
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    assert sqlalchemy.inspect(engine).get_table_names() == []
    engine.dispose()


def test_a_batch_killed_half_way_resumes_on_the_configured_gradebook(released, gradebook_db, tmp_path):
    students = ["reference", "release", "forgot-extra", "zero2-shards-params"]
    root = course(released, tmp_path, students)
    gradebook_db.prepare(root)
    url = configured_gradebook(root).url
    finished = kill_mid_batch(root, "lesson05", len(students))
    resumed = grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    assert resumed.stats.skipped == finished and resumed.stats.students == len(students) - finished
    graded = scores(url)
    assert [graded[(s, "test-formulas")][0] for s in students] == [1.0, 0.0, 1.0, 0.0]
    assert [graded[(s, "test-fp32-accum")][0] for s in students] == [1.0, 0.0, 0.0, 1.0]


def test_without_the_server_binaries_the_postgresql_tests_fail_naming_the_package(tmp_path, monkeypatch):
    monkeypatch.setattr(gradebooks, "PG_ROOT", tmp_path)
    with pytest.raises(pytest.fail.Exception, match=r"install the Debian package `postgresql`"):
        gradebooks.pg_bin()
    (tmp_path / "15" / "bin").mkdir(parents=True)
    (tmp_path / "15" / "bin" / "initdb").touch()
    assert gradebooks.pg_bin() == tmp_path / "15" / "bin"
