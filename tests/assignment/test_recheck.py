"""The out-of-process re-check: plain numbers compared outside the student's code; verdicts into the gradebook."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course.grading.recheck import HARNESS, ItemVerdict, apply_rechecks, recheck_submission, student_code
from course.grading.rubric import load_rubric
from course.grading.sandbox import PythonRun
from tests.assignment.make_submissions import OUT, ROOT

RUBRIC = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
ITEMS = [c.id for c in RUBRIC.code_items]


def recheck(name: str, **kwargs) -> dict[str, bool]:
    """Which items a committed sample passes, re-checked in a plain subprocess."""
    verdicts = recheck_submission(OUT / f"{name}.ipynb", RUBRIC, unsafe=True, **kwargs)
    return {item: verdicts[item].passed for item in ITEMS}


@pytest.mark.parametrize("name,passed", [
    ("reference", [True, True, True, True]),
    ("forgot-extra", [True, False, True, True]),
    ("floor-division", [False, True, True, True]),
    ("cheat-always-equal", [False] * 4),
    ("cheat-float-subclass", [False] * 4),
    ("cheat-monkeypatch", [False] * 4),
    ("cheat-replaced-checker", [False] * 4),
])
def test_samples_are_decided_by_the_numbers_they_return(name, passed):
    assert list(recheck(name).values()) == passed


def test_visible_checks_alone_miss_what_hidden_checks_catch():
    assert recheck("floor-division", hidden=False)["formulas"] is True


def test_reasons_name_the_first_failing_check():
    verdicts = recheck_submission(OUT / "cheat-float-subclass.ipynb", RUBRIC, unsafe=True)
    assert "returned _Sneaky, not int or float" in verdicts["comm-volume"].reason


def test_the_course_cells_are_not_run_as_student_code():
    nb = nbformat.read(OUT / "reference.ipynb", as_version=4)
    code = student_code(nb)
    assert len(code) == 1 and code[0].startswith("def zero_memory_per_gpu(")


def test_an_unreadable_notebook_fails_every_item(tmp_path):
    (tmp_path / "x.ipynb").write_text("{", "utf-8")
    verdicts = recheck_submission(tmp_path / "x.ipynb", RUBRIC, unsafe=True)
    assert not any(v.passed for v in verdicts.values()) and "unreadable notebook" in verdicts["formulas"].reason


@pytest.mark.parametrize("output", [None, {"results": []}, {"results": "all good"},
                                    {"results": [["number", True]] * 65}, {"results": [["number", "1"]] * 65}])
def test_output_that_is_not_one_plain_number_per_call_fails_every_item(output):
    def fake_runner(code, **kwargs):
        assert code == HARNESS
        return PythonRun(0, output, "")
    verdicts = recheck_submission(OUT / "reference.ipynb", RUBRIC, runner=fake_runner)
    assert not any(v.passed for v in verdicts.values())


@pytest.mark.sandbox
def test_the_reference_passes_inside_the_bubblewrap_sandbox():
    assert all(recheck_submission(OUT / "reference.ipynb", RUBRIC)[i].passed for i in ITEMS)


def gradebook(tmp_path: Path, monkeypatch) -> str:
    """A gradebook with lesson05's two first test cells and one submission whose kernel scores are 1 and 0."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # alembic
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("lesson05")
        gb.add_notebook("lesson05", "lesson05")
        for name in ("test-formulas", "test-fp32-accum"):
            gb.add_grade_cell(name, "lesson05", "lesson05", max_score=1, cell_type="code")
        gb.add_student("s")
        gb.add_submission("lesson05", "s")
        grades = {g.name: g for g in gb.find_submission_notebook("lesson05", "lesson05", "s").grades}
        grades["test-formulas"].auto_score, grades["test-fp32-accum"].auto_score = 1.0, 0.0
        for g in grades.values():
            g.needs_manual_grade = False
        gb.db.commit()
    return url


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_only_differing_verdicts_are_written_and_they_flag_the_submission(tmp_path, monkeypatch):
    url = gradebook(tmp_path, monkeypatch)
    verdicts = {"formulas": ItemVerdict(False, "hidden check failed"), "fp32-accum": ItemVerdict(False, "x")}
    changes = apply_rechecks(url, "lesson05", "s", verdicts)
    assert [(c.item, c.kernel_score, c.recheck_score) for c in changes] == [("formulas", 1.0, 0.0)]
    with Gradebook(url) as gb:
        nb = gb.find_submission_notebook("lesson05", "lesson05", "s")
        assert nb.flagged and nb.score == 0
    assert apply_rechecks(url, "lesson05", "s", verdicts) == []
