"""A student's autograde on a private copy of the gradebook, applied to the real one: on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.grading.gradebook import gradebook_engine
from course.grading.gradebook_changes import (
    apply_changes,
    assignment_rows,
    changes,
    copy_engine,
    make_template,
    private_copy,
    read_copy,
    schema_version,
    sqlite_url,
    student_rows,
)

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgresql"])
def real_gradebook(request, tmp_path, monkeypatch) -> str:
    """A gradebook with assignment a1 (one notebook: a graded answer, a test) and student s1's submission."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # alembic
    url = (
        sqlite_url(tmp_path / "gradebook.db")
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_server").new_gradebook()
    )
    with Gradebook(url) as gb:
        gb.add_assignment("a1")
        gb.add_notebook("nb", "a1")
        gb.add_grade_cell("answer", "nb", "a1", max_score=2, cell_type="markdown")
        gb.add_solution_cell("answer", "nb", "a1")
        gb.add_grade_cell("test", "nb", "a1", max_score=1, cell_type="code")
        gb.add_student("s1")
        gb.add_submission("a1", "s1")
    return url


def private_for(url: str, tmp_path, student: str):
    """A private copy for STUDENT (assignment a1's rows and theirs), its engine and what it held at first."""
    engine = gradebook_engine(url)
    with engine.connect() as conn:
        rows, version = assignment_rows(conn, "a1"), schema_version(conn)
        mine = student_rows(conn, list(rows["assignment"]), student)
    template = make_template(tmp_path / "template.db", rows, version)
    private = copy_engine(tmp_path / f"{student}.db")
    return private, private_copy(template, private, mine), engine


def test_an_untouched_copy_has_no_changes_and_holds_only_that_student(real_gradebook, tmp_path):
    private, before, _ = private_for(real_gradebook, tmp_path, "s1")
    assert not changes(before, read_copy(private))
    assert set(before["student"]) == {"s1"} and len(before["grade"]) == 2
    with Gradebook(str(private.url)) as gb:  # nbgrader reads the copy as its own gradebook
        assert gb.find_grade("answer", "nb", "a1", "s1").max_score == 2


def test_what_autograde_writes_reaches_the_gradebook_and_a_graders_score_meanwhile_stays(real_gradebook, tmp_path):
    private, before, engine = private_for(real_gradebook, tmp_path, "s1")
    with Gradebook(str(private.url)) as gb:  # what autograde does on the copy
        gb.find_grade("test", "nb", "a1", "s1").auto_score = 1.0
        gb.find_comment("answer", "nb", "a1", "s1").auto_comment = "No response."
        gb.find_submission_notebook("nb", "a1", "s1").flagged = True
        gb.db.commit()
    with Gradebook(real_gradebook) as gb:  # meanwhile a grader scores the answer in formgrader
        gb.find_grade("answer", "nb", "a1", "s1").manual_score = 2.0
        gb.db.commit()
    found = changes(before, read_copy(private))
    assert set(found.upserts) == {"grade", "comment", "submitted_notebook"}
    assert all(
        set(row) <= {"id", "auto_score", "auto_comment", "flagged"}
        for rows in found.upserts.values()
        for row in rows.values()
    )  # only what changed travels
    with engine.begin() as conn:
        apply_changes(conn, found)
    with Gradebook(real_gradebook) as gb:
        assert gb.find_grade("test", "nb", "a1", "s1").auto_score == 1.0
        assert gb.find_grade("answer", "nb", "a1", "s1").manual_score == 2.0
        assert gb.find_comment("answer", "nb", "a1", "s1").auto_comment == "No response."
        assert gb.find_submission_notebook("nb", "a1", "s1").flagged


def test_a_new_student_and_submission_arrive_whole_and_removals_too(real_gradebook, tmp_path):
    private, before, engine = private_for(real_gradebook, tmp_path, "s2")
    assert not before["student"]
    with Gradebook(str(private.url)) as gb:
        gb.add_student("s2", first_name="Ada")
        gb.add_submission("a1", "s2")
        gb.find_grade("test", "nb", "a1", "s2").auto_score = 0.0
        gb.db.commit()
    with engine.begin() as conn:
        apply_changes(conn, changes(before, read_copy(private)))
    with Gradebook(real_gradebook) as gb:
        assert gb.find_student("s2").first_name == "Ada"
        assert gb.find_grade("test", "nb", "a1", "s2").auto_score == 0.0
        assert len(gb.find_submission("a1", "s2").notebooks[0].grades) == 2
    private, before, engine = private_for(real_gradebook, tmp_path, "s2")
    with Gradebook(str(private.url)) as gb:
        gb.remove_submission("a1", "s2")
    with engine.begin() as conn:
        apply_changes(conn, changes(before, read_copy(private)))
    with Gradebook(real_gradebook) as gb:
        assert [s.student.id for s in gb.assignment_submissions("a1")] == ["s1"]
