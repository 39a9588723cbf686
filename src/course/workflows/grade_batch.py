"""The grading batch behind `course grade`: sandboxed runs on worker threads, one writer of the gradebook.

`course grade` runs the very autograde steps the course's nbgrader config gives stock `nbgrader autograde`
(SandboxExecute, SaveAutoGrades, RecheckOutOfProcess, …), only several submissions' sandboxed work at once.
For each submission, in order:
1. a worker thread applies nbgrader's own sanitize steps (restore graded cells, overwrite test cells, …; no
   student code runs there), runs the sanitized notebook in the grading sandbox and, in a second sandbox, the
   out-of-process re-check of the code items (JOBS workers at once); both land in GradingSandbox.runs_dir;
2. this process runs nbgrader's autograde for that student in-process; SandboxExecute and RecheckOutOfProcess
   pick up the worker's files, so nbgrader's SaveAutoGrades scores and writes the gradebook exactly as stock
   autograde does, and the re-check corrects, flags and records it the same way; a submission that cannot be
   read is scored 0 with its reason by the very function stock autograde's run uses
   (course.nbgrader_hooks.autograde_run.grade_unreadable);
3. the student's state file is written atomically with the grades the gradebook now holds.

The gradebook is the truth: a state file (or the record a stock autograde left) only lets a rerun skip a
student while the gradebook still holds exactly the grades recorded in it for the same submission content and
the same assignment version (a replaced, restored or deleted gradebook, a changed submission, or checks or a
release that changed mean grading again, with the reason said). One grading run per course at a time: the
batch holds the course's batch lock (course.nbgrader_hooks.batch_lock), which stock `nbgrader autograde` takes
too, so neither command writes the gradebook while the other does; the in-process autograde steps share it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from course.errors import Location
from course.fileio import write_atomic
from course.nbgrader_hooks.outcome import STATE_DIR, StudentGrade


@dataclass(frozen=True)
class SubmissionWork:
    """One student's submission folder and the digest of its content."""

    student: str
    folder: Path
    digest: str


def gradebook_rows(course_root: Path, assignment: str, student: str | None = None, config=None) -> dict[str, dict]:
    """What the configured gradebook holds per student for ASSIGNMENT: the submission's id and each auto score."""
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.nbgrader_hooks.outcome import gradebook_row

    with gradebook(configured_gradebook(course_root, config).url) as gb:
        submissions = gb.assignment_submissions(assignment)
        return {s.student.id: gradebook_row(s) for s in submissions if student is None or s.student.id == student}


