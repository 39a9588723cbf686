"""The grading batch behind `course grade`: autograde on worker processes, one short gradebook transaction each.

`course grade` runs the very autograde stock `nbgrader autograde` runs with the course's nbgrader config
(nbgrader's sanitize steps, SandboxExecute, SaveAutoGrades, RecheckOutOfProcess, …), JOBS students at once:
1. each worker process (course.workflows.grade_worker) runs nbgrader's whole autograde for one student against
   a private copy of the gradebook holding the assignment's rows and that student's; the autograded notebook,
   the files the run wrote and the student's grading record land in the course root as stock autograde leaves them;
2. this process applies the rows that autograde wrote to the configured gradebook in one short transaction
   (course.grading.gradebook_changes), in the order of the students; a submission that cannot be read is scored
   0 with its reason by the very function stock autograde's run uses
   (course.nbgrader_hooks.autograde_run.grade_unreadable);
3. the student's state file is written atomically with the grades the gradebook now holds.
Only steps 2 and 3 are sequential; both take milliseconds.

The gradebook is the truth: a state file (or the record a stock autograde left) only lets a rerun skip a
student while the gradebook still holds exactly the grades recorded in it for the same submission content and
the same assignment version (a replaced, restored or deleted gradebook, a changed submission, or checks or a
release that changed mean grading again, with the reason said). One grading run per course at a time: the
batch holds the course's batch lock (course.nbgrader_hooks.batch_lock), which stock `nbgrader autograde` takes
too, so neither command writes the gradebook while the other does; the workers only read it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import Executor, Future, wait
from dataclasses import dataclass, field
from pathlib import Path

from course.errors import Interrupted, Location
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
            return "no grade recorded for them before"
        stamp = latest[1]
        if stamp.get("submission") != work.digest:
            return "new submission"
        if stamp.get("version") != version:
            old = stamp.get("version") or "unrecorded"
            return f"the assignment changed since it was graded (version {old} → {version})"
        if stamp.get("gradebook") != rows.get(work.student):
            return "the gradebook no longer holds the grades recorded for it"
        return None

    def commit(self, work: SubmissionWork, grade: StudentGrade, row: dict | None = None) -> None:
        """Record the student as graded, with the grades the gradebook holds now, ROW if known (atomically)."""
        if row is None:
            row = gradebook_rows(self.root, self.assignment, work.student).get(work.student)
        write_atomic(
            self._path(work.student),
            json.dumps({"digest": work.digest, "gradebook": row, **grade.to_json()}, ensure_ascii=False),
        )

    def _forced_path(self) -> Path:
        return self.dir.parent / "forced.json"

    def pending_force(self) -> set[str]:
        """Students a --force run that was stopped (Ctrl-C, killed) had not regraded yet: a rerun grades them."""
        try:
            forced = json.loads(self._forced_path().read_text("utf-8"))
            started, students = int(forced["started_ns"]), set(forced["students"])
        except (OSError, ValueError, KeyError, TypeError):
            return set()
        return {s for s in students if self._committed_ns(s) < started}

    def _committed_ns(self, student: str) -> int:
        """When this batch last recorded STUDENT as graded (0: never)."""
        try:
            return self._path(student).stat().st_mtime_ns
        except OSError:
            return 0

    def start_force(self, students: list[str]) -> None:
        """Remember that STUDENTS are to be regraded whatever their state, until each is (so a stopped run resumes)."""
        if students:
            write_atomic(self._forced_path(), json.dumps({"started_ns": time.time_ns(), "students": students}))
        else:
            self._forced_path().unlink(missing_ok=True)

    def end_force(self) -> None:
        """The forced regrade is done."""
        self._forced_path().unlink(missing_ok=True)

    def load(self, work: SubmissionWork) -> StudentGrade:
        """The outcome recorded for an already graded student."""
        return StudentGrade.from_json(work.student, self._latest(work.student)[0])


@dataclass
class BatchTimes:
    """How many students one batch graded on how many workers, and where its time went (seconds)."""

    jobs: int
    students: int
    wall_s: float = 0.0
    worker_s: float = 0.0
    gradebook_s: float = 0.0


@dataclass
class BatchResult:
    """Students graded in this run and where the time went."""

    times: BatchTimes
    students: list = field(default_factory=list)


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


def scratch_folder() -> str | None:
    """Where the private gradebook copies go: the temporary folder TMPDIR names when it is set (a batch killed
    with SIGKILL leaves its copies there, where the user chose), else memory-backed /dev/shm where there is one
    (autograde commits after every grade; nothing there needs to survive), else the system's temporary folder."""
    return "/dev/shm" if "TMPDIR" not in os.environ and os.access("/dev/shm", os.W_OK) else None


