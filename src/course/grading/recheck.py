"""Re-check a submission's code items outside the student's kernel; write the verdict to the gradebook.

nbgrader runs the tests inside the student's kernel, where the student's code can replace the comparisons,
swallow errors or fake outputs (jupyter/nbgrader#1379). Here the student's code cells run in a fresh
sandboxed Python (course.sandbox.answer) that only calls their functions and sends back what they returned;
a result counts only when it is built of real builtin values (int, float, bool, str, None, list, tuple, dict).
The comparisons run in this process, with the lesson's expected values (its checks.yml), which never enter
the sandbox; a failed item is also matched against the lesson's known wrong answers, so the
verdict can name the mistake (Diagnosis). When the verdict differs from the kernel's
score, the gradebook gets the re-check's score and the submission is flagged for review.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from course.grading.cells import grade_id, is_test, match_cells, nbgrader_meta
from course.grading.checks import AssignmentSpec, Call, Misconception, Result
from course.grading.gradebook import gradebook
from course.sandbox import recheck_program
from course.sandbox.limits import Limits
from course.sandbox.recheck_program import MAX_DEPTH

PROGRAM = Path(recheck_program.__file__).read_text("utf-8")  # what the sandbox runs: that module's own source
SUPPORTED = "int, float, bool, str, None, or a list, tuple or dict of those"


CELL_SECONDS = 10  # one student cell in the re-check (it only defines functions), or the cell limit if lower
CALL_SECONDS = 2  # one call of a student's function: the default of c.GradingSandbox.recheck_call_timeout_s


@dataclass(frozen=True)
class Diagnosis:
    """A known wrong answer the re-check recognised in a failed item (see checks.yml `misconceptions`)."""

    id: str
    name: str  # student-facing
    explanation: str  # student-facing, never a hidden value
    evidence: str  # grader-facing: which formula the values match, and on which calls
    veto: str | None = None  # the veto it hints at, for graders; never a decision


@dataclass(frozen=True)
class CellError:
    """An exception while the re-check ran one of the student's cells (defining the exercise): where and what."""

    cell: str  # the cell's grade id, else "cell N" (its place in the notebook)
    error: str  # the exception's class name, e.g. SyntaxError
    line: int | None  # line in that cell
    message: str

    def describe(self) -> str:
        """One line for graders' reports and students' feedback: cell ex-memory, line 3: SyntaxError: invalid syntax."""
        where = f"{self.cell}, line {self.line}" if self.line is not None else self.cell
        return f"{where}: {self.error}" + (f": {self.message}" if self.message else "")


@dataclass(frozen=True)
class ItemVerdict:
    """The re-check's decision on one rubric code item, with the reason (for instructors) and any diagnoses."""

    passed: bool
    reason: str
    diagnoses: tuple[Diagnosis, ...] = ()
    errors: tuple[CellError, ...] = ()  # of a failed item: exceptions raised while the student's cells ran
    checks: dict[str, bool] = field(default_factory=dict)  # each check's line → whether it held (item analysis)

    def __post_init__(self) -> None:
        # read back from the grade report's JSON, diagnoses and errors arrive as mappings
        object.__setattr__(
            self, "diagnoses", tuple(d if isinstance(d, Diagnosis) else Diagnosis(**d) for d in self.diagnoses)
        )
        object.__setattr__(
            self, "errors", tuple(e if isinstance(e, CellError) else CellError(**e) for e in self.errors)
        )


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
    return [source for _, source in student_cells(nb, source_cells)]


def student_cells(nb, source_cells: list | None = None) -> list[tuple[str, str]]:
    """(label, code) of each cell student_code runs; the label (grade id, else "cell N") names it in errors."""
    from IPython.core.inputtransformer2 import TransformerManager

    reference = source_cells if source_cells is not None else nb.cells
    match = match_cells(nb.cells, reference)
    ours = {
        match.index[grade_id(c)]
        for c in reference
        if grade_id(c) in match.index and (nbgrader_meta(c).get("locked") or is_test(c))
    }
    transform = TransformerManager().transform_cell
    return [
        (f"cell {grade_id(cell) or i + 1}", transform(cell.source))
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and i not in ours
    ]