class GradeState:
    """Per-student state files: a cache of "graded", valid only while the gradebook agrees with it."""

    def __init__(self, course_root: Path, assignment: str):
        self.root, self.assignment = Path(course_root), assignment
        self.dir = self.root / STATE_DIR / assignment / "graded"

    @staticmethod
    def digest(folder: Path) -> str:
        """Hash of every file a student submitted (names and bytes)."""
        from course.assignment.versions import submission_digest

        return submission_digest(folder)

    def _path(self, student: str) -> Path:
        return self.dir / f"{student}.json"

    def _latest(self, student: str) -> tuple[dict, dict] | None:
        """The student's last finished grade (outcome, what it came from): this batch's state file or the record
        the autograde steps left (stock `nbgrader autograde` writes only that), whichever is newer."""
        from course.nbgrader_hooks.outcome import record_path

        found = []
        try:
            path = self._path(student)
            state = json.loads(path.read_text("utf-8"))
            stamp = {"submission": state["digest"], "version": state.get("version"), "gradebook": state["gradebook"]}
            found.append((path.stat().st_mtime_ns, state, stamp))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        autograded = self.root / "autograded" / student / self.assignment / f"{self.assignment}.ipynb"
        try:  # the record is written before nbgrader writes the autograded notebook: both mean a finished autograde
            path = record_path(self.root, self.assignment, student)
            record = json.loads(path.read_text("utf-8"))
            if autograded.is_file() and isinstance(record["graded"], dict):
                found.append((path.stat().st_mtime_ns, record, record["graded"]))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return max(found, key=lambda f: f[0])[1:] if found else None

    def why_grade(self, work: SubmissionWork, rows: dict[str, dict], version: str | None) -> str | None:
        """Why WORK must be graded (None: this exact submission was graded for VERSION and ROWS still hold it)."""
        latest = self._latest(work.student)
        if latest is None:
            return "not graded yet"
        stamp = latest[1]
        if stamp.get("submission") != work.digest:
            return "new submission"
        if stamp.get("version") != version:
            old = stamp.get("version") or "unrecorded"
            return f"the assignment changed since it was graded (version {old} → {version})"
        if stamp.get("gradebook") != rows.get(work.student):
            return "the gradebook no longer holds the grades recorded for it"
        return None

    def commit(self, work: SubmissionWork, grade: StudentGrade) -> None:
        """Record the student as graded, with the grades the gradebook holds now (atomically: all or nothing)."""
        row = gradebook_rows(self.root, self.assignment, work.student).get(work.student)
        write_atomic(self._path(work.student), json.dumps({"digest": work.digest, "gradebook": row,
                                                           **grade.to_json()}, ensure_ascii=False))

    def load(self, work: SubmissionWork) -> StudentGrade:
        """The outcome recorded for an already graded student."""
        return StudentGrade.from_json(work.student, self._latest(work.student)[0])


@dataclass
class Prepared:
    """What a worker made for one student: whether its run is ready, and how long it took."""

    seconds: float
    error: str | None = None


@dataclass
class BatchResult:
    """Students graded in this run and where the time went."""

    students: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)


class Progress:
    """A one-line progress bar with ETA on a terminal; one line per student otherwise."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.start = total, 0, time.perf_counter()
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def step(self, student: str, note: str) -> None:
        """Count one finished student."""
        self.done += 1
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.done * (self.total - self.done)
        bar = "#" * (20 * self.done // max(self.total, 1))
        line = f"[{bar:<20}] {self.done}/{self.total}  {elapsed:5.1f}s  ETA {eta:4.0f}s  {student}: {note}"
        self.stream.write(("\r" + line[:110].ljust(110)) if self.tty else line + "\n")
        if self.tty and self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


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

    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # nbgrader runs alembic
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def sanitize(config, assignment: str, student: str, notebook_path: Path):
    """The notebook as nbgrader's autograde will run it: its own sanitize steps, applied here."""
    import nbformat
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory

    nb = nbformat.read(notebook_path, as_version=4)
    resources = {"nbgrader": {"notebook": notebook_path.stem, "assignment": assignment, "student": student,
                              "db_url": CourseDirectory(config=config).db_url}}  # the configured or default one
    for step in config.Autograde.sanitize_preprocessors or Autograde.class_traits()["sanitize_preprocessors"].default():
        nb, resources = step(config=config).preprocess(nb, resources)
    return nb


def autograded_view(config, coursedir, assignment: str, folder: Path) -> dict:
    """The files beside the notebook in autograded/<student>/<assignment>/ once nbgrader has copied the submission
    and put the source folder's own files over it (what SandboxExecute will see there)."""
    from course.nbgrader_hooks.sandbox_execute import folder_files

    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    excluded = set(config.get("Autograde", {}).get("exclude_overwriting", {}).get(assignment, []))
    overlay = {rel: path for rel, path in folder_files(source, coursedir.ignore).items() if rel not in excluded}
    return {**folder_files(folder, coursedir.ignore), **overlay}


