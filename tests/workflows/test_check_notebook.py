"""`course check`: students see which items pass their visible checks, and nothing of the hidden ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from course.cli import main
from tests.assignment.make_submissions import OUT, ROOT
from tests.nbgrader_hooks.test_feedback import leaked


def check(capsys, notebook) -> tuple[int, str]:
    """Exit status and output of `course check NOTEBOOK`."""
    code = main(["check", str(notebook), "--autograder", str(ROOT / "autograder")])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("name,code,failing", [
    ("reference", 0, []),
    ("forgot-extra", 1, ["FP32 累积分支"]),
    ("swapped-comm-volumes", 1, ["通信量"]),
    ("floor-division", 0, []),  # only the hidden checks catch it
    ("release", 1, ["三档公式", "FP32 累积分支", "通信量", "dp=1 交叉验证"]),
])
def test_each_item_is_reported_from_the_visible_checks_only(capsys, name, code, failing):
    status, out = check(capsys, OUT / f"{name}.ipynb")
    assert status == code
    assert [line.split("✗ ")[1].split(":")[0] for line in out.splitlines() if "✗ " in line] == failing
    assert leaked(out) == []


def test_a_file_that_is_not_a_lesson_notebook_is_named(capsys, tmp_path):
    (tmp_path / "notes.ipynb").write_text("{}", "utf-8")
    status, out = check(capsys, tmp_path / "notes.ipynb")
    assert status == 2 and "notes.ipynb: no graded exercise for notes" in out


def test_a_known_mistake_is_named_to_the_student_before_submitting(capsys):
    status, out = check(capsys, OUT / "zero2-shards-params.ipynb")
    assert status == 1 and "诊断：ZeRO-2 把参数也分片了——ZeRO-2 只分片优化器状态和梯度" in out and leaked(out) == []


def reading_the_solutions(tmp_path) -> Path:
    """The reference notebook whose answer cell takes the course's own solutions file instead of solving."""
    nb = nbformat.read(OUT / "reference.ipynb", as_version=4)
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex-zero-memory")
    answer.source = f"exec(open({str(ROOT / 'solutions' / 'lesson05.py')!r}).read())"
    path = tmp_path / "lesson05.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.sandbox
def test_the_students_code_runs_sandboxed_and_cannot_read_the_courses_solutions(capsys, tmp_path):
    hostile = reading_the_solutions(tmp_path)
    assert main(["check", str(hostile), "--unsafe", "--autograder", str(ROOT / "autograder")]) == 0  # it works...
    capsys.readouterr()
    status, out = check(capsys, hostile)  # ...but not in the sandbox
    assert status == 1 and "0/4 items pass" in out and "FileNotFoundError" in out


@pytest.mark.sandbox
def test_it_works_from_a_students_folder_outside_the_course(capsys, tmp_path, monkeypatch):
    shutil.copy(OUT / "reference.ipynb", tmp_path / "lesson05.ipynb")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "lesson05.ipynb"]) == 0
    assert "4/4 items pass" in capsys.readouterr().out


def test_without_a_course_it_names_the_folder_it_needs(capsys, tmp_path, monkeypatch):
    import course.workflows.check_notebook as module

    shutil.copy(OUT / "reference.ipynb", tmp_path / "lesson05.ipynb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(module, "__file__", str(tmp_path / "site-packages" / "course" / "workflows" / "x.py"))
    assert main(["check", "lesson05.ipynb"]) == 2
    err = capsys.readouterr().err
    assert "needs the course's nbgrader folder" in err and "rubrics/lesson05.yml" in err and "--autograder" in err


def test_without_bubblewrap_it_says_what_to_do_and_runs_nothing(capsys, tmp_path, monkeypatch):
    import course.grading.recheck as recheck

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    monkeypatch.setattr(recheck, "run_cells", lambda *a, **k: pytest.fail("ran the student's code"))
    status, out = check(capsys, OUT / "reference.ipynb")
    assert status == 2 and "bubblewrap (bwrap) is not installed" in out and "sudo apt-get install bubblewrap" in out
    assert "nbgrader validate reference.ipynb" in out and "course check --unsafe reference.ipynb" in out


def test_a_wrong_autograder_folder_is_named_as_such(capsys, tmp_path):
    status = main(["check", str(OUT / "reference.ipynb"), "--autograder", str(tmp_path / "autograder")])
    err = capsys.readouterr().err
    assert status == 2 and "expected the course's nbgrader folder" in err and "no graded exercise" not in err
