"""`course check`: students see which items pass their visible checks, and nothing of the hidden ones."""

from __future__ import annotations

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