def recheck_submission(
    notebook_path: Path,
    rubric,
    *,
    source_cells: list | None = None,
    spec: AssignmentSpec | None = None,
    hidden: bool = True,
    unsafe: bool = False,
    runner: Runner | None = None,
) -> dict[str, ItemVerdict]:
    """Run a submission's code out of process and decide every rubric code item from the values it returns.

    SOURCE_CELLS (the source notebook's cells) identify the course's cells even when metadata was stripped;
    without them the submission's own metadata is used. SPEC defaults to the checks the course root keeps
    (checks/<lesson>.yml, written with the source notebook), else the lesson's own checks.yml. HIDDEN False runs the
    visible checks only (`course check`); UNSAFE runs without bubblewrap
    (only where none can be had, on request).
    """
    import nbformat

    try:
        nb = nbformat.read(str(notebook_path), as_version=4)
    except Exception as exc:  # any unreadable file fails every item; the reason says why
        return all_failed(rubric, f"unreadable notebook: {exc}")
    cells = student_cells(nb, source_cells)
    return recheck_code(
        [code for _, code in cells],
        rubric,
        spec=spec,
        hidden=hidden,
        unsafe=unsafe,
        runner=runner,
        labels=[label for label, _ in cells],
    )


def recheck_code(
    cells: list[str],
    rubric,
    *,
    spec: AssignmentSpec | None = None,
    hidden: bool = True,
    unsafe: bool = False,
    runner: Runner | None = None,
    labels: list[str] | None = None,
    call_seconds: float = CALL_SECONDS,
    limits: Limits | None = None,
) -> dict[str, ItemVerdict]:
    """Run CELLS (Python sources, in order) in a fresh process and decide each code item from what its calls return.

    LABELS name the cells in errors (default "cell N"); CALL_SECONDS is the time each call of a student's function gets;
    LIMITS (the grading sandbox's settings) bound the run's memory, processes and files as they bound the autograde.
    """
    if spec is None:
        from course.grading.load_checks import checks_for_course

        spec = checks_for_course(Path(rubric.path).parent.parent, rubric.lesson)
    results, errors = run_cells(
        cells,
        spec.calls(hidden=hidden),
        unsafe=unsafe,
        runner=runner,
        labels=labels,
        call_seconds=call_seconds,
        limits=limits,
    )
    if isinstance(results, str):
        return all_failed(rubric, results)
    return {item.id: _verdict(spec, item.id, results, hidden=hidden, errors=errors) for item in rubric.code_items}


def run_calls(
    cells: list[str], calls: list[Call], *, unsafe: bool = False, runner: Runner | None = None
) -> dict[Call, Result] | str:
    """What each call returns after CELLS ran in a fresh (sandboxed unless UNSAFE) process, or why there is nothing."""
    return run_cells(cells, calls, unsafe=unsafe, runner=runner)[0]


def run_cells(
    cells: list[str],
    calls: list[Call],
    *,
    unsafe: bool = False,
    runner: Runner | None = None,
    labels: list[str] | None = None,
    call_seconds: float = CALL_SECONDS,
    limits: Limits | None = None,
) -> tuple[dict[Call, Result] | str, tuple[CellError, ...]]:
    """run_calls, plus the exceptions the cells raised (a SyntaxError, a failing import), named by LABELS; the run
    under LIMITS (default: the sandbox's defaults) with its own clock, where no cell runs longer than LIMITS let a
    cell run in the kernel."""
    if runner is None:
        from course.sandbox.answer import run_python_sandboxed as runner
    request = {
        "cells": cells,
        "calls": [c.payload() for c in calls],
        "cell_seconds": min(CELL_SECONDS, (limits or Limits()).cell_timeout_s),
        "call_seconds": call_seconds,
    }
    # the whole run's clock: the default, plus whatever more time per call a longer call timeout grants
    extra = max(0, math.ceil((call_seconds - CALL_SECONDS) * len(calls)))
    limits = replace(limits or Limits(), cell_timeout_s=Limits().cell_timeout_s + extra)
    with tempfile.TemporaryDirectory(prefix="course-recheck-") as workdir:
        run = runner(PROGRAM, workdir=Path(workdir), limits=limits, input_json=request, unsafe=unsafe)
    results = _results(run.stdout_json, calls)
    if results is None:
        tail = run.stderr.strip().splitlines()[-1:] or [f"exit status {run.returncode}"]
        return f"re-check run gave no usable result ({tail[0][:200]})", ()
    return results, _cell_errors(run.stdout_json, labels or [f"cell {n}" for n in range(1, len(cells) + 1)])


