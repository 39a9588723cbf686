"""What a lesson's figures.py declares with: its solution read from the project, course modules as inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.errors import CourseError
from course.figures.declare import load_solution, package_file


def test_load_solution_reads_the_given_project_not_sys_path(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "lesson05.py").write_text("MARK = 'tmp project'\n", "utf-8")
    assert load_solution(tmp_path, "solutions/lesson05.py").MARK == "tmp project"


def test_a_missing_solution_is_named(tmp_path):
    with pytest.raises(CourseError, match="reference solution not found") as error:
        load_solution(tmp_path, "solutions/lesson09.py")
    assert str(error.value.where) == "solutions/lesson09.py"


def test_a_solution_that_is_not_python_is_located(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "lesson09.py").write_text("x = 1\ndef broken(:\n", "utf-8")
    with pytest.raises(CourseError, match="expected valid Python") as error:
        load_solution(tmp_path, "solutions/lesson09.py")
    assert str(error.value.where) == "solutions/lesson09.py, line 2"


def test_package_file_is_the_installed_modules_own_source():
    path = Path(package_file("course.figures.render"))
    assert path.is_absolute() and path.name == "render.py"
    assert "def render_png" in path.read_text("utf-8")
