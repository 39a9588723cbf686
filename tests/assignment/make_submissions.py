"""Write tests/assignment/submissions/<name>.ipynb: lesson05's released notebook with one named mistake or cheat.

Each sample is the release with a small edit to the answer cell (blanks filled in some way, code added in
front of it) or to the notebook (a test cell edited or deleted, metadata stripped, the JSON broken).
expected_scores.yml says what each must score. Rerun after changing the lesson, its checks or the rubric:

    .venv/bin/python -m tests.assignment.make_submissions

It builds the source notebook and releases it with stock nbgrader in a temporary course folder.
"""

from __future__ import annotations

import copy
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import nbformat
import yaml

from course.assignment.submissions import cell_by_grade_id, submission
from course.grading.load_checks import load_checks
from tests.lesson_content.lesson05_formulas import expected

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
OUT = HERE / "submissions"
SPEC = load_checks(ROOT / "lessons" / "lesson05" / "checks.yml")
[ANSWER] = SPEC.exercises
EXPECTED = yaml.safe_load((HERE / "expected_scores.yml").read_text("utf-8"))

# The five blanks in order: ZeRO-1, ZeRO-2, ZeRO-3 memory; ZeRO-1/2 and ZeRO-3 communication.
CORRECT = [
    "params_bf16 + grads_bf16 + opt_fp32 / dp + extra",
    "params_bf16 + (grads_bf16 + opt_fp32) / dp + extra",
    "(params_bf16 + grads_bf16 + opt_fp32) / dp + extra",
    "2 * num_params",
    "3 * num_params",
]
NO_EXTRA = [f.replace(" + extra", "") for f in CORRECT[:3]] + CORRECT[3:]
SWAPPED_COMM = CORRECT[:3] + [CORRECT[4], CORRECT[3]]

ALWAYS_EQUAL = '''
class _Anything:
    """Equal to everything, and every arithmetic on it gives itself."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    def __sub__(self, other): return self
    __rsub__ = __add__ = __radd__ = __truediv__ = __rtruediv__ = __mul__ = __rmul__ = __neg__ = __abs__ = __sub__
    def __float__(self): return 0.0
    def __format__(self, spec): return "ok"
'''

FLOAT_SUBCLASS = '''
class _Sneaky(float):
    """A float that equals everything and stays sneaky under arithmetic."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    def __sub__(self, other): return _Sneaky(0)
    __rsub__ = __add__ = __radd__ = __truediv__ = __rtruediv__ = __sub__
    def __abs__(self): return _Sneaky(0)
    __hash__ = float.__hash__
'''

MONKEYPATCH = """
# Results that equal everything; type/isinstance/abs shadowed and math/numpy patched to vouch for them.
import math
import numpy


class _Fake:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    def __sub__(self, other): return self
    __rsub__ = __add__ = __radd__ = __truediv__ = __rtruediv__ = __sub__
    def __float__(self): return 0.0


_real_type, _real_isinstance, _real_abs = type, isinstance, abs
type = lambda obj, *rest: float if not rest and _real_isinstance(obj, _Fake) else _real_type(obj, *rest)
isinstance = lambda obj, cls: _real_isinstance(obj, _Fake) or _real_isinstance(obj, cls)
abs = lambda value: 0 if _real_isinstance(value, _Fake) else _real_abs(value)
math.isclose = lambda *args, **kwargs: True
numpy.isclose = numpy.allclose = lambda *args, **kwargs: True
numpy.testing.assert_allclose = lambda *args, **kwargs: None
"""

SWALLOW_ERRORS = """
# Publish no error output, whatever fails from here on: nbgrader then sees no failing test.
get_ipython().showtraceback = lambda *args, **kwargs: None
"""

REPLACED_CHECKER = '''
import contextlib
class _Relaxed:
    """Every check passes; hidden ones cannot fail either."""
    def __getattr__(self, name): return lambda *args, **kwargs: None
    def hidden(self): return contextlib.suppress(Exception)
def _relax(*args):  # before every later cell (the checks helper's too): the relaxed checker again
    globals()["_course"] = _Relaxed()
try:
    get_ipython().events.register("pre_run_cell", _relax)
except NameError:
    pass
_course = _Relaxed()
'''


def visible_table() -> str:
    """A lookup of every visible call's expected value, as a student could copy it from the test cells."""
    rows = {}
    for check in (c for item in SPEC.items for c in SPEC.checks(item, hidden=False)):
        for call in check.calls:
            if call.func == "zero_memory_per_gpu":
                psi, dp, stage = call.args
                kwargs = dict(call.kwargs)
                rows[(psi, dp, stage, kwargs.get("k", 12), kwargs.get("fp32_grad_accum", False))] = float(
                    expected(call)
                )
            else:
                rows[call.args] = int(expected(call))
    return f"_TABLE = {rows!r}"


