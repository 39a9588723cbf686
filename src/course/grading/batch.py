"""The grading batch behind `course grade`: sandboxed runs on worker threads, one writer of the gradebook.

For each submission, in order:
1. this process applies nbgrader's own sanitize steps (restore graded cells, overwrite test cells, …) — no
   student code runs here;
2. a worker runs the sanitized notebook in the grading sandbox and, in a second sandbox, the out-of-process
   re-check of the code items (JOBS workers at once);
3. this process runs nbgrader's autograde for that student in-process, with SandboxExecute handing it the
   sandbox's outputs, so nbgrader's SaveAutoGrades scores and writes the gradebook exactly as stock autograde;
4. the re-check's verdicts and flags go into the gradebook, then the student's state file is written
   atomically: from then on the student counts as graded, and a rerun (after a crash or SIGKILL) skips them
   unless their submission changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from course.fileio import write_atomic

STATE_DIR = ".course-grade"


@dataclass(frozen=True)
class SubmissionWork:
    """One student's submission folder and the digest of its content."""

    student: str
    folder: Path
    digest: str


class GradeState:
    """Per-student state files: a student is graded once theirs is written for their current submission."""

    def __init__(self, course_root: Path, assignment: str):
        self.dir = Path(course_root) / STATE_DIR / assignment

    @staticmethod
    def digest(folder: Path) -> str:
        """Hash of every file a student submitted (names and bytes)."""
        h = hashlib.sha256()
        for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
            h.update(str(path.relative_to(folder)).encode() + b"\0")
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        return h.hexdigest()

    def _path(self, student: str) -> Path:
        return self.dir / f"{student}.json"

    def is_done(self, work: SubmissionWork) -> bool:
        """Whether this exact submission was fully graded already."""
        try:
            return json.loads(self._path(work.student).read_text("utf-8"))["digest"] == work.digest
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def commit(self, work: SubmissionWork, grade) -> None:
        """Record the student as graded (atomically: all of it or nothing)."""
        write_atomic(self._path(work.student), json.dumps({"digest": work.digest, **grade.to_json()}, ensure_ascii=False))

    def load(self, work: SubmissionWork):
        """The outcome recorded for an already graded student."""
        from course.assignment.grade_run import StudentGrade

        return StudentGrade.from_json(work.student, json.loads(self._path(work.student).read_text("utf-8")))


@dataclass
class Prepared:
    """What a worker made for one student: the sandboxed run and the re-check's verdicts."""

    digest: str | None
    run: object | None
    verdicts: dict
    seconds: float


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


def nbgrader_api(course_root: Path, *, limits, unsafe: bool):
    """nbgrader's Python API on this course root, its Execute step swapped for SandboxExecute."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import Execute
    from traitlets.config.loader import PyFileConfigLoader

    from course.grading.sandbox_execute import SandboxExecute

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    steps = Autograde.class_traits()["autograde_preprocessors"].default()
    config.Autograde.autograde_preprocessors = [SandboxExecute if p is Execute else p for p in steps]
    SandboxExecute.limits, SandboxExecute.unsafe = limits, unsafe
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # nbgrader runs alembic
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config), config


def sanitize(config, course_root: Path, assignment: str, student: str, notebook_path: Path):
    """The notebook as nbgrader's autograde will run it: its own sanitize steps, applied here."""
    import nbformat
    from nbgrader.converters import Autograde

    nb = nbformat.read(notebook_path, as_version=4)
    resources = {"nbgrader": {"notebook": notebook_path.stem, "assignment": assignment, "student": student,
                              "db_url": config.CourseDirectory.db_url}}
    for step in config.Autograde.sanitize_preprocessors or Autograde.class_traits()["sanitize_preprocessors"].default():
        nb, resources = step(config=config).preprocess(nb, resources)
    return nb


