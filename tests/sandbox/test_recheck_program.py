"""The re-check's program as a module: imported and run on the committed sample answers, as `python -m`, and as the
source the sandbox gets, with the same answers each way."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import nbformat
import pytest

from course.grading.load_checks import checks_for_course
from course.grading.recheck import PROGRAM, student_code
from course.sandbox import recheck_program
from course.sandbox.recheck_program import MAX_TEXT, recheck_request
from tests.assignment.make_submissions import OUT, ROOT


def request(sample: str) -> dict:
    """What the re-check asks about one committed sample: its cells and every call of lesson05's checks."""
    spec = checks_for_course(ROOT / "autograder", "lesson05")
    cells = student_code(nbformat.read(OUT / f"{sample}.ipynb", as_version=4))
    return {"cells": cells, "calls": [c.payload() for c in spec.calls()], "cell_seconds": 10, "call_seconds": 2}


@pytest.fixture
def own_alarm():
    """The program sets SIGALRM's handler for its clocks; put back the test process's own."""
    before = signal.getsignal(signal.SIGALRM)
    yield
    signal.signal(signal.SIGALRM, before)


def test_the_reference_answer_defines_its_functions_and_every_call_returns_a_tagged_value(own_alarm):
    answer = recheck_request(request("reference"))
    assert answer["cells"] == [None]
    assert answer["results"] and all(kind == "value" for kind, _ in answer["results"])
    assert ["value", ["int", 14_000_000_000]] in answer["results"]  # zero_memory_per_gpu(7e9, 8, ZeRO-2), in bytes


def test_a_cell_that_does_not_compile_is_named_and_its_function_undefined(own_alarm):
    asked = {"cells": ["def f(:\n    pass"], "calls": [["f", [], {}]], "cell_seconds": 1, "call_seconds": 1}
    answer = recheck_request(asked)
    assert answer["cells"][0][:2] == ["SyntaxError", 1] and answer["results"] == [["undefined", None]]


def test_a_value_past_the_size_limit_is_named_not_sent(own_alarm):
    asked = {
        "cells": [f"def f(): return 'x' * {MAX_TEXT + 1}"],
        "calls": [["f", [], {}]],
        "cell_seconds": 1,
        "call_seconds": 1,
    }
    assert recheck_request(asked)["results"] == [["type", f"a string longer than {MAX_TEXT} characters"]]


def test_the_program_run_with_python_m_answers_as_the_imported_function(own_alarm):
    asked = request("floor-division")
    proc = subprocess.run(
        [sys.executable, "-m", "course.sandbox.recheck_program"],
        input=json.dumps(asked),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout) == json.loads(json.dumps(recheck_request(asked)))


def test_the_sandbox_gets_the_modules_own_source_and_finds_output_after_running_it(own_alarm):
    assert PROGRAM == open(recheck_program.__file__, encoding="utf-8").read()
    namespace = {"__name__": "__main__", "INPUT": request("forgot-extra")}
    exec(compile(PROGRAM, "<answer>", "exec"), namespace)  # as course.sandbox.runner's python mode runs it
    assert namespace["OUTPUT"] == recheck_request(request("forgot-extra"))