REPORT_EVERY_S = 5.0  # how often the grade report takes in the outcomes graded since (the rest at the batch's end)


def worker_settings(config) -> tuple:
    """The GradingSandbox settings of CONFIG as a worker receives them."""
    return tuple(sorted(config.GradingSandbox.items()))


@contextlib.contextmanager
def worker_pool(course_root: Path, assignment: str, config, jobs: int) -> Iterator[Executor]:
    """JOBS worker processes, forked now so that they get ready (grade_worker.start_worker) while this process
    still prepares the batch; on leaving (an error, Ctrl-C), students not started yet are not started."""
    from concurrent.futures import ProcessPoolExecutor

    from course.nbgrader_hooks.sandbox_execute import require_sandbox, sandbox_settings
    from course.workflows.grade_worker import start_worker

    require_sandbox(sandbox_settings(config))
    # forked while this process holds no gradebook connection (its checks closed theirs): each worker starts with
    # nbgrader and the course already imported (no second start-up per worker) and with no connection of this one
    pool = ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context("fork"),
        initializer=start_worker,
        initargs=(str(course_root), assignment, worker_settings(config)),
    )
    # Frozen before the workers are forked (Python's advice for fork without exec): what this process holds (its
    # imported code, a test run's whole heap) is left out of every collector pass, here and in each worker, whose
    # start (speedups.freeze_imports) then collects only what it made itself, not the parent's heap once more
    gc.freeze()
    pool.submit(os.getpid)  # a forking pool forks every worker at its first task
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run_batch(
    course_root: Path,
    assignment: str,
    todo: list[SubmissionWork],
    checked: dict,
    *,
    config,
    rubric,
    state: GradeState,
    pool: Executor | None,
    jobs: int,
    progress=None,
) -> BatchResult:
    """Grade TODO: autograde on POOL's JOBS workers (worker_pool), apply each student's rows here, in order,
    commit to STATE."""
    from course.grading.gradebook import configured_gradebook, gradebook_engine
    from course.grading.gradebook_changes import assignment_rows, make_template, schema_version
    from course.workflows.grade_worker import WorkerSetup, grade_student

    result = BatchResult(BatchTimes(jobs, len(todo)))
    if not todo:
        return result
    start = time.perf_counter()
    url = configured_gradebook(course_root, config).url
    engine = gradebook_engine(url)
    with tempfile.TemporaryDirectory(prefix="course-grade-", dir=scratch_folder()) as scratch:
        with engine.connect() as conn:
            rows, version = assignment_rows(conn, assignment), schema_version(conn)
        template = make_template(Path(scratch) / "template.db", rows, version)
        setup = WorkerSetup(
            str(course_root), assignment, worker_settings(config), url, str(template), tuple(rows["assignment"])
        )
        futures = {
            w.student: pool.submit(grade_student, setup, w.student)
            for w in todo
            if checked[w.student].notebook is not None
        }
        try:
            with engine.connect() as conn:
                Applier(
                    course_root,
                    assignment,
                    config,
                    conn,
                    state,
                    result,
                    checked,
                    rubric,
                    progress if progress is not None else Progress(len(todo)),
                ).run(todo, futures)
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted after {len(result.students)} of {len(todo)}; `course grade {assignment}` resumes"
            ) from None
        finally:  # stopped (Ctrl-C, an error): students not started yet are not started, the others end here
            for future in futures.values():
                future.cancel()
            wait(futures.values())
    engine.dispose()
    result.times.wall_s = time.perf_counter() - start
    return result