def _cell_errors(output: dict, labels: list[str]) -> tuple[CellError, ...]:
    """Validate the cells' errors the sandbox sent back (untrusted data): one CellError per failed cell."""
    raw = output.get("cells")
    if not isinstance(raw, list) or len(raw) != len(labels):
        return ()
    return tuple(
        CellError(label, entry[0][:80], entry[1], entry[2][:300])
        for label, entry in zip(labels, raw)
        if isinstance(entry, list)
        and len(entry) == 3
        and isinstance(entry[0], str)
        and (entry[1] is None or type(entry[1]) is int)
        and isinstance(entry[2], str)
    )


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
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] in ("value", "error", "type", "undefined")):
            return None
        kind, value = entry
        if kind == "value":
            try:
                results[call] = Result(value=untag(value))
            except ValueError:
                return None
        elif kind == "error" and isinstance(value, str):  # a call given no more time after one timed out
            results[call] = Result(problem=f"raised {value[:80]}")
        elif kind == "error" and isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            results[call] = Result(problem=f"raised {value[0][:80]}", raised=tuple(v[:80] for v in value[1:]))
        elif kind == "type" and isinstance(value, str):
            results[call] = Result(problem=f"returned {value[:80]}, not {SUPPORTED}")
        elif kind == "undefined" and value is None:
            results[call] = Result(problem=f"{call.func} is not defined")
        else:
            return None
    return results


def untag(entry: Any, depth: int = 0) -> Any:
    """A value the sandbox sent as [type name, payload], rebuilt from real builtin types; ValueError if malformed."""
    if depth > MAX_DEPTH + 1 or not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
        raise ValueError("malformed value")
    name, payload = entry
    scalar = {"int": int, "float": float, "bool": bool, "str": str}
    if name in scalar and type(payload) is scalar[name]:
        return payload
    if name == "float" and type(payload) is int:  # JSON may write a whole float without its point
        return float(payload)
    if name == "none" and payload is None:
        return None
    if name in ("list", "tuple") and type(payload) is list:
        items = [untag(item, depth + 1) for item in payload]
        return items if name == "list" else tuple(items)
    if name == "dict" and type(payload) is list and all(type(p) is list and len(p) == 2 for p in payload):
        try:
            return {untag(k, depth + 1): untag(v, depth + 1) for k, v in payload}
        except TypeError:  # an unhashable key cannot come from a real dict
            raise ValueError("malformed dict") from None
    raise ValueError(f"malformed {name}")


def _verdict(
    spec: AssignmentSpec, item: str, results: Mapping[Call, Result], *, hidden: bool, errors: tuple[CellError, ...] = ()
) -> ItemVerdict:
    """Passed when every check holds; else the reason counts them, names the first failure, any error in the
    student's cells (a SyntaxError leaves the function undefined) and any known mistake."""
    checks = spec.checks(item, hidden=hidden)
    failed = [(c, why) for c in checks if (why := c.failure(results)) is not None]
    held = {c.describe(): all(c is not f for f, _ in failed) for c in checks}
    if not failed:
        return ItemVerdict(True, f"all {len(checks)} checks passed", checks=held)
    check, why = failed[0]
    label = "hidden" if check.hidden else "visible"
    diagnoses = tuple(diagnosis(m) for m in spec.diagnose(item, results))
    raised = "".join(f"; while defining the code, {e.describe()}" for e in errors)
    named = "".join(f"; diagnosed: {d.id}" for d in diagnoses)
    return ItemVerdict(
        False,
        f"{len(failed)} of {len(checks)} checks failed; first ({label}): {check.describe()}: {why}{raised}{named}",
        diagnoses,
        errors,
        held,
    )


def diagnosis(wrong: Misconception) -> Diagnosis:
    """What the verdict keeps of a recognised mistake: its words for students and graders, and the calls it rests on."""
    calls = "; ".join(c.describe() for c in wrong.checks)
    return Diagnosis(wrong.id, wrong.name, wrong.explanation, f"{wrong.evidence}（{calls}）", wrong.veto)


def apply_rechecks(db_url: str, assignment: str, student: str, verdicts: Mapping[str, ItemVerdict]) -> list[Change]:
    """Write each verdict that differs from the kernel's score into the gradebook; flag the submission if any did."""
    from course.grading.rubric import code_grade_id

    by_grade_id = {code_grade_id(item): (item, v) for item, v in verdicts.items()}
    changes = []
    with gradebook(db_url) as gb:
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