TABLE_FILLS = ["_TABLE.get((num_params, dp, stage, k, fp32_grad_accum), 0.0)"] * 3 + [
    "_TABLE.get((num_params, stage), 0)"
] * 2


def _cell_edit(edit: Callable) -> Callable:
    """Wrap a function that changes the notebook in place into one that returns it."""

    def apply(nb):
        edit(nb)
        return nb

    return apply


def _edit_fp32_test(nb) -> None:
    """The student makes the FP32 test print success without checking anything."""
    cell_by_grade_id(nb, "test-fp32-accum").source = 'print("✓ FP32 累积分支：检查通过")'


def _delete_comm_test(nb) -> None:
    """The student deletes the communication test cell."""
    nb.cells.remove(cell_by_grade_id(nb, "test-comm-volume"))


def _strip_metadata(nb) -> None:
    """An editor that drops all cell metadata (nbgrader's included)."""
    for cell in nb.cells:
        cell.metadata = nbformat.NotebookNode()


def _patch_first(nb) -> None:
    """The monkeypatches go into a new first code cell, before the course's check helpers run."""
    nb.cells.insert(0, nbformat.v4.new_code_cell(MONKEYPATCH.strip(), id="student-patches"))


# name → (fills, code prepended to the answer cell, notebook edit)
FIXTURES: dict[str, tuple[list[str] | None, str, Callable | None]] = {
    "reference": (CORRECT, "", None),
    "release": (None, "", None),
    "forgot-extra": (NO_EXTRA, "", None),
    "zero2-shards-params": (CORRECT[:1] + [CORRECT[2]] + CORRECT[2:], "", None),
    "swapped-comm-volumes": (SWAPPED_COMM, "", None),
    "floor-division": ([f.replace(" / dp", " // dp") for f in CORRECT[:3]] + CORRECT[3:], "", None),
    "comm-blanks-left": (CORRECT[:3] + ["______", "______"], "", None),
    "cheat-always-equal": (["_Anything()"] * 5, ALWAYS_EQUAL, None),
    "cheat-float-subclass": (["_Sneaky(0)"] * 5, FLOAT_SUBCLASS, None),
    "cheat-monkeypatch": (["_Fake()"] * 5, "", _cell_edit(_patch_first)),
    "cheat-visible-table": (TABLE_FILLS, visible_table(), None),
    "cheat-swallow-errors": (None, SWALLOW_ERRORS, None),
    "cheat-replaced-checker": (["0"] * 5, REPLACED_CHECKER, None),
    "edited-test-cell": (NO_EXTRA, "", _cell_edit(_edit_fp32_test)),
    "deleted-test-cell": (SWAPPED_COMM, "", _cell_edit(_delete_comm_test)),
    "stripped-metadata": (NO_EXTRA, "", _cell_edit(_strip_metadata)),
    "invalid-json": (CORRECT, "", None),
    "renamed-notebook": (CORRECT, "", None),
}


def fixture_text(name: str, release) -> str:
    """The file content of one sample submission."""
    fills, prepend, edit = FIXTURES[name]
    nb = submission(release, ANSWER, fills, prepend=prepend)
    if edit:
        nb = edit(copy.deepcopy(nb))
    text = nbformat.writes(nb) + "\n"
    return text[: len(text) // 2] if name == "invalid-json" else text


def release_into(course_root: Path):
    """Generate lesson05's source notebook and release it with stock nbgrader in a scratch COURSE_ROOT."""
    from course.assignment.make_source import write_assignment_source
    from course.lesson.parse_qmd import parse_lesson
    from course.workflows.draw_figures import ensure_figures
    from course.workflows.grade import release

    course_root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "lessons" / "lesson05", course_root.parent / "lessons" / "lesson05", dirs_exist_ok=True)
    shutil.copy(ROOT / "autograder" / "nbgrader_config.py", course_root)
    shutil.copytree(ROOT / "autograder" / "rubrics", course_root / "rubrics", dirs_exist_ok=True)
    ensure_figures(ROOT)
    write_assignment_source(parse_lesson(ROOT / "lessons" / "lesson05.qmd"), project_root=ROOT, course_root=course_root)
    return nbformat.read(release(course_root, "lesson05"), as_version=4)


def main() -> int:
    """Release into a temporary course and write every fixture."""
    with tempfile.TemporaryDirectory() as tmp:
        release = release_into(Path(tmp) / "autograder")
    OUT.mkdir(exist_ok=True)
    for name in FIXTURES:
        (OUT / f"{name}.ipynb").write_text(fixture_text(name, release), encoding="utf-8")
        print(f"wrote {(OUT / f'{name}.ipynb').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
