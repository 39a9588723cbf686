"""The differential corpus: the engine `auto` picks runs each notebook exactly as the Jupyter kernel does.

Each case is a notebook with the feature in one cell, then a graded nbgrader test cell; both engines must give
equal outputs (timings and library-internal traceback frames aside) and equal nbgrader scores. A notebook the
shell engine runs differently (asyncio.run inside ipykernel's running loop) must be sent to the kernel.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import determine_grade

from course.nbgrader_hooks.sandbox_execute import GradingSandbox, run_in_sandbox
from course.sandbox.fidelity import choose_engine
from course.sandbox.limits import Limits
from course.sandbox.notebook import execute_notebook_sandboxed

pytestmark = [pytest.mark.long(40), pytest.mark.slow, pytest.mark.sandbox, pytest.mark.waits]

LIMITS = Limits(cell_timeout_s=10, submission_timeout_s=90)
CORPUS = {
    "display-rich": "from IPython.display import display, HTML, Markdown\ndisplay(HTML('<b>x</b>'))\n"
    "display(Markdown('*y*'))\nresult = 3 + 4\nresult",
    "matplotlib-inline": "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nresult = 7",
    "top-level-await": "import asyncio\nawait asyncio.sleep(0)\nresult = 7\nprint('awaited')",
    "signal-alarm": "import signal, time\ndef h(*a):\n    raise RuntimeError('alarm')\n"
    "signal.signal(signal.SIGALRM, h)\n"
    "signal.alarm(1)\ntry:\n    time.sleep(3)\nexcept RuntimeError as e:\n    print('caught', e)\n"
    "result = 7",
    "input": "result = 7\nname = input('name? ')",
    "line-magic": "%time result = sum(range(3)) + 4\nprint(result)",
    "cell-magic": "%%capture out\nprint('hidden')\nresult = 7",
    "shell": "result = 7\n!echo hello",
    "sys-exit": "import sys\nresult = 7\nsys.exit(3)",
    "warnings-stderr": "import warnings, sys\nwarnings.warn('careful')\nprint('err', file=sys.stderr)\nresult = 7",
    "keyboard-interrupt": "result = 7\nraise KeyboardInterrupt",
    "error-history": "ip = get_ipython()\nip.run_cell('1 / 0', store_history=True)\n"
    "kept = ip.history_manager.exceptions[max(ip.history_manager.exceptions)]\n"
    "print(kept['ename'], kept['evalue'],\n"
    "      any('ZeroDivisionError' in line for line in kept['traceback']))\n"
    "result = 7",
    "nbgrader-execution": "import os\nresult = 7 if os.environ.get('NBGRADER_EXECUTION') == 'autograde' else 0\n"
    "print(os.environ.get('NBGRADER_EXECUTION'))",
}
# What the shell engine does not run as the kernel does: auto sends these to the kernel.
KERNEL_ONLY = {
    "asyncio-run": "import asyncio\nasync def f():\n    return 7\nresult = asyncio.run(f())\nprint(result)",
    "tqdm-auto": "from tqdm.auto import tqdm\nresult = 0\nfor i in tqdm(range(8)):\n    result += 1\nresult -= 1",
    "ipywidgets": "import ipywidgets as w\nslider = w.IntSlider(value=7)\ndisplay(slider)\nresult = slider.value",
}
TIMING = re.compile(r"\d+(\.\d+)?(e[+-]?\d+)?\s*(ns|µs|μs|us|ms|s)\b")


def notebook(feature: str):
    """FEATURE's cell, then a graded test cell worth 1 point that needs `result == 7`."""
    test = nbformat.v4.new_code_cell(
        "assert result == 7",
        metadata={
            "nbgrader": {
                "grade": True,
                "solution": False,
                "locked": True,
                "points": 1,
                "grade_id": "test-result",
                "schema_version": 3,
            }
        },
    )
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(feature), test])


def run(nb, engine: str):
    """NB run in the sandbox by ENGINE."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.ipynb"
        nbformat.write(nb, path)
        return execute_notebook_sandboxed(path, workdir=Path(tmp) / "work", limits=LIMITS, engine=engine)


def comparable(output: dict) -> dict:
    """An output with timings and library frames of tracebacks left out: what a student sees of their cell."""
    out = {k: v for k, v in output.items() if k != "execution_count"}
    if "text" in out:
        out["text"] = TIMING.sub("<t>", out["text"])
    if "traceback" in out:
        out["traceback"] = [line for line in out["traceback"] if "Cell" in line or "In[" in line][:1]
    return out


def observed(run_) -> tuple:
    """Status, comparable outputs and nbgrader's score of the test cell."""
    cells = run_.executed.cells
    score = determine_grade(cells[1])[0]
    return run_.status, [[comparable(o) for o in c.outputs] for c in cells], score


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_the_shell_engine_runs_the_corpus_exactly_as_the_kernel(case):
    nb = notebook(CORPUS[case])
    assert choose_engine(nb, "auto") == ("shell", "")
    shell, kernel = observed(run(nb, "shell")), observed(run(nb, "kernel"))
    assert shell == kernel
    assert kernel[2] == 1  # every case leaves result == 7: the test cell passes in both


@pytest.mark.parametrize("case", sorted(KERNEL_ONLY))
def test_notebooks_the_shell_runs_differently_fall_back_to_the_kernel(case):
    nb = notebook(KERNEL_ONLY[case])
    kernel = observed(run(nb, "kernel"))
    if case != "ipywidgets":  # why the fallback exists (a widget's model id differs between any two runs)
        assert observed(run(nb, "shell")) != kernel
    chosen = run_in_sandbox(nb, GradingSandbox(cell_timeout_s=10, submission_timeout_s=90))
    assert chosen.engine == "kernel" and "ran in the Jupyter kernel" in chosen.engine_reason
    assert chosen.status == "ok" and observed(chosen)[2] == kernel[2]


def test_both_engines_set_nbgrader_execution():
    for engine in ("shell", "kernel"):
        outputs = run(notebook(CORPUS["nbgrader-execution"]), engine).executed.cells[0].outputs
        assert outputs[0]["text"] == "autograde\n"
