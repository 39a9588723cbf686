"""nbgrader's Execute step, moved into the grading sandbox: the course's nbgrader config puts it in autograde.

nbgrader's own Execute runs the student's notebook in a kernel with the instructor's permissions. This
preprocessor takes the notebook nbgrader has just sanitized and puts the outputs of a sandboxed run on it:
either a run `course grade` made beforehand on a worker (a file in GradingSandbox.runs_dir, matched by student
and by the code it ran, so a notebook that sanitizing changed is never given someone else's outputs) or,
failing that, a run made here and now. The rest of nbgrader's autograde steps (SaveAutoGrades, …) then score
those outputs in the grading process. Stock `nbgrader autograde` and `course grade` thus run the same steps;
the limits and the unsafe switch are ordinary nbgrader settings (`c.GradingSandbox.…` in nbgrader_config.py).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import asdict, fields
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Enum, Float, Integer, Unicode
from traitlets.config import Configurable

from course.errors import CourseError, ToolMissing
from course.fileio import write_atomic
from course.grading.recheck import CALL_SECONDS
from course.grading.sandbox import ENGINES, Incident, Limits, SandboxRun, execute_notebook_sandboxed

# Cells the sandbox did not let finish get an error output, so nbgrader scores a test cell there 0, never "passed".
UNFINISHED = {"stopped": "SandboxStopped", "not-run": "CellNotRun"}
UNSAFE_SETTING = "c.GradingSandbox.unsafe = True"

_LimitSettings = type("_LimitSettings", (Configurable,), {
    f.name: Integer(f.default, min=1, help=f.metadata["help"]).tag(config=True) for f in fields(Limits)})


class GradingSandbox(_LimitSettings):
    """Where and how students' code runs when autograding: the limits (one setting per Limits field) and more."""

    unsafe = Bool(False, help="run students' code without the bubblewrap sandbox (only where none can be had, "
                              "and only for code you trust)").tag(config=True)
    engine = Enum(["auto", *ENGINES], "auto", help="shell: IPython without a kernel (fast); kernel: a Jupyter "
                  "kernel as stock nbgrader; auto: the shell where it is known to run a notebook exactly as the "
                  "kernel does, else the kernel").tag(config=True)
    recheck_call_timeout_s = Float(CALL_SECONDS, min=0.1, help="seconds each call of a student's function may "
                                   "take in the out-of-process re-check; a call that takes longer fails its checks "
                                   "(raise it for a lesson whose functions compute for a while)").tag(config=True)
    runs_dir = Unicode("", help="folder where `course grade` leaves sandboxed runs and re-checks made ahead on "
                                "its workers; empty: every run is made during autograde").tag(config=True)

    def limits(self) -> Limits:
        """The settings as the sandbox's Limits."""
        return Limits(**{f.name: getattr(self, f.name) for f in fields(Limits)})


def refusal(detail: str) -> str:
    """What both `nbgrader autograde` and `course grade` say when no sandbox can be had."""
    return (f"no grading sandbox on this machine: {detail.rstrip('.')}. Refusing to run students' code "
            f"unsandboxed; to grade without isolation anyway (only code you trust) set `{UNSAFE_SETTING}` in "
            "autograder/nbgrader_config.py, or pass --unsafe to `course grade`")


def require_sandbox(settings: GradingSandbox) -> None:
    """Raise ToolMissing with the refusal unless bubblewrap works here or the unsafe setting is on."""
    if settings.unsafe:
        return
    import sys

    from course.tools.bubblewrap import find_bwrap, probe_bwrap

    try:
        probe_bwrap(find_bwrap(), sys.executable)
    except ToolMissing as exc:
        raise ToolMissing(refusal(exc.message)) from None


def code_digest(nb) -> str:
    """Hash of the code a notebook runs, cell by cell: what decides its outputs."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            h.update(("".join(source) if isinstance(source, list) else source).encode() + b"\0")
    return h.hexdigest()


def prepared_path(runs_dir: str | Path, student: str, nb, kind: str) -> Path:
    """Where a run (KIND "run") or a re-check (KIND "recheck") made ahead for STUDENT's notebook NB lies."""
    return Path(runs_dir) / f"{student}.{code_digest(nb)[:32]}.{kind}.json"


def prepared_or_made(settings: GradingSandbox, student: str, nb, kind: str, load, make):
    """A result `course grade` prepared on a worker for this notebook (taken, so it is used once), else MAKE() now.

    Making it here is running a student's code, so the sandbox must be available (or `unsafe` set) first.
    """
    ready = prepared_path(settings.runs_dir, student, nb, kind) if settings.runs_dir else None
    if ready is not None and ready.is_file():
        result = load(ready)
        ready.unlink()
        return result
    require_sandbox(settings)
    return make()


def run_in_sandbox(nb, settings: GradingSandbox) -> SandboxRun:
    """Execute a notebook object in a fresh sandbox with SETTINGS and return the run."""
    from course.grading.sandbox_fidelity import choose_engine

    engine, why = choose_engine(nb, settings.engine)
    with tempfile.TemporaryDirectory(prefix="course-grade-") as tmp:
        path = Path(tmp) / "submission.ipynb"
        nbformat.write(nb, path)
        run = execute_notebook_sandboxed(path, workdir=Path(tmp) / "work", limits=settings.limits(),
                                         unsafe=settings.unsafe, engine=engine)
    return SandboxRun(run.executed, run.status, run.reason, run.seconds, run.timings, run.incidents,
                      engine=engine, engine_reason=why, memory_limit=run.memory_limit)


def save_run(path: Path, run: SandboxRun) -> None:
    """Write a run made on a worker for SandboxExecute to pick up."""
    data = {**{k: v for k, v in asdict(run).items() if k not in ("executed", "incidents")},
            "executed": nbformat.writes(run.executed) if run.executed is not None else None,
            "incidents": [asdict(i) for i in run.incidents]}
    write_atomic(path, json.dumps(data, ensure_ascii=False))


def load_run(path: Path) -> SandboxRun:
    """A run written by save_run."""
    data = json.loads(path.read_text("utf-8"))
    text = data.pop("executed")
    executed = nbformat.reads(text, as_version=4) if text is not None else None
    incidents = tuple(Incident(**i) for i in data.pop("incidents"))
    return SandboxRun(executed=executed, incidents=incidents, **data)


class SandboxExecute(NbGraderPreprocessor):
    """Fill the sanitized notebook's code cells with the outputs of a sandboxed run."""

    def preprocess(self, nb, resources):
        """Attach outputs cell by cell; a sandbox failure (not the student's) stops this submission."""
        settings = GradingSandbox(config=self.config)
        student = resources.get("nbgrader", {}).get("student", "?")
        run = prepared_or_made(settings, student, nb, "run", load_run, lambda: run_in_sandbox(nb, settings))
        resources.setdefault("nbgrader", {})["sandbox"] = run
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