def run_batch(course_root: Path, assignment: str, todo: list[SubmissionWork], checked: dict, *, rubric, source_cells,
              finish: Callable, jobs: int | None, limits, unsafe: bool, progress=None) -> BatchResult:
    """Grade TODO: prepare on JOBS workers, autograde and FINISH each student here, in order."""
    from course.assignment.preflight import Problem
    from course.errors import Location
    from course.grading.recheck import all_failed
    from course.grading.sandbox_execute import SandboxExecute, code_digest

    if not unsafe:
        from course.grading.sandbox import find_bwrap, probe_bwrap
        probe_bwrap(find_bwrap(), sys.executable)  # ToolMissing: the CLI offers --unsafe
    result = BatchResult(stats={"jobs": jobs or os.cpu_count() or 1, "students": len(todo), "sandbox_s": 0.0,
                                "nbgrader_s": 0.0, "gradebook_s": 0.0, "wall_s": 0.0})
    if not todo:
        return result
    start = time.perf_counter()
    api, config = nbgrader_api(course_root, limits=limits, unsafe=unsafe)
    bar = progress if progress is not None else Progress(len(todo))

    def prepare(work: SubmissionWork, nb) -> Prepared:
        from course.grading.recheck import recheck_submission
        from course.grading.sandbox_execute import run_in_sandbox

        t = time.perf_counter()
        run = run_in_sandbox(nb, limits=limits, unsafe=unsafe) if nb is not None else None
        verdicts = recheck_submission(checked[work.student].notebook, rubric, source_cells=source_cells, unsafe=unsafe)
        return Prepared(code_digest(nb) if nb is not None else None, run, verdicts, time.perf_counter() - t)

    with ThreadPoolExecutor(max_workers=result.stats["jobs"]) as pool:
        futures: dict[str, Future] = {}
        for work in todo:
            pre = checked[work.student]
            if pre.notebook is None:
                continue
            try:
                nb = sanitize(config, course_root, assignment, work.student, pre.notebook)
            except Exception:  # nbgrader will meet the same problem and report it below
                nb = None
            futures[work.student] = pool.submit(prepare, work, nb)
        for work in todo:
            pre = checked[work.student]
            where = Location(f"submitted/{work.student}/{assignment}")
            if pre.notebook is None:
                grade = finish(work, all_failed(rubric, pre.problems[0].message), [])
                bar.step(work.student, "unreadable: " + pre.problems[0].message[:60])
                result.students.append(grade)
                continue
            prepared = futures[work.student].result()
            result.stats["sandbox_s"] += prepared.seconds
            if prepared.digest and prepared.run is not None:
                SandboxExecute.prepared[prepared.digest] = prepared.run
            t = time.perf_counter()
            outcome = api.autograde(assignment, work.student, force=True, create=True)
            result.stats["nbgrader_s"] += time.perf_counter() - t
            run = SandboxExecute.used.pop(work.student, None)
            problems = [Problem(where, f"{i.kind} in cell {i.cell_index + 1}: {i.message}")
                        for i in (run.incidents if run is not None else ())]
            if not outcome["success"]:
                reason = _last_error(outcome)
                bar.step(work.student, f"not graded: {reason[:60]}")
                result.students.append(_failed(work, checked, rubric, f"autograde failed: {reason}", where))
                continue
            t = time.perf_counter()
            grade = finish(work, prepared.verdicts, problems)
            result.stats["gradebook_s"] += time.perf_counter() - t
            bar.step(work.student, "flagged" if grade.flagged else "ok")
            result.students.append(grade)
    SandboxExecute.prepared.clear()
    result.stats["wall_s"] = time.perf_counter() - start
    return result


def _last_error(outcome: dict) -> str:
    """The most telling line of a failed nbgrader run."""
    lines = (outcome.get("error") or outcome.get("log") or "").strip().splitlines()
    errors = [ln for ln in lines if "Error" in ln or "ERROR" in ln]
    return (errors or lines or ["no output"])[-1].strip()


def _failed(work: SubmissionWork, checked: dict, rubric, reason: str, where) -> object:
    """A student nbgrader could not grade this time: reported, flagged, not marked done (a rerun retries)."""
    from course.assignment.grade_run import StudentGrade
    from course.assignment.preflight import Problem
    from course.grading.recheck import all_failed

    return StudentGrade(work.student, all_failed(rubric, reason), [], [*checked[work.student].problems, Problem(where, reason)])