def run_batch(course_root: Path, assignment: str, todo: list[SubmissionWork], checked: dict, *, config, rubric,
              source_cells, state: GradeState, jobs: int | None, progress=None) -> BatchResult:
    """Grade TODO: prepare on JOBS workers, autograde each student here, in order, and commit them to STATE."""
    from sqlalchemy.exc import SAWarning

    from course.nbgrader_hooks.autograde_run import grade_unreadable
    from course.nbgrader_hooks.outcome import record_path
    from course.nbgrader_hooks.sandbox_execute import (
        GradingSandbox,
        SandboxExecute,
        prepared_path,
        require_sandbox,
        save_run,
    )
    from course.nbgrader_hooks.sandbox_recheck import recheck_notebook, save_verdicts

    settings = GradingSandbox(config=config)
    execute = SandboxExecute(config=config)
    require_sandbox(settings)
    result = BatchResult(stats={"jobs": jobs or os.cpu_count() or 1, "students": len(todo), "sandbox_s": 0.0,
                                "nbgrader_s": 0.0, "gradebook_s": 0.0, "wall_s": 0.0})
    if not todo:
        return result
    start = time.perf_counter()
    api = nbgrader_api(config)
    bar = progress if progress is not None else Progress(len(todo))

    def prepare(work: SubmissionWork) -> Prepared:
        """On a worker thread: sanitize as nbgrader will, run in the sandbox, re-check; leave both in runs_dir."""
        t = time.perf_counter()
        try:
            nb = sanitize(config, assignment, work.student, checked[work.student].notebook)
            if execute.enabled:
                files = autograded_view(config, api.coursedir, assignment, work.folder)
                save_run(prepared_path(settings.runs_dir, work.student, nb, "run", files),
                         execute.sandboxed_run(nb, files, settings))
            save_verdicts(prepared_path(settings.runs_dir, work.student, nb, "recheck"),
                          recheck_notebook(nb, rubric, source_cells, settings))
        except Exception as exc:  # autograde below meets the same problem (or runs it in-process) and reports it
            return Prepared(time.perf_counter() - t, str(exc))
        return Prepared(time.perf_counter() - t)

    with ThreadPoolExecutor(max_workers=result.stats["jobs"]) as pool, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's add_submission warns on every new student
        futures: dict[str, Future] = {w.student: pool.submit(prepare, w) for w in todo
                                      if checked[w.student].notebook is not None}
        for work in todo:
            pre = checked[work.student]
            if pre.notebook is None:
                grade = grade_unreadable(api.coursedir, assignment, work.student, pre.problems[0])
                state.commit(work, grade)
                bar.step(work.student, "unreadable: " + pre.problems[0].message[:60])
                result.students.append(grade)
                continue
            if work.student in futures:
                result.stats["sandbox_s"] += futures[work.student].result().seconds
            record = record_path(course_root, assignment, work.student)
            record.unlink(missing_ok=True)
            t = time.perf_counter()
            outcome = api.autograde(assignment, work.student, force=True, create=True)
            result.stats["nbgrader_s"] += time.perf_counter() - t
            if not outcome["success"] or not record.is_file():
                reason = nbgrader_reason(outcome)
                bar.step(work.student, f"not graded: {reason[:60]}")
                result.students.append(_failed(work, checked, rubric, f"nbgrader autograde failed: {reason}"))
                continue
            t = time.perf_counter()
            grade = StudentGrade.from_json(work.student, json.loads(record.read_text("utf-8")))
            state.commit(work, grade)
            result.stats["gradebook_s"] += time.perf_counter() - t
            bar.step(work.student, "flagged" if grade.flagged else "ok")
            result.students.append(grade)
    shutil.rmtree(settings.runs_dir, ignore_errors=True)  # runs nbgrader did not pick up (failed students)
    result.stats["wall_s"] = time.perf_counter() - start
    return result


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


def _failed(work: SubmissionWork, checked: dict, rubric, reason: str) -> StudentGrade:
    """A student nbgrader could not grade this time: reported, flagged, not marked done (a rerun retries)."""
    from course.assignment.preflight import Problem
    from course.grading.recheck import all_failed

    where = Location(f"submitted/{work.student}")
    return StudentGrade(work.student, all_failed(rubric, reason), [],
                        [*checked[work.student].problems, Problem(where, reason)])