@dataclass
class Applier:
    """The grading process's part of a batch: each student's outcome, in order, into the gradebook and the state."""

    root: Path
    assignment: str
    config: object
    conn: object  # a connection to the configured gradebook
    state: GradeState
    result: BatchResult
    checked: dict
    rubric: object
    bar: Progress

    def run(self, todo: list[SubmissionWork], futures: dict[str, Future]) -> None:
        """Apply every student of TODO; the grade report takes in the outcomes every REPORT_EVERY_S seconds."""
        from course.nbgrader_hooks.outcome import merge_into_report

        unreported, reported_at = [], time.perf_counter()
        try:
            for work in todo:
                future = futures.pop(work.student, None)  # dropped once applied: memory stays flat
                grade, note = self.unreadable(work) if future is None else self.graded(work, future)
                self.result.students.append(grade)  # counted before it is shown: Ctrl-C after the line counts it
                unreported.append(grade)
                self.bar.step(work.student, note)
                if time.perf_counter() - reported_at > REPORT_EVERY_S:  # a killed batch's report is at most this old
                    merge_into_report(self.root, self.assignment, unreported)
                    unreported, reported_at = [], time.perf_counter()
        except KeyboardInterrupt:  # the report keeps everyone applied so far; the rest wait for the rerun
            if unreported:
                merge_into_report(self.root, self.assignment, unreported)
            raise

    def unreadable(self, work: SubmissionWork) -> tuple[StudentGrade, str]:
        """Score a submission preflight could not read 0 with its reason (as stock autograde does)."""
        from course.nbgrader_hooks.autograde_run import grade_unreadable
        from course.workflows.grade_worker import nbgrader_api

        problem = self.checked[work.student].problems[0]
        grade = grade_unreadable(nbgrader_api(self.config).coursedir, self.assignment, work.student, problem)
        self.state.commit(work, grade)
        return grade, "unreadable: " + problem.message[:60]

    def graded(self, work: SubmissionWork, future: Future) -> tuple[StudentGrade, str]:
        """A worker's autograde of WORK: its gradebook rows applied in one transaction, then the student's state."""
        from course.grading.gradebook_changes import apply_changes
        from course.nbgrader_hooks.outcome import record_path

        try:
            done = future.result()
        except Exception as exc:  # a worker that died (killed, out of memory): retried by the next run
            return _failed(work, self.checked, self.rubric, f"grading worker failed: {exc}"), f"not graded: {exc}"[:80]
        self.result.times.worker_s += done.seconds
        t = time.perf_counter()
        with self.conn.begin():
            apply_changes(self.conn, done.changes)
        record = record_path(self.root, self.assignment, work.student)
        if not done.success or not record.is_file():
            reason = done.reason or "nbgrader autograde left no grading record"
            return _failed(
                work, self.checked, self.rubric, f"nbgrader autograde failed: {reason}"
            ), f"not graded: {reason[:60]}"
        saved = json.loads(record.read_text("utf-8"))
        grade = StudentGrade.from_json(work.student, saved)
        self.state.commit(work, grade, saved["graded"]["gradebook"])
        self.result.times.gradebook_s += time.perf_counter() - t
        return grade, "flagged" if grade.flagged else "ok"


def _failed(work: SubmissionWork, checked: dict, rubric, reason: str) -> StudentGrade:
    """A student nbgrader could not grade this time: reported, flagged, not marked done (a rerun retries)."""
    from course.assignment.preflight import Problem
    from course.grading.recheck import all_failed

    where = Location(f"submitted/{work.student}")
    return StudentGrade(
        work.student, all_failed(rubric, reason), [], [*checked[work.student].problems, Problem(where, reason)]
    )
