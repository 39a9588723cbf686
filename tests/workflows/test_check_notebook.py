"""`course check`: students see which items pass their visible checks, and nothing of the hidden ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from course.cli import main
from tests.assignment.hidden_checks import leaked
from tests.assignment.make_submissions import OUT, ROOT
from tests.lesson_cases import LESSONS


def check(capsys, notebook) -> tuple[int, str]:
    """Exit status and output of `course check NOTEBOOK`."""
    code = main(["check", str(notebook), "--autograder", str(ROOT / "autograder")])
    out = capsys.readouterr()
    return code, out.out + out.err


def handed_in(folder: Path, sample: str | Path, name: str = "lesson05.ipynb", answered: bool = True) -> Path:
    """FOLDER/NAME: a sample submission as a student would hand it in, with Q1–Q3 answered (unless not ANSWERED)."""
    nb = nbformat.read(OUT / f"{sample}.ipynb" if isinstance(sample, str) else sample, as_version=4)
    for cell in nb.cells:
        if answered and cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith("answer-Q"):
            cell.source = "ZeRO-3 把参数也按 N_d 分片，前向和反向各 all-gather 一次。"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / name)
    return folder / name


@pytest.mark.parametrize(
    "name,code,failing",
    [
        ("reference", 0, []),
        ("forgot-extra", 1, ["FP32 累积分支"]),
        ("swapped-comm-volumes", 1, ["通信量"]),
        ("floor-division", 0, []),  # only the hidden checks catch it
        ("release", 1, ["三档公式", "FP32 累积分支", "通信量", "交叉验证"]),
    ],
)
def test_each_item_is_reported_from_the_visible_checks_only(capsys, tmp_path, name, code, failing):
    status, out = check(capsys, handed_in(tmp_path, name))
    assert status == code
    assert [line.split("✗ ")[1].split(":")[0] for line in out.splitlines() if "✗ " in line] == failing
    assert leaked(out) == []


def test_a_file_that_is_not_a_lesson_notebook_is_named(capsys, tmp_path):
    (tmp_path / "notes.ipynb").write_text("{}", "utf-8")
    status, out = check(capsys, tmp_path / "notes.ipynb")
    assert status == 2 and "notes.ipynb: notes 没有评分的练习" in out


def test_a_known_mistake_is_named_to_the_student_before_submitting(capsys, tmp_path):
    status, out = check(capsys, handed_in(tmp_path, "zero2-shards-params"))
    assert status == 1 and "诊断：ZeRO-2 把参数也分片了——ZeRO-2 只分片优化器状态和梯度" in out and leaked(out) == []


def reading_the_solutions(tmp_path) -> Path:
    """The reference notebook whose answer cell takes the course's own solutions file instead of solving."""
    path = handed_in(tmp_path, "reference")
    nb = nbformat.read(path, as_version=4)
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex-zero-memory")
    answer.source = f"exec(open({str(ROOT / 'solutions' / 'lesson05.py')!r}).read())"
    nbformat.write(nb, path)
    return path


@pytest.mark.sandbox
def test_the_students_code_runs_sandboxed_and_cannot_read_the_courses_solutions(capsys, tmp_path):
    hostile = reading_the_solutions(tmp_path)
    assert main(["check", str(hostile), "--unsafe", "--autograder", str(ROOT / "autograder")]) == 0  # it works...
    capsys.readouterr()
    status, out = check(capsys, hostile)  # ...but not in the sandbox
    assert status == 1 and "0/4 项通过可见检查" in out and "FileNotFoundError" in out


@pytest.mark.sandbox
def test_it_works_from_a_students_folder_outside_the_course(capsys, tmp_path, monkeypatch):
    handed_in(tmp_path, "reference")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "lesson05.ipynb"]) == 0
    out = capsys.readouterr().out
    assert "4/4 项通过可见检查" in out and f"本课程的 nbgrader 文件夹 {ROOT / 'autograder'}" in out


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
    assert status == 2 and "没有安装 bubblewrap（bwrap）" in out and "sudo apt-get install bubblewrap" in out
    assert "nbgrader validate reference.ipynb" in out and "course check --unsafe reference.ipynb" in out


