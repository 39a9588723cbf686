"""A semester for the semester report's tests: a course root with lessons 05, 07 and 09, its gradebook (SQLite, or
PostgreSQL set by a hub config) holding lesson05's demo class and lesson07's class, nothing of lesson09."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.grading.gradebook import configured_gradebook
from course.grading.rubric import load_rubric
from tests.grading.report_class import DEMO, DEMO_VETOES, RUBRIC, fill_gradebook

ROOT = Path(__file__).resolve().parents[2]
SECOND = ROOT / "tests" / "lesson_content" / "second_lesson"
RUBRIC7 = SECOND / "autograder" / "rubrics" / "lesson07.yml"
# lesson07 (5 points, pass line 4): wang-fang has no submission; ada submitted only lesson07.
LESSON07 = {
    "li-lei": {"test-bubble": 1, "test-split": 1, "answer-Q1": 2, "answer-Q2": 1},  # 5 PASS
    "han-meimei": {"test-bubble": 1, "test-split": 1, "answer-Q1": 2, "answer-Q2": 0},  # 4 PASS
    "zhang-wei": {"test-bubble": 0, "test-split": 0, "answer-Q1": 2, "answer-Q2": 0},  # 2 FAIL
    "chen-jing": {"test-bubble": 1, "test-split": 1, "answer-Q1": 2, "answer-Q2": 1},  # 5 PASS
    "liu-yang": {"test-bubble": 1, "test-split": 1, "answer-Q1": 2, "answer-Q2": 1},  # 5 PASS
    "zhao-min": {"test-bubble": 1, "test-split": 0, "answer-Q1": 2, "answer-Q2": 0},  # 3 FAIL
    "ada": {"test-bubble": 1, "test-split": 1, "answer-Q1": 2, "answer-Q2": 1},  # 5 PASS
}
PEOPLE = {
    "li-lei": {"first_name": "雷", "last_name": "李", "email": "lilei@example.edu", "lms_user_id": "1001"},
    "ada": {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.edu"},
}
UNGRADED_QMD = '---\ntitle: "第 9 课：还没有人交"\nlesson: 9\n---\n\n## 本课目标\n\n尚未评分的一课。\n'


def fill_semester(url: str) -> None:
    """The semester's classes stored in the gradebook at URL: lesson05's demo class, lesson07's, their people."""
    fill_gradebook(url, "lesson05", DEMO["students"], load_rubric(RUBRIC).grade_ids())
    fill_gradebook(url, "lesson07", {s: {"scores": v} for s, v in LESSON07.items()}, load_rubric(RUBRIC7).grade_ids())
    with Gradebook(url) as gb:
        for student, fields in PEOPLE.items():
            gb.update_or_create_student(student, **fields)


@pytest.fixture(scope="module")
def filled_semesters(tmp_path_factory, empty_gradebook, request):
    """A function giving, per database kind, a gradebook the semester's classes were stored in once (on first use),
    which each test's own is copied from: an SQLite file, or a PostgreSQL database's URL."""
    filled: dict[str, Path | str] = {}

    def filled_for(kind: str) -> Path | str:
        if kind not in filled:
            if kind == "sqlite":
                filled[kind] = tmp_path_factory.mktemp("semester") / "gradebook.db"
                shutil.copy(empty_gradebook, filled[kind])
                fill_semester(f"sqlite:///{filled[kind]}")
            else:
                filled[kind] = request.getfixturevalue("postgres_server").new_gradebook()
                fill_semester(filled[kind])
        return filled[kind]

    return filled_for


@pytest.fixture
def semester(tmp_path, gradebook_db, filled_semesters, request):
    """A function making a course root with lessons 05, 07 and 09 and [tool.course] CONFIG; its gradebook (SQLite or
    PostgreSQL) holds lesson05's demo class and lesson07's class, nothing of lesson09, plus EXTRA assignments."""

    def build(config: str = "", *, extra: tuple[str, ...] = ()) -> Path:
        lessons, rubrics = tmp_path / "lessons", tmp_path / "autograder" / "rubrics"
        rubrics.mkdir(parents=True, exist_ok=True)
        shutil.copytree(SECOND / "lessons", lessons, dirs_exist_ok=True)
        shutil.copy(ROOT / "lessons" / "lesson05.qmd", lessons / "lesson05.qmd")
        shutil.copytree(ROOT / "lessons" / "lesson05", lessons / "lesson05", dirs_exist_ok=True)
        (lessons / "lesson09").mkdir(exist_ok=True)
        (lessons / "lesson09.qmd").write_text(UNGRADED_QMD, "utf-8")
        (lessons / "lesson09" / "checks.yml").write_text("version: 1\nlesson: lesson09\nitems: {}\n", "utf-8")
        shutil.copy(RUBRIC, rubrics / "lesson05.yml")
        shutil.copy(RUBRIC7, rubrics / "lesson07.yml")
        (tmp_path / "autograder" / "vetoes").mkdir(exist_ok=True)
        shutil.copy(DEMO_VETOES, tmp_path / "autograder" / "vetoes" / "lesson05.yml")
        (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.course]\n{config}', "utf-8")
        filled = filled_semesters(gradebook_db.kind)
        if gradebook_db.url is None:
            shutil.copy(filled, tmp_path / "autograder" / "gradebook.db")
        else:
            request.getfixturevalue("postgres_server").copy_gradebook(filled, gradebook_db.url)
        with Gradebook(db_url(tmp_path)) as gb:
            for name in extra:
                gb.add_assignment(name)
        return tmp_path

    return build


def db_url(root: Path) -> str:
    """The URL nbgrader's config gives the course's gradebook."""
    return configured_gradebook(root / "autograder").url
