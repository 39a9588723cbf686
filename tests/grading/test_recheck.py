"""The out-of-process re-check: plain values compared outside the student's code; diagnoses; verdicts into the
gradebook."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course.grading.checks import AssignmentSpec, Item, parse_check
from course.grading.recheck import (
    CELL_SECONDS,
    PROGRAM,
    ItemVerdict,
    apply_rechecks,
    recheck_code,
    recheck_submission,
    student_code,
)
from course.grading.rubric import CodeItem, Rubric, load_rubric
from course.sandbox.answer import PythonRun
from tests.assignment.make_submissions import OUT, ROOT

RUBRIC = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
ITEMS = [c.id for c in RUBRIC.code_items]


def recheck(name: str, **kwargs) -> dict[str, bool]:
    """Which items a committed sample passes, re-checked in a plain subprocess."""
    verdicts = recheck_submission(OUT / f"{name}.ipynb", RUBRIC, unsafe=True, **kwargs)
    return {item: verdicts[item].passed for item in ITEMS}


@pytest.mark.parametrize(
    "name,passed",
    [
        ("reference", [True, True, True, True]),
        ("forgot-extra", [True, False, True, True]),
        ("floor-division", [False, True, True, True]),
        ("cheat-always-equal", [False] * 4),
        ("cheat-float-subclass", [False] * 4),
        ("cheat-monkeypatch", [False] * 4),
        ("cheat-replaced-checker", [False] * 4),
    ],
)
def test_samples_are_decided_by_the_numbers_they_return(name, passed):
    assert list(recheck(name).values()) == passed


def test_visible_checks_alone_miss_what_hidden_checks_catch():
    assert recheck("floor-division", hidden=False)["formulas"] is True


def test_reasons_name_the_first_failing_check():
    verdicts = recheck_submission(OUT / "cheat-float-subclass.ipynb", RUBRIC, unsafe=True)
    assert "returned _Sneaky, not int, float, bool, str, None" in verdicts["comm-volume"].reason


def test_the_course_cells_are_not_run_as_student_code():
    nb = nbformat.read(OUT / "reference.ipynb", as_version=4)
    code = student_code(nb)
    assert len(code) == 1 and code[0].startswith("def zero_memory_per_gpu(")


def test_an_unreadable_notebook_fails_every_item(tmp_path):
    (tmp_path / "x.ipynb").write_text("{", "utf-8")
    verdicts = recheck_submission(tmp_path / "x.ipynb", RUBRIC, unsafe=True)
    assert not any(v.passed for v in verdicts.values()) and "unreadable notebook" in verdicts["formulas"].reason


CALLS = 65  # distinct calls of lesson05's checks and misconceptions


@pytest.mark.parametrize(
    "output",
    [
        None,
        {"results": []},
        {"results": "all good"},
        {"results": [["value", ["int", True]]] * CALLS},
        {"results": [["value", ["float", "1"]]] * CALLS},
        {"results": [["value", ["dict", [[["list", []], ["int", 1]]]]]] * CALLS},
        {"results": [["value", ["set", []]]] * CALLS},
        {"results": [["number", 1]] * CALLS},
    ],
)
def test_output_that_is_not_one_plain_value_per_call_fails_every_item(output):
    def fake_runner(code, **kwargs):
        assert code == PROGRAM
        return PythonRun(0, output, "")

    verdicts = recheck_submission(OUT / "reference.ipynb", RUBRIC, runner=fake_runner)
    assert not any(v.passed for v in verdicts.values())


@pytest.mark.parametrize(
    "name,item,diagnosed",
    [
        ("zero2-shards-params", "formulas", ["zero2-shards-params"]),
        ("swapped-comm-volumes", "comm-volume", ["comm-volumes-swapped"]),
        ("forgot-extra", "fp32-accum", ["fp32-accum-missing"]),
        ("floor-division", "formulas", []),  # wrong only on hidden inputs: no known mistake matches
    ],
)
def test_a_failed_item_names_the_known_mistake_it_shows(name, item, diagnosed):
    verdicts = recheck_submission(OUT / f"{name}.ipynb", RUBRIC, unsafe=True)
    assert not verdicts[item].passed
    assert [d.id for d in verdicts[item].diagnoses] == diagnosed
    assert all(not v.diagnoses for i, v in verdicts.items() if v.passed)


def test_a_diagnosis_carries_words_for_students_and_evidence_for_graders():
    [found] = recheck_submission(OUT / "zero2-shards-params.ipynb", RUBRIC, unsafe=True)["formulas"].diagnoses
    assert found.veto == "shard-target" and "ZeRO-3" in found.explanation
    assert "zero_memory_per_gpu(7_000_000_000, 8, 2) == 14_000_000_000" in found.evidence
    assert ItemVerdict(**{"passed": False, "reason": "r", "diagnoses": [found.__dict__]}).diagnoses == (found,)


def test_the_reference_shows_no_known_mistake():
    assert not any(v.diagnoses for v in recheck_submission(OUT / "reference.ipynb", RUBRIC, unsafe=True).values())


SHAPES = Rubric(Path("shapes.yml"), "lesson99", 1, 1, (CodeItem("shape", "shape", 1, ""),), (), ())


def shapes(code: str, *checks: str) -> ItemVerdict:
    """The verdict on one item whose checks are CHECKS, for a student cell CODE."""
    spec = AssignmentSpec("lesson99", {"shape": Item("shape", "ex-shape", tuple(map(parse_check, checks)))})
    return recheck_code([code], SHAPES, spec=spec, unsafe=True)["shape"]


@pytest.mark.parametrize(
    "code,check,passes",
    [
        (
            "def f(): return {'a': (1, 2.0), 'b': [True, 'x', None]}",
            "f() == {'a': (1, 2), 'b': [True, 'x', None]}",
            True,
        ),
        (
            "def f(): return {'a': [1, 2], 'b': [True, 'x', None]}",
            "f() == {'a': (1, 2), 'b': [True, 'x', None]}",
            False,
        ),
        ("def f(): return (1, 1)", "f() == (True, True)", False),
        ("def f(): return 'ZeRO-3'", "f() == 'ZeRO-3'", True),
        ("def f(): return 0.1 + 0.2", "f() == 3 / 10", True),
        ("def f(x, y=1): return x * y", "f(2, y=3) == f(3, y=2)", True),
        ("def f(x, y=1): return [x, y]", "f(2, y=3) == f(3, y=2)", False),
        ("class D(dict):\n    def __eq__(self, o): return True\ndef f(): return D(a=1)", "f() == {'a': 1}", False),
        ("class T(tuple):\n    pass\ndef f(): return T((1,))", "f() == (1,)", False),
    ],
)
def test_non_numbers_are_compared_by_exact_type_and_value_outside_the_student_process(code, check, passes):
    assert shapes(code, check).passed is passes


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


def test_only_differing_verdicts_are_written_and_they_flag_the_submission(tmp_path, monkeypatch):
    url = gradebook(tmp_path, monkeypatch)
    verdicts = {"formulas": ItemVerdict(False, "hidden check failed"), "fp32-accum": ItemVerdict(False, "x")}
    changes = apply_rechecks(url, "lesson05", "s", verdicts)
    assert [(c.item, c.kernel_score, c.recheck_score) for c in changes] == [("formulas", 1.0, 0.0)]
    with Gradebook(url) as gb:
        nb = gb.find_submission_notebook("lesson05", "lesson05", "s")
        assert nb.flagged and nb.score == 0
    assert apply_rechecks(url, "lesson05", "s", verdicts) == []


def test_arguments_arrive_with_their_types_and_each_call_gets_its_own_copy():
    code = (
        "seen = []\ndef f(xs, pair, opts):\n    seen.append(xs)\n    xs.append(0)\n"
        "    return [type(xs).__name__, type(pair).__name__, sorted(opts), len(xs), len(seen)]"
    )
    assert shapes(
        code,
        "f([1], (2, 3), {'a': [4]}) == ['list', 'tuple', ['a'], 2, 1]",
        "f([1], (2, 3), {'b': [4]}) == ['list', 'tuple', ['b'], 2, 2]",
    ).passed


def test_the_recheck_runs_under_the_configured_sandbox_limits_with_its_own_clock():
    """What an instructor sets in c.GradingSandbox (memory, processes, files) bounds the re-check as it bounds the
    autograde; only the run's clock is the re-check's own, and no cell of the student's runs longer there than the cell
    limit lets it run in the kernel."""
    from traitlets.config import Config

    from course.nbgrader_hooks.sandbox_execute import GradingSandbox
    from course.nbgrader_hooks.sandbox_recheck import recheck_notebook
    from course.sandbox.limits import Limits

    seen = []

    def fake_runner(code, *, limits, input_json, **kwargs):
        seen.append((limits, input_json["cell_seconds"]))
        return PythonRun(0, {"results": []}, "")

    config = Config({"GradingSandbox": {"memory_bytes": 768 * 2**20, "max_processes": 16, "cell_timeout_s": 4}})
    settings = GradingSandbox(config=config)
    spec = AssignmentSpec("lesson99", {"shape": Item("shape", "ex-shape", (parse_check("f() == 1"),))})
    recheck_code(["x = 1"], SHAPES, spec=spec, runner=fake_runner, limits=settings.limits())
    limits, cell_seconds = seen[0]
    assert (limits.memory_bytes, limits.max_processes) == (768 * 2**20, 16)
    assert limits.cell_timeout_s == Limits().cell_timeout_s  # the re-check's clock, not the autograde's cells'
    assert cell_seconds == 4  # but no cell of the student's runs longer than the kernel let it
    recheck_code(["x = 1"], SHAPES, spec=spec, runner=fake_runner)
    assert seen[1][1] == CELL_SECONDS < Limits().cell_timeout_s

    captured = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("course.grading.recheck.recheck_code", lambda *a, **kw: captured.update(kw) or {})
        patch.setattr("course.grading.recheck.student_cells", lambda nb, source: [("ex", "x = 1")])
        recheck_notebook(nbformat.v4.new_notebook(), SHAPES, [], settings)
    assert captured["limits"] == settings.limits()
