"""The course project of an nbgrader course root: found above it by its [tool.course], wherever autograder_dir puts
the course root; a course root standing alone is named in a located error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from course.config import project_of
from course.errors import NoProject

ROOT = Path(__file__).resolve().parents[1]


def project(tmp_path, autograder_dir: str):
    """A course project whose course root sits at AUTOGRADER_DIR, with lesson05's checks in its lessons."""
    (tmp_path / "pyproject.toml").write_text(f'[tool.course]\nautograder_dir = "{autograder_dir}"\n', "utf-8")
    (tmp_path / "lessons" / "lesson05").mkdir(parents=True)
    shutil.copyfile(ROOT / "lessons" / "lesson05" / "checks.yml", tmp_path / "lessons" / "lesson05" / "checks.yml")
    root = tmp_path / autograder_dir
    root.mkdir(parents=True)
    return root


def test_the_project_of_the_repositorys_course_root_is_the_repository():
    assert project_of(ROOT / "autograder") == ROOT


def test_a_course_root_deeper_in_its_project_finds_the_project_and_its_lessons(tmp_path):
    from course.grading.load_checks import checks_for_course

    root = project(tmp_path, "grading/autograder")
    assert project_of(root) == tmp_path.resolve()  # not grading/, the course root's parent
    assert "shard-target" in {m.veto for m in checks_for_course(root, "lesson05").misconceptions}


def test_a_folder_with_a_pyproject_but_no_course_is_not_the_project(tmp_path):
    project(tmp_path, "grading/autograder")
    (tmp_path / "grading" / "pyproject.toml").write_text('[project]\nname = "x"\n', "utf-8")
    assert project_of(tmp_path / "grading" / "autograder") == tmp_path.resolve()


def test_a_folder_holding_the_lessons_beside_the_course_root_is_a_project_taking_every_default(tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "autograder").mkdir()
    assert project_of(tmp_path / "autograder") == tmp_path.resolve()


def test_a_course_root_standing_alone_is_a_located_error(tmp_path):
    alone = tmp_path / "server" / "autograder"
    alone.mkdir(parents=True)
    with pytest.raises(NoProject) as caught:
        project_of(alone)
    assert str(caught.value) == (
        f"{alone.resolve()}: no course project around this nbgrader course root: expected a pyproject.toml with "
        f"[tool.course] in {alone.resolve().parent} or a folder above it, or the lessons beside the course root "
        "(lessons/)"
    )
