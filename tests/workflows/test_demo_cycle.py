"""The demo cycle on a fresh copy of the project, in the demo course (demo/): release → submissions → grade →
feedback → export → report, never touching the real course (autograder/) or its gradebook. That the demo leaves a
live course's every byte alone (its graded class, veto and reports) is proved where `make` runs it on one
(tests/test_make_again.py)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from course.workflows.demo_cycle import run_cycle
from tests.assignment.make_submissions import ROOT
from tests.made_project import made_project
from tests.workflows.live_course import demo_project

pytestmark = [
    pytest.mark.slow,
    pytest.mark.sandbox,
    pytest.mark.long(15),
    pytest.mark.usefixtures("released"),  # made from the project: lesson05's outputs in the cache demo_project copies
]


@pytest.fixture
def cycled(built_site, gradebook_db, tmp_path, tmp_path_factory, capsys) -> tuple[Path, str]:
    """A project after the demo cycle, and what the cycle printed. On SQLite, the one `make` runs on a fresh clone
    (made once per run, tests/made_project.py; never change it); on PostgreSQL (the real course's gradebook set by a
    hub config), run_cycle on what the demo needs of the project."""
    if gradebook_db.url is None:
        return made_project(tmp_path_factory)
    project = demo_project(tmp_path)
    assert run_cycle(project, "lesson05") == project / "demo"
    return project, capsys.readouterr().out


def test_a_newcomer_sees_every_step_on_the_demo_class(cycled, gradebook_db):
    from course.grading.gradebook import configured_gradebook, gradebook

    project, out = cycled
    course = project / "demo"
    for command in (
        "nbgrader generate_assignment lesson05",
        "course grade lesson05",
        "nbgrader generate_feedback lesson05",
        "nbgrader export",
        "course similarity lesson05",
    ):
        assert f"$ {command}" in out or f"$ cd demo && {command}" in out
    assert "cd demo && jupyter lab  # Nbgrader ▸ Formgrader" in out  # a server extension, not `nbgrader formgrader`
    students = ["lisi", "wangwu", "zhangsan", "zhaoliu"]
    assert sorted(p.parts[-3] for p in (course / "feedback").glob("*/lesson05/lesson05.html")) == students
    with open(course / "reports" / "grades.csv", encoding="utf-8") as f:
        rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f)}
    assert rows == {"lisi": 3.0, "wangwu": 2.0, "zhangsan": 4.0, "zhaoliu": 0.0}  # written answers not graded yet
    assert "zhaoliu" in out.split("flagged for review")[1]
    with open(course / "reports" / "lesson05.csv", encoding="utf-8") as f:
        report = {r["student"]: r for r in csv.DictReader(f)}
    assert {s: r["result"] for s, r in report.items()} == {
        "zhangsan": "PASS",
        "lisi": "FAIL",
        "wangwu": "FAIL",
        "zhaoliu": "INCOMPLETE",
    }  # the rules, from graders.yml
    assert report["wangwu"]["vetoes"] == "activation-shard" and report["lisi"]["total"] == "6.5"
    html = (course / "reports" / "lesson05.html").read_text("utf-8")
    assert "activation-shard" in html and "INCOMPLETE" in html
    assert (course / "reports" / "lesson05-similarity.json").is_file()  # what formgrader shows beside the answers
    assert "zhaoliu" in report["lisi"]["similar_pair"]  # zhaoliu's Q3 is lisi's, lightly reworded
    assert "zhangsan" not in report["lisi"]["similar_pair"] + report["zhaoliu"]["similar_pair"]
    demo_db = configured_gradebook(course)
    assert demo_db.url == f"sqlite:///{course / 'gradebook.db'}"  # its own, whatever db_url a hub config sets
    with gradebook(demo_db.url) as gb:  # the graders' points went to the demo's gradebook
        assert gb.find_grade("answer-Q1", "lesson05", "lesson05", "zhangsan").manual_score is not None
    # finding 1 of issue 34: the demo graded its class in the real course's gradebook (autograder/gradebook.db, or
    # the database a hub's db_url names), so the real reports and LMS exports counted the demo students
    real = project / "autograder"
    assert not any(
        (real / folder).exists()
        for folder in ("gradebook.db", "submitted", "autograded", "feedback", "release", "reports", "vetoes")
    )
    if gradebook_db.url:
        from tests.gradebooks import gradebook_rows

        assert configured_gradebook(real).url == gradebook_db.url
        rows = gradebook_rows(gradebook_db.url)
        assert rows["student"] == [] and rows["submitted_assignment"] == [] and rows["grade"] == []
    assert "autograder/ (the course) left alone: release none, 0 submitted notebook(s)" in out


def test_a_lesson_without_a_demo_class_is_named(tmp_path):
    from course.errors import CourseError

    for folder in ("lessons", "demo/classes"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    with pytest.raises(
        CourseError,
        match=r"no demo class for lesson09: expected classes/lesson09/students.yml "
        r"\(lessons with one: lesson05\)",
    ):
        run_cycle(tmp_path, "lesson09")


def test_demo_notebooks_made_from_an_older_release_are_rewritten(released, tmp_path):
    from course.workflows.demo_cycle import write_submissions

    root = tmp_path / "demo"
    shutil.copytree(released, root)
    shutil.copytree(ROOT / "demo" / "classes", root / "classes")
    assert write_submissions(root, "lesson05") == []  # the committed demo class is made from this very release
    stale = root / "classes" / "lesson05" / "lisi" / "lesson05.ipynb"
    stale.write_text(stale.read_text("utf-8").replace("✓", "ok"), "utf-8")  # a test cell as an older release had it
    assert write_submissions(root, "lesson05") == [stale]
    committed = ROOT / "demo" / "classes" / "lesson05" / "lisi" / "lesson05.ipynb"
    assert stale.read_text("utf-8") == committed.read_text("utf-8")


def test_the_live_course_is_said_to_have_no_gradebook_or_one_that_cannot_be_read(tmp_path, monkeypatch):
    from course.workflows.demo_cycle import left_alone

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))  # no config of the machine's is read
    course = tmp_path / "autograder"
    course.mkdir()
    assert ", no gradebook, veto records" in left_alone(course, tmp_path / "demo")
    (course / "gradebook.db").write_text("not a database\n" * 100, "utf-8")
    said = left_alone(course, tmp_path / "demo")
    assert ", gradebook not read (gradebook sqlite:///" in said and "cannot read the gradebook: " in said
