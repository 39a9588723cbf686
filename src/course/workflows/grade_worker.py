"""A worker process of `course grade`: nbgrader's whole autograde of one student, on a private copy of the gradebook.

The grading process forks JOBS of these while it holds no gradebook connection (so they inherit the imported
nbgrader and course code, and no connection of its own); each gets ready (start_worker) while the grading
process prepares the batch, then takes a student at a time. A worker runs exactly the autograde stock
`nbgrader autograde` runs with the course's config — nbgrader's sanitize steps, the sandboxed run of the
student's code (a fresh sandbox per student), SaveAutoGrades, the out-of-process re-check, the late penalty and
metadata checks — against a private SQLite gradebook holding the assignment's rows and that student's
(course.grading.gradebook_changes); it reads the configured gradebook, never writes it. The autograded notebook,
the files the run wrote and the student's grading record land in the course root as stock autograde leaves them;
the gradebook rows autograde wrote come back as changes, which the grading process applies in one short
transaction (course.workflows.grade_batch). A worker dies with the grading process, so a killed batch leaves no
worker grading on.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from course.grading.gradebook_changes import Changes


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker of one batch needs: the course, the assignment, the settings and the private template."""

    course_root: str
    assignment: str
    settings: tuple  # GradingSandbox settings on top of the course's config, as (name, value) pairs
    db_url: str  # the configured gradebook, only read here
    template: str  # the private gradebook every student's copy starts from (course.grading.gradebook_changes)
    assignment_ids: tuple


@dataclass
class Graded:
    """What a worker did for one student: whether nbgrader's autograde succeeded, and the gradebook rows it wrote."""

    student: str
    success: bool
    reason: str | None
    changes: Changes
    seconds: float


def course_config(course_root: Path, settings: dict):
    """The course's nbgrader config (as nbgrader loads it in the course root) with GradingSandbox SETTINGS on top."""
    from course.grading.gradebook import nbgrader_config

    config = nbgrader_config(course_root)
    for name, value in settings.items():
        setattr(config.GradingSandbox, name, value)
    return config


def nbgrader_api(config):
    """nbgrader's Python API on the course root CONFIG names."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    os.environ["PATH"] = (
        f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # nbgrader runs alembic
    )
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def die_with_parent() -> None:
    """Ask Linux to kill this worker when the grading process dies (a SIGKILLed batch leaves no worker behind)."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown still stops the workers
        pass


@functools.cache
def setup_config(course_root: str, settings: tuple):
    """The course config with SETTINGS (WorkerSetup.settings), loaded once per worker."""
    return course_config(Path(course_root), dict(settings))


def start_worker(course_root: str, assignment: str, settings: tuple) -> None:
    """Run as each worker is forked: die with the grading process, leave the terminal's process group (Ctrl-C is
    the grading process's to handle), then get ready what the first student's autograde would otherwise wait for —
    the course config, the kernelspec lookup (which imports IPython), the per-process savings — while the grading
    process still prepares the batch."""
    import contextlib

    import nbformat

    from course.assignment.make_source import released_notebook
    from course.nbgrader_hooks.sandbox_execute import SandboxExecute
    from course.nbgrader_hooks.speedups import install_for

    die_with_parent()
    os.setpgid(0, 0)  # a terminal's Ctrl-C reaches the grading process alone, which stops the batch and says so
    config = setup_config(course_root, settings)
    with contextlib.suppress(Exception):  # a missing release or kernel: each student's autograde says so itself
        SandboxExecute(config=config).check_kernel(nbformat.read(released_notebook(course_root, assignment), 4))
    install_for(config)


class Worker:
    """One worker's loaded course config and its read-only connection to the configured gradebook."""

    def __init__(self, setup: WorkerSetup):
        from nbconvert.exporters import NotebookExporter

        from course.grading.gradebook import gradebook_engine
        from course.grading.gradebook_changes import copy_engine
        from course.nbgrader_hooks.speedups import install_for

        self.setup = setup
        self.config = copy.deepcopy(setup_config(setup.course_root, setup.settings))  # changed below: a copy
        install_for(self.config)  # as the course's exporter does for stock autograde (done already by start_worker)
        self.config.Autograde.exporter_class = NotebookExporter  # the lock and preflight: the grading process's
        self.config.RecheckOutOfProcess.merge_report = False  # the grading process merges the batch's outcomes once
        self.engine = gradebook_engine(setup.db_url)
        self.private = copy_engine(Path(setup.template).with_name(f"worker-{os.getpid()}.db"))

    def grade(self, student: str) -> Graded:
        """Autograde STUDENT against a private copy of the gradebook; return the rows it wrote."""
        import warnings

        from nbgrader.coursedir import CourseDirectory
        from sqlalchemy.exc import SAWarning

        from course.grading.gradebook_changes import changes, private_copy, read_copy, student_rows
        from course.nbgrader_hooks.manual_grades import remember_autograded_answers
        from course.nbgrader_hooks.outcome import record_path

        start = time.perf_counter()
        root, assignment = Path(self.setup.course_root), self.setup.assignment
        coursedir = CourseDirectory(config=self.config)
        autograded = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
        remember_autograded_answers(root, assignment, student, autograded / f"{assignment}.ipynb")
        record_path(root, assignment, student).unlink(missing_ok=True)
        with self.engine.connect() as conn:
            rows = student_rows(conn, self.setup.assignment_ids, student)
        before = private_copy(Path(self.setup.template), self.private, rows)
        self.config.CourseDirectory.db_url = str(self.private.url)  # one URL per worker: nbgrader reuses its engine
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SAWarning)  # nbgrader's add_submission warns on every new student
                outcome = nbgrader_api(self.config).autograde(assignment, student, force=True, create=True)
            found = changes(before, read_copy(self.private))
        finally:
            Path(self.private.url.database).unlink(missing_ok=True)
        reason = None if outcome["success"] else nbgrader_reason(outcome)
        return Graded(student, outcome["success"], reason, found, time.perf_counter() - start)


@functools.cache
def worker(setup: WorkerSetup) -> Worker:
    """This process's Worker for SETUP, made on its first student."""
    return Worker(setup)


def grade_student(setup: WorkerSetup, student: str) -> Graded:
    """Run in a worker process: autograde STUDENT (see Worker.grade)."""
    return worker(setup).grade(student)


# nbgrader's closing lines that only point elsewhere ("see the above traceback"); the cause is logged before them.
_GENERIC = ("Please see the", "There was an error processing", "Traceback (most recent", "Removing failed")


def nbgrader_reason(outcome: dict) -> str:
    """nbgrader's own reason for a failed autograde: its first specific ERROR line, else its last exception line."""
    log = (outcome.get("log") or "").splitlines()
    errors = [ln.split("] ", 1)[1].strip() for ln in log if ln.startswith("[ERROR] ")]
    specific = [ln for ln in errors if ln and not any(g in ln for g in _GENERIC)]
    if specific:
        return specific[0][:500]
    lines = [ln.strip() for ln in [*log, *(outcome.get("error") or "").splitlines()]]
    raised = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception): ", ln) and not any(g in ln for g in _GENERIC)]
    return (raised or [ln for ln in lines if ln] or ["no output"])[-1][:500]
