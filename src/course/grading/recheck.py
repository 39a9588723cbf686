"""Re-check a submission's code items outside the student's kernel; write the verdict to the gradebook.

nbgrader runs the tests inside the student's kernel, where the student's code can replace the comparisons,
swallow errors or fake outputs (jupyter/nbgrader#1379). Here the student's code cells run in a fresh
sandboxed Python (course.grading.sandbox) that only calls their functions and sends back what they returned;
a result counts only when it is a real int or float. The comparisons run in this process, with the
assignment's expected values, which never enter the sandbox. When the verdict differs from the kernel's
score, the gradebook gets the re-check's score and the submission is flagged for review.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from course.assignment.cells import grade_id, is_test, match_cells, nbgrader_meta
from course.assignment.spec import AssignmentSpec, Call, Check, Result, assignment_spec
from course.grading.gradebook import gradebook

# Runs inside the sandbox with INPUT = {"cells": [...], "calls": [[name, args, kwargs], ...], "cell_seconds",
# "call_seconds"}. It takes type, int, float, exec, compile and signal before any student code runs, so rebinding
# builtins cannot change its answers; each cell and each call has its own alarm, so one endless function costs
# only the items that call it (CallTimeout), not the whole re-check.
HARNESS = '''
class CallTimeout(BaseException):
    """A student's cell or function ran past its time in the re-check."""


def _course_recheck(request, run=exec, build=compile, caught=BaseException, signals=__import__("signal"),
                    late=CallTimeout):
    real_type = (0).__class__.__class__
    real_int, real_float = (0).__class__, (0.0).__class__
    name_of = real_type.__dict__["__name__"].__get__

    def ring(*_):
        raise late()

    def timed(seconds, work):
        signals.signal(signals.SIGALRM, ring)  # set again each time: student code may have replaced it
        signals.setitimer(signals.ITIMER_REAL, seconds)
        try:
            return work()
        finally:
            signals.setitimer(signals.ITIMER_REAL, 0)

    namespace = {"__name__": "__main__"}
    cells = []
    for number, source in enumerate(request["cells"], 1):
        try:
            timed(request["cell_seconds"], lambda: run(build(source, "<cell %d>" % number, "exec"), namespace))
            cells.append(None)
        except caught as error:
            cells.append(name_of(real_type(error)))
    results, stuck = [], set()
    for name, args, kwargs in request["calls"]:
        if name in stuck:  # a function that hung once is not given more time on every other check
            results.append(["error", "CallTimeout"])
            continue
        try:
            value = timed(request["call_seconds"], lambda: namespace[name](*args, **kwargs))
        except caught as error:
            results.append(["error", name_of(real_type(error))])
            if real_type(error) is late:
                stuck.add(name)
            continue
        kind = real_type(value)
        if kind is real_int or kind is real_float:
            results.append(["number", value])
        else:
            results.append(["type", name_of(kind)])
    return {"cells": cells, "results": results}


