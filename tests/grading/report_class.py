"""A class of lesson05 written straight into a real nbgrader gradebook (SQLite, or PostgreSQL set by a hub config), as
autograde and formgrader store it, for the report's tests; and how to read the report's CSV rows and HTML sections."""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
import sqlalchemy
import yaml
from nbgrader.api import Gradebook

from course.grading.rubric import load_rubric

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = ROOT / "autograder" / "rubrics" / "lesson05.yml"
DEMO_VETOES = Path(__file__).parent / "fixtures" / "report" / "demo-class-vetoes.yml"
FIXTURES = Path(__file__).parent / "fixtures" / "report"
DEMO = yaml.safe_load((FIXTURES / "demo-class.yml").read_text("utf-8"))
FULL = {
    "test-formulas": 1,
    "test-fp32-accum": 1,
    "test-comm-volume": 1,
    "test-dp1-cross-check": 1,
    "answer-Q1": 2,
    "answer-Q2": 2,
    "answer-Q3": 2,
}


@pytest.fixture(scope="session")
def empty_gradebook(tmp_path_factory) -> Path:
    """One freshly created nbgrader gradebook (creating one runs alembic, ~2 s), copied by each test."""
    db = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        Gradebook(f"sqlite:///{db}").close()
    return db


@pytest.fixture
def course(tmp_path, empty_gradebook, gradebook_db):
    """A function building a course root whose gradebook (SQLite, or PostgreSQL set by a hub config) holds the
    given class of lesson05."""

    def build(
        students: dict,
        *,
        vetoes: Path | str | None = DEMO_VETOES,
        assignment: str = "lesson05",
        points: dict[str, float] | None = None,
    ) -> Path:
        autograder = tmp_path / "autograder"
        (autograder / "rubrics").mkdir(parents=True, exist_ok=True)
        shutil.copy(RUBRIC, autograder / "rubrics" / "lesson05.yml")
        shutil.copytree(ROOT / "lessons" / "lesson05", tmp_path / "lessons" / "lesson05", dirs_exist_ok=True)
        if gradebook_db.url is None:
            shutil.copy(empty_gradebook, autograder / "gradebook.db")
        if vetoes is not None:
            (autograder / "vetoes").mkdir(exist_ok=True)
            text = vetoes.read_text("utf-8") if isinstance(vetoes, Path) else vetoes
            (autograder / "vetoes" / "lesson05.yml").write_text(text, "utf-8")
        fill_gradebook(
            gradebook_db.url or f"sqlite:///{autograder / 'gradebook.db'}",
            assignment,
            students,
            points or load_rubric(RUBRIC).grade_ids(),
        )
        for student, spec in students.items():
            if "answers" in spec:
                write_autograded(
                    autograder / "autograded" / student / assignment / f"{assignment}.ipynb", spec["answers"]
                )
        return tmp_path

    return build


def fill_gradebook(db_url: str, assignment: str, students: dict, points: dict[str, float]) -> None:
    """Grade cells, students and scores stored the way nbgrader autograde and formgrader store them."""
    with Gradebook(db_url) as gb:
        if db_url.startswith("sqlite:"):  # nbgrader commits each row it adds: no fsync of a test's file for each
            gb.db.execute(sqlalchemy.text("PRAGMA synchronous = OFF"))
        gb.add_assignment(assignment)
        gb.add_notebook(assignment, assignment)
        for grade_id, max_score in points.items():
            is_code = grade_id.startswith("test-")
            gb.add_grade_cell(
                grade_id, assignment, assignment, max_score=max_score, cell_type="code" if is_code else "markdown"
            )
            if not is_code:
                gb.add_solution_cell(grade_id, assignment, assignment)
        for student, spec in students.items():
            gb.update_or_create_student(student)  # one student may have several lessons
            gb.add_submission(assignment, student)
            for grade_id, score in spec["scores"].items():
                grade = gb.find_grade(grade_id, assignment, assignment, student)
                if grade_id.startswith("test-"):
                    grade.auto_score = score
                else:
                    grade.manual_score = score
                grade.needs_manual_grade = score is None
            for grade_id, text in spec.get("comments", {}).items():
                gb.find_comment(grade_id, assignment, assignment, student).manual_comment = text
            gb.db.commit()


def write_autograded(path: Path, answers: dict[str, str]) -> None:
    """An autograded notebook whose answer cells carry nbgrader's grade ids."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(
            text, metadata={"nbgrader": {"grade_id": f"answer-{qid}", "grade": True, "solution": True, "points": 2}}
        )
        for qid, text in answers.items()
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def report_rows(csv_path: Path) -> dict[str, dict[str, str]]:
    """The report CSV keyed by student."""
    return {r["student"]: r for r in csv.DictReader(io.StringIO(csv_path.read_text("utf-8")))}


def student_section(html: str, student: str) -> str:
    """One student's section of the HTML report."""
    match = re.search(rf'<section class="student" id="student-{student}".*?</section>', html, re.S)
    assert match, f"no section for {student}"
    return match.group(0)
