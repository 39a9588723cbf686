"""nbgrader's Execute step, moved into the grading sandbox: `course grade` swaps it in for autograde.

nbgrader's own Execute runs the student's notebook in a kernel with the instructor's permissions. This
preprocessor takes the notebook nbgrader has just sanitized and puts the outputs of a sandboxed run on it:
either a run `course grade` made beforehand on a worker (matched by the code it ran, so a notebook that
sanitizing changed is never given someone else's outputs) or, failing that, a run made here and now. The
rest of nbgrader's autograde steps (SaveAutoGrades, …) then score those outputs in the grading process.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import ClassVar

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from course.errors import CourseError
from course.grading.sandbox import Limits, SandboxRun, execute_notebook_sandboxed


# Cells the sandbox did not let finish get an error output, so nbgrader scores a test cell there 0, never "passed".
UNFINISHED = {"stopped": "SandboxStopped", "not-run": "CellNotRun"}


def code_digest(nb) -> str:
    """Hash of the code a notebook runs, cell by cell: what decides its outputs."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            h.update(("".join(source) if isinstance(source, list) else source).encode() + b"\0")
    return h.hexdigest()


def run_in_sandbox(nb, *, limits: Limits, unsafe: bool) -> SandboxRun:
    """Execute a notebook object in a fresh sandbox and return the run."""
    with tempfile.TemporaryDirectory(prefix="course-grade-") as tmp:
        path = Path(tmp) / "submission.ipynb"
        nbformat.write(nb, path)
        return execute_notebook_sandboxed(path, workdir=Path(tmp) / "work", limits=limits, unsafe=unsafe)


class SandboxExecute(NbGraderPreprocessor):
    """Fill the sanitized notebook's code cells with the outputs of a sandboxed run."""

    # Set by course grade for the batch: runs made ahead on workers (by code digest), the limits, the runs used.
    prepared: ClassVar[dict[str, SandboxRun]] = {}
    limits: ClassVar[Limits] = Limits()
    unsafe: ClassVar[bool] = False
    used: ClassVar[dict[str, SandboxRun]] = {}

    def preprocess(self, nb, resources):
        """Attach outputs cell by cell; a sandbox failure (not the student's) stops this submission."""
        run = self.prepared.pop(code_digest(nb), None) or run_in_sandbox(nb, limits=self.limits, unsafe=self.unsafe)
        student = resources.get("nbgrader", {}).get("student", "?")
        self.used[student] = run
        if run.status == "error" or run.executed is None:
            raise CourseError(f"the grading sandbox failed before the student's code ran: {run.reason}")
        if len(run.executed.cells) != len(nb.cells):
            raise CourseError(f"sandboxed run returned {len(run.executed.cells)} cells, expected {len(nb.cells)}")
        for cell, done in zip(nb.cells, run.executed.cells):
            if cell.cell_type == "code":
                cell.outputs = done.get("outputs", [])
                cell.execution_count = done.get("execution_count")
        for incident in run.incidents:
            if incident.kind in UNFINISHED:  # a cell the sandbox stopped or never reached fails, as it should
                nb.cells[incident.cell_index].outputs.append(nbformat.v4.new_output(
                    "error", ename=UNFINISHED[incident.kind], evalue=incident.message, traceback=[incident.message]))
        return nb, resources