OUTPUT = _course_recheck(INPUT)
'''


CELL_SECONDS = 10  # one student cell in the re-check (it only defines functions)
CALL_SECONDS = 2  # one call of a student's function (the lesson's formulas return at once)


@dataclass(frozen=True)
class ItemVerdict:
    """The re-check's decision on one rubric code item, with the reason (for instructors)."""

    passed: bool
    reason: str


@dataclass(frozen=True)
class Change:
    """A gradebook score the re-check corrected."""

    item: str
    kernel_score: float | None
    recheck_score: float
    reason: str


Runner = Callable[..., Any]


def student_code(nb, source_cells: list | None = None) -> list[str]:
    """The submission's code cells minus the course's read-only and test cells, IPython syntax made plain Python."""
    from IPython.core.inputtransformer2 import TransformerManager

    reference = source_cells if source_cells is not None else nb.cells
    match = match_cells(nb.cells, reference)
    ours = {match.index[grade_id(c)] for c in reference
            if grade_id(c) in match.index and (nbgrader_meta(c).get("locked") or is_test(c))}
    transform = TransformerManager().transform_cell
    return [transform(cell.source) for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and i not in ours]


def recheck_submission(notebook_path: Path, rubric, *, source_cells: list | None = None,
                       spec: AssignmentSpec | None = None, hidden: bool = True, unsafe: bool = False,
                       runner: Runner | None = None) -> dict[str, ItemVerdict]:
    """Run a submission's code out of process and decide every rubric code item from the numbers it returns.

    SOURCE_CELLS (the source notebook's cells) identify the course's cells even when metadata was stripped;
    without them the submission's own metadata is used. HIDDEN False runs the visible checks only (`course
    check`); UNSAFE runs without bubblewrap (a student's own machine).
    """
    import nbformat

    try:
        nb = nbformat.read(str(notebook_path), as_version=4)
    except Exception as exc:  # any unreadable file fails every item; the reason says why
        return all_failed(rubric, f"unreadable notebook: {exc}")
    return recheck_code(student_code(nb, source_cells), rubric, spec=spec, hidden=hidden, unsafe=unsafe,
                        runner=runner)


def recheck_code(cells: list[str], rubric, *, spec: AssignmentSpec | None = None, hidden: bool = True,
                 unsafe: bool = False, runner: Runner | None = None) -> dict[str, ItemVerdict]:
    """Run CELLS (Python sources, in order) in a fresh process and decide each code item from what its calls return."""
    from course.grading.sandbox import Limits

    if runner is None:
        from course.grading.sandbox import run_python_sandboxed as runner
    spec = spec or assignment_spec(rubric.lesson)
    calls = spec.calls(hidden=hidden)
    request = {"cells": cells, "calls": [c.payload() for c in calls], "cell_seconds": CELL_SECONDS,
               "call_seconds": CALL_SECONDS}
    with tempfile.TemporaryDirectory(prefix="course-recheck-") as workdir:
        run = runner(HARNESS, workdir=Path(workdir), limits=Limits(), input_json=request, unsafe=unsafe)
    results = _results(run.stdout_json, calls)
    if results is None:
        tail = run.stderr.strip().splitlines()[-1:] or [f"exit status {run.returncode}"]
        return all_failed(rubric, f"re-check run gave no usable result ({tail[0][:200]})")
    return {item.id: _verdict([c for c in spec.items[item.id] if hidden or not c.hidden], results)
            for item in rubric.code_items}


def all_failed(rubric, reason: str) -> dict[str, ItemVerdict]:
    """Every code item failed for one REASON (an unreadable or ungradable submission)."""
    return {item.id: ItemVerdict(False, reason) for item in rubric.code_items}


def _results(output: Any, calls: list[Call]) -> dict[Call, Result] | None:
    """Validate what came back from the sandbox (untrusted data) into one Result per call, or None."""
    raw = output.get("results") if isinstance(output, dict) else None
    if not isinstance(raw, list) or len(raw) != len(calls):
        return None
    results = {}
    for call, entry in zip(calls, raw):
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] in ("number", "error", "type")):
            return None
        kind, value = entry
        if kind == "number" and type(value) in (int, float):
            results[call] = Result(number=value)
        elif kind == "error" and isinstance(value, str):
            results[call] = Result(problem=f"raised {value[:80]}")
        elif kind == "type" and isinstance(value, str):
            results[call] = Result(problem=f"returned {value[:80]}, not int or float")
        else:
            return None
    return results


def _verdict(checks: list[Check], results: Mapping[Call, Result]) -> ItemVerdict:
    """Passed when every check holds; the reason counts them and names the first failure."""
    failed = [(c, why) for c in checks if (why := c.failure(results)) is not None]
    if not failed:
        return ItemVerdict(True, f"all {len(checks)} checks passed")
    check, why = failed[0]
    label = "hidden" if check.hidden else "visible"
    return ItemVerdict(False, f"{len(failed)} of {len(checks)} checks failed; first ({label}): {check.describe()}: {why}")


def apply_rechecks(gradebook_db: Path | str, assignment: str, student: str,
                   verdicts: Mapping[str, ItemVerdict]) -> list[Change]:
    """Write each verdict that differs from the kernel's score into the gradebook; flag the submission if any did."""
    from course.grading.rubric import code_grade_id

    by_grade_id = {code_grade_id(item): (item, v) for item, v in verdicts.items()}
    changes = []
    with gradebook(gradebook_db) as gb:
        gb.update_or_create_student(student)
        submission = gb.update_or_create_submission(assignment, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.name not in by_grade_id:
                    continue
                item, verdict = by_grade_id[grade.name]
                score = float(grade.max_score) if verdict.passed else 0.0
                if grade.auto_score is None or float(grade.auto_score) != score or grade.needs_manual_grade:
                    changes.append(Change(item, grade.auto_score, score, verdict.reason))
                    grade.auto_score, grade.needs_manual_grade = score, False
                    notebook.flagged = True
        gb.db.commit()
    return changes
