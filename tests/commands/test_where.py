"""Every `course` command finds its course from any folder inside it, as git finds its repository, and says which
(issue 34, finding 4: from autograder/, as docs/graders.md has graders stand, `course report lesson05` said
`rubrics/lesson05.yml: file not found`)."""

from __future__ import annotations

import shutil

import pytest

from course.cli import COMMANDS, _module, main
from course.commands.where import ROOT_HELP
from course.config import find_course
from tests.assignment.make_submissions import OUT
from tests.classes import submit


def test_the_course_is_the_nearest_folder_whose_pyproject_declares_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.course]\ncourse_title = "x"\n', "utf-8")
    (tmp_path / "autograder" / "submitted" / "ada").mkdir(parents=True)
    (tmp_path / "autograder" / "pyproject.toml").write_text('[project]\nname = "not-a-course"\n', "utf-8")
    assert find_course(tmp_path / "autograder" / "submitted" / "ada") == tmp_path
    assert find_course(tmp_path) == tmp_path and find_course(tmp_path.parent) is None


@pytest.mark.sandbox
@pytest.mark.slow
def test_grade_and_report_work_from_inside_autograder_and_say_which_course(released, tmp_path, monkeypatch, capsys):
    project = tmp_path / "course"
    shutil.copytree(released.parent / "lessons", project / "lessons")
    (project / "pyproject.toml").write_text('[project]\nname = "course"\n\n[tool.course]\n', "utf-8")
    root = project / "autograder"
    shutil.copytree(released, root)
    submit(root, "reference", OUT / "reference.ipynb")
    monkeypatch.chdir(root / "submitted")
    assert main(["grade", "lesson05"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"course grade: the course at {project}"
    monkeypatch.chdir(root)
    assert main(["report", "lesson05"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"course report: the course at {project}"
    assert f"wrote {root / 'reports' / 'lesson05.html'}" in out and (root / "reports" / "lesson05.csv").is_file()


@pytest.mark.sandbox
@pytest.mark.slow
def test_report_and_similarity_work_on_the_nbgrader_course_autograder_names_and_leave_the_courses_alone(
    released, tmp_path, monkeypatch, capsys
):
    """As the demo's printed steps have them (`--autograder demo`): the veto, the report and the similarity files
    go to the course named, and autograder/ (the real class) gets none of them."""
    project = tmp_path / "course"
    shutil.copytree(released.parent / "lessons", project / "lessons")
    (project / "pyproject.toml").write_text('[project]\nname = "course"\n\n[tool.course]\n', "utf-8")
    shutil.copytree(released, project / "autograder")
    demo = project / "demo"
    shutil.copytree(released, demo)
    submit(demo, "reference", OUT / "reference.ipynb")
    monkeypatch.chdir(project)
    assert main(["grade", "lesson05", "--autograder", "demo"]) == 0
    capsys.readouterr()
    veto = ["--veto", "reference", "Q2", "comm-volume", "--note", "通信量写成 Ψ"]
    assert main(["report", "lesson05", "--autograder", "demo", *veto]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [f"course report: the course at {project}", f"course report: the nbgrader course root {demo}"]
    assert "comm-volume" in (demo / "vetoes" / "lesson05.yml").read_text("utf-8")
    assert (demo / "reports" / "lesson05.csv").is_file() and (demo / "reports" / "lesson05.html").is_file()
    assert main(["similarity", "lesson05", "--autograder", "demo"]) == 0
    assert (demo / "reports" / "lesson05-similarity.json").is_file()
    assert not (project / "autograder" / "reports").exists() and not (project / "autograder" / "vetoes").exists()
    assert main(["report", "lesson05", "--autograder", "lessons"]) == 2  # not an nbgrader course root: said
    assert "not an nbgrader course root" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["build"], ["report"], ["report", "lesson05"], ["grade", "lesson05"]])
def test_a_command_outside_any_course_says_so_and_names_root(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    assert main(command) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no "the course at /" before failing
    assert captured.err == (
        f"course {command[0]}: no course here or above ({tmp_path.resolve()}: no pyproject.toml "
        "with [tool.course] in it or a folder above it); use `--root` to name the course "
        "repository\n"
    )


@pytest.fixture
def course_with_lesson05(released, tmp_path):
    """A course repository around a released lesson05 (no gradebook needed for the names)."""
    project = tmp_path / "course"
    (project / "pyproject.toml").parent.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "course"\n\n[tool.course]\n', "utf-8")
    shutil.copytree(released, project / "autograder")
    return project


@pytest.mark.parametrize(
    "command", [["grade", "lesson5"], ["report", "lesson5"], ["extend", "lesson5", "2026001", "--hours", "2"]]
)
def test_an_unknown_lesson_names_what_exists_and_the_nearest(course_with_lesson05, monkeypatch, capsys, command):
    monkeypatch.chdir(course_with_lesson05)
    assert main(command) == 2
    from course.grading.assignments import known_assignments

    known = known_assignments(course_with_lesson05 / "autograder")  # lesson05, and any lesson added to the course
    assert "lesson05" in known
    assert capsys.readouterr().err == (
        f"course {command[0]}: rubrics: no assignment 'lesson5': there are {', '.join(known)}; did you mean lesson05?\n"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_with_a_root_option_finds_the_course_around_the_current_folder(command):
    """A command added later (roster, extend) gets --root with no fixed default, so course_root finds the course."""
    import argparse
    import importlib

    parser = argparse.ArgumentParser()
    importlib.import_module(_module(command)).add_arguments(parser)
    root = next((a for a in parser._actions if "--root" in a.option_strings), None)
    assert root is None or (root.default is None and root.help == ROOT_HELP), command


def test_grade_force_with_a_mistyped_student_names_the_nearest(course_with_lesson05, monkeypatch, capsys):
    for student in ("2026001", "2026002"):
        submit(course_with_lesson05 / "autograder", student, OUT / "reference.ipynb")
    monkeypatch.chdir(course_with_lesson05)
    assert main(["grade", "lesson05", "--force", "2026O01"]) == 2
    assert capsys.readouterr().err == (
        "course grade: submitted: --force names students without a submission: 2026O01 (did you mean 2026001?)\n"
    )