def test_a_wrong_autograder_folder_is_named_as_such(capsys, tmp_path):
    status = main(["check", str(OUT / "reference.ipynb"), "--autograder", str(tmp_path / "autograder")])
    err = capsys.readouterr().err
    assert status == 2 and "expected the course's nbgrader folder" in err and "no graded exercise" not in err


# ---------------------------------------------------------------- what grading would take otherwise (issue 34, 3)


def test_the_lessons_reading_notebook_is_not_the_assignment_and_says_which_to_hand_in(capsys, built_site, tmp_path):
    """The notes notebook, filled in and named as the assignment, passed 4/4 and was then graded FAIL 4/10."""
    notes = handed_in(tmp_path, built_site / "student" / "lesson05-notes.ipynb")
    status, out = check(capsys, notes)
    assert status == 1 and "not the assignment notebook: this is the lesson's reading notebook" in out
    assert "修正：download the assignment lesson05.ipynb" in out and "项通过可见检查" not in out


def test_the_assignment_under_another_name_fails_the_check_with_the_name_grading_takes(capsys, tmp_path):
    """Saved as lesson05-assignment.ipynb, it said 4/4 and exit 0; grading scored it 0 until renamed."""
    status, out = check(capsys, handed_in(tmp_path, "reference", name="lesson05-assignment.ipynb"))
    assert status == 1 and "4/4 项通过可见检查" in out
    assert "lesson05-assignment.ipynb: 评分只收 lesson05.ipynb" in out and "修正：以 lesson05.ipynb 为名提交" in out


def test_another_lessons_notebook_named_as_this_lesson_is_the_wrong_assignment(capsys, tmp_path):
    """The other lesson is one this course does not have (were it a lesson with checks, `course check` would check
    the notebook as that lesson's, handed in under this lesson's name, and say so instead)."""
    other = next(stem for stem in (f"lesson{n:02d}" for n in range(1, 100)) if stem not in LESSONS)
    path = handed_in(tmp_path, "reference")
    nb = nbformat.read(path, as_version=4)
    nb.metadata["course"]["lesson"] = other
    nbformat.write(nb, path)
    status, out = check(capsys, path)
    assert status == 1 and f"this is {other}'s notebook, not lesson05's" in out


def test_edited_and_deleted_locked_cells_are_named_with_the_fix(capsys, tmp_path):
    path = handed_in(tmp_path, "reference")
    nb = nbformat.read(path, as_version=4)
    grade_ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    nb.cells[grade_ids.index("test-formulas")].source = "print('all good')"
    del nb.cells[grade_ids.index("test-comm-volume")]
    nbformat.write(nb, path)
    status, out = check(capsys, path)
    assert status == 1 and "4/4 项通过可见检查" in out
    assert "cell test-formulas: read-only cell was edited; graded with the original" in out
    assert "cell test-comm-volume: cell was deleted" in out and out.count("修正：") == 2


def test_questions_left_empty_fail_the_check(capsys, tmp_path):
    status, out = check(capsys, handed_in(tmp_path, "reference", answered=False))
    assert status == 1 and "4/4 项通过可见检查" in out
    assert [q for q in ("Q1", "Q2", "Q3") if f"cell answer-{q}: {q} 还没有作答" in out] == ["Q1", "Q2", "Q3"]


@pytest.mark.sandbox
def test_it_speaks_the_courses_language_and_english_where_the_course_sets_none(capsys, tmp_path):
    """This course sets `[tool.course] language = "zh_CN"`: the command's own lines are Chinese. A course without
    the setting (an autograder/ whose project has no pyproject.toml) gets them as written, in English."""
    notebook = handed_in(tmp_path / "student", "reference")
    status, out = check(capsys, notebook)
    assert status == 0 and "可见检查全部通过" in out and "4/4 项通过可见检查" in out and "items pass" not in out
    plain = tmp_path / "plain" / "autograder"
    shutil.copytree(
        ROOT / "autograder",
        plain,
        ignore=shutil.ignore_patterns(
            "submitted", "autograded", "feedback", "exchange", "gradebook.db", "reports", ".course-grade"
        ),
    )
    assert main(["check", str(notebook), "--autograder", str(plain)]) == 0
    out = capsys.readouterr().out
    assert "4/4 items pass their visible checks" in out and "every visible check passes" in out and "项" not in out
