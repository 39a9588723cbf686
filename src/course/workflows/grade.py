"""`course grade <assignment>`: the course's nbgrader autograde (sandboxed, re-checked), parallel and resumable.

Unreadable submissions are scored 0 with a message; every other one is autograded by the autograde steps the
course's nbgrader config sets (its code run in the grading sandbox, then re-checked outside the student's
kernel, whose verdict goes into the gradebook wherever it differs from the kernel's), several at once
(course.workflows.grade_batch). A submission with a problem or a corrected score is flagged for review. Both
are done by the same nbgrader hooks stock `nbgrader autograde` runs; each student's outcome lands in
reports/<assignment>-grade.json.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType

from course.assignment.make_source import released_notebook, source_notebook
from course.assignment.preflight import preflight
from course.errors import CourseError, Interrupted, Location
from course.grading.gradebook import configured_gradebook, course_gradebook
from course.nbgrader_hooks.outcome import StudentGrade
from course.sandbox.limits import Limits

FORCED = "asked for with --force"
RESUMED = "an interrupted --force run had not regraded them yet"
EXCEPTION_LINE = re.compile(r"^\s*[\w.]+(Error|Exception): ")


@dataclass(frozen=True)
class GradeOptions:
    """How `course grade` grades one assignment: its workers, the sandbox settings of this run, who is graded again."""

    jobs: int | None = None  # submissions graded at once (None: one per CPU core)
    limits: Limits | None = None  # each of its fields overrides that GradingSandbox setting
    unsafe: bool = False  # students' code without the bubblewrap sandbox (c.GradingSandbox.unsafe)
    settings: Mapping[str, object] = field(default_factory=dict)  # GradingSandbox settings on top of the config's
    force_all: bool = False  # grade everyone again, even what is graded for the current version
    force_students: tuple[str, ...] = ()  # grade these students again

    def __post_init__(self) -> None:
        if self.jobs is not None and self.jobs < 1:
            raise CourseError(f"--jobs must be at least 1, got {self.jobs}")
        if self.force_all and self.force_students:
            raise CourseError(
                "--force grades everyone again or the students named, not both: "
                f"force_all with force_students {', '.join(self.force_students)}"
            )
        object.__setattr__(self, "force_students", tuple(self.force_students))
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))

    def overrides(self) -> dict[str, object]:
        """The GradingSandbox settings this run sets over the course's nbgrader config."""
        return {
            **({f.name: getattr(self.limits, f.name) for f in fields(self.limits)} if self.limits else {}),
            **({"unsafe": True} if self.unsafe else {}),
            **self.settings,
        }

    def forced(self, submitted: Sequence[str], where: Path) -> frozenset[str]:
        """The students of SUBMITTED this run grades again whatever the gradebook holds; a student named without a
        submission (in WHERE) stops the run before anyone is graded."""
        if self.force_all:
            return frozenset(submitted)
        unknown = sorted(set(self.force_students) - set(submitted))
        if unknown:
            import difflib

            near = [m[0] for u in unknown if (m := difflib.get_close_matches(u, sorted(submitted), n=1, cutoff=0.6))]
            raise CourseError(
                f"--force names students without a submission: {', '.join(unknown)}"
                + (f" (did you mean {', '.join(near)}?)" if near else ""),
                Location(where),
            )
        return frozenset(self.force_students)


@dataclass(frozen=True)
class GradeStats:
    """Whom one `course grade` run graded and why, and where its time went."""

    students: int  # graded in this run
    skipped: int  # already graded with the current version, left as they were
    jobs: int
    wall_s: float  # the batch, first submission handed out to last applied
    worker_s: float  # autograde on the workers, summed
    gradebook_s: float  # applying the workers' rows to the gradebook
    grading_cpu_s: float  # this process's own CPU: all it does is sequential
    reasons: Mapping[str, tuple[str, ...]]  # why they were graded (FORCED, RESUMED, a new version, …) → students
    version: str  # the assignment's version graded
    released: str | None  # what releasing it again said, when its source or checks had changed


@dataclass(frozen=True)
class GradeRun:
    """What `course grade` did for one assignment."""

    course_root: Path
    assignment: str
    code_points: dict[str, float]
    students: list[StudentGrade]
    report: Path
    stats: GradeStats

    def student(self, student: str) -> StudentGrade:
        """One student's outcome (KeyError when they were not graded)."""
        for grade in self.students:
            if grade.student == student:
                return grade
        raise KeyError(student)


def nbgrader_env() -> dict[str, str]:
    """The environment for nbgrader subprocesses: this Python's scripts first (nbgrader runs `alembic`)."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def run_nbgrader(course_root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a stock nbgrader command in the course root with its nbgrader_config.py, a process of its own
    (course.workflows.nbgrader_process); CHECK raises on failure."""
    from course.workflows.nbgrader_process import run_forked

    proc = run_forked(Path(course_root), args, nbgrader_env())
    if check and proc.returncode != 0:
        raise nbgrader_failure(Path(course_root), args[0], proc.stdout + proc.stderr)
    return proc


def nbgrader_failure(course_root: Path, command: str, log: str) -> CourseError:
    """The error to show for a failed nbgrader command: its exception line, else its first ERROR line."""
    lines = log.strip().splitlines()
    found = [line for line in lines if EXCEPTION_LINE.match(line)] or [line for line in lines if "ERROR" in line]
    return CourseError(
        f"nbgrader {command} failed: {(found or lines[-1:] or ['no output'])[-1].strip()}", Location(course_root)
    )


def release(course_root: Path, assignment: str) -> Path:
    """Stock `nbgrader generate_assignment ASSIGNMENT --force`: the source notebook → release/ and the gradebook."""
    run_nbgrader(Path(course_root), "generate_assignment", assignment, "--force")
    return released_notebook(Path(course_root).resolve(), assignment)


def grade_assignment(
    course_root: Path, assignment: str, options: GradeOptions = GradeOptions(), *, progress=None
) -> GradeRun:
    """Grade every submission in submitted/*/ASSIGNMENT (see course.workflows.grade_batch), then write the JSON report.

    OPTIONS' settings go on top of the course's nbgrader config. Students whose current submission the gradebook
    already holds grades for, made with the current version of the assignment, are skipped, so a killed batch
    resumes where it stopped and a finished one changes nothing when run again; a source notebook or checks changed
    since the release are released first (stock generate_assignment) and everyone graded with the old version is
    graded again. OPTIONS' force_all and force_students grade everyone or the students named again; a forced run
    that was stopped is finished by the next run, forced or not. Ctrl-C stops the batch with
    Interrupted("interrupted after N of M; …") and leaves it resumable.
    """
    import time

    import nbformat

    from course.assignment.versions import assignment_version, released_texts
    from course.grading.assignments import require_assignment
    from course.grading.deadlines import apply_due_date
    from course.grading.rubric import load_rubric, rubric_path
    from course.nbgrader_hooks.batch_lock import batch_lock
    from course.nbgrader_hooks.outcome import merge_into_report
    from course.nbgrader_hooks.sandbox_execute import sandbox_settings
    from course.workflows.grade_batch import GradeState, SubmissionWork, gradebook_rows, run_batch, worker_pool
    from course.workflows.grade_worker import course_config

    cpu = time.process_time()
    root = Path(course_root).resolve()
    require_assignment(root, assignment)
    rubric = load_rubric(rubric_path(root, assignment))
    source = source_notebook(root, assignment)
    if not source.exists():
        raise CourseError("no source notebook: run `course build` first", Location(source))
    if not released_notebook(root, assignment).exists():
        raise CourseError(
            f"not released yet: run `nbgrader generate_assignment {assignment}` in {root} first",
            Location(root / "release" / assignment),
        )
    require_assignment_in_gradebook(root, assignment)
    apply_due_date(root, configured_gradebook(root).url, assignment)  # what nbgrader's late check reads
    source_cells = nbformat.read(source, as_version=4).cells
    folders = sorted(p for p in (root / "submitted").glob(f"*/{assignment}") if p.is_dir())
    if not folders:
        raise CourseError(
            f"no submissions: expected folders submitted/<student>/{assignment}/", Location(root / "submitted")
        )
    config = course_config(root, options.overrides())
    sandbox_settings(config)  # a setting that is not valid stops the run here, once, not at each student
    forced = options.forced([f.parent.name for f in folders], root / "submitted")
    todo: list = []
    try:
        with batch_lock(root, f"course grade {assignment}"):
            released = rerelease_if_changed(root, assignment)
            version = assignment_version(root, assignment)
            state = GradeState(root, assignment)
            rows = gradebook_rows(root, assignment, config=config)
            work = [SubmissionWork(f.parent.name, f, state.digest(f)) for f in folders]
            pending = state.pending_force()
            why = {
                w.student: FORCED
                if w.student in forced
                else RESUMED
                if w.student in pending
                else state.why_grade(w, rows, version)
                for w in work
            }
            todo = [w for w in work if why[w.student]]
            state.start_force([w.student for w in todo if why[w.student] in (FORCED, RESUMED)])
            jobs = min(options.jobs or os.cpu_count() or 1, max(len(todo), 1))  # no worker without a student
            with worker_pool(root, assignment, config, jobs) if todo else contextlib.nullcontext() as pool:
                history = released_texts(root, assignment)  # the workers get ready meanwhile
                checked = {
                    w.student: preflight(
                        w.folder,
                        f"{assignment}.ipynb",
                        source_cells,
                        shown_as=f"submitted/{w.student}/{assignment}",
                        released=history,
                    )
                    for w in todo
                }
                batch = run_batch(
                    root,
                    assignment,
                    todo,
                    checked,
                    config=config,
                    rubric=rubric,
                    state=state,
                    pool=pool,
                    jobs=jobs,
                    progress=progress,
                )
            state.end_force()
            done = [state.load(w) for w in work if w not in todo]
            students = sorted([*batch.students, *done], key=lambda g: g.student)
            report = merge_into_report(root, assignment, students, {s.student for s in students})  # who left, leaves
    except Interrupted:
        raise
    except KeyboardInterrupt:  # stopped before a student was applied: nothing to undo, everything to resume
        raise Interrupted(
            f"interrupted after 0 of {len(todo) or len(folders)}; `course grade {assignment}` resumes"
        ) from None
    reasons: dict[str, tuple[str, ...]] = {}
    for w in todo:
        reasons[why[w.student]] = (*reasons.get(why[w.student], ()), w.student)
    stats = GradeStats(
        **vars(batch.times),
        skipped=len(done),
        grading_cpu_s=time.process_time() - cpu,
        reasons=MappingProxyType(reasons),
        version=version,
        released=released,
    )
    return GradeRun(root, assignment, {c.id: c.points for c in rubric.code_items}, students, report, stats)


def rerelease_if_changed(root: Path, assignment: str) -> str | None:
    """Release ASSIGNMENT again when its source or checks changed since the recorded release; say what happened.

    Stock `nbgrader generate_assignment --force` through the course's config: a cell change nbgrader refuses
    stops here with the way out, and release/ is left as it was. Where the assignment was released to nbgrader's
    exchange, stock `nbgrader release_assignment --force` replaces it there, so students fetch the new one.
    """
    from course.assignment.versions import assignment_version, released_version

    before, now = released_version(root, assignment), assignment_version(root, assignment)
    if before == now:
        return None
    release(root, assignment)
    said = (
        f"released {assignment} again: the source notebook (its text included) or checks changed since "
        f"{f'version {before}' if before else 'the last release (made before versions were recorded)'}; "
        f"now version {now}"
    )
    outbound = exchange_release(root, assignment)
    if outbound is None:
        return f"{said}; students get it from release/{assignment}/ (the student site after `course build`)"
    run_nbgrader(root, "release_assignment", assignment, "--force")
    return (
        f"{said}; the exchange has it too (`nbgrader release_assignment {assignment} --force`, {outbound}): a "
        f"student who fetched the old one moves their {assignment}/ folder aside and fetches again"
    )


def exchange_release(root: Path, assignment: str) -> Path | None:
    """Where nbgrader's exchange holds ASSIGNMENT for students to fetch (None: never released to an exchange)."""
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import Exchange

    from course.grading.gradebook import nbgrader_config

    config = nbgrader_config(root)
    outbound = Path(Exchange(config=config).root) / CourseDirectory(config=config).course_id / "outbound" / assignment
    return outbound if outbound.is_dir() else None


def require_assignment_in_gradebook(root: Path, assignment: str, config=None) -> None:
    """Stop before grading anyone when the configured gradebook is unreadable or lacks the assignment."""
    from nbgrader.api import MissingEntry

    fix = (
        f"if db_url names the right gradebook, run `nbgrader generate_assignment {assignment} --force` in {root} "
        "(it records the assignment and its graded cells from the source notebook), then grade again; every "
        "student is then graded afresh"
    )
    where = configured_gradebook(root, config)
    with course_gradebook(root, fix, config) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise where.error(
                f"the gradebook has no assignment {assignment!r} (a new or replaced database, or one "
                f"restored from an older copy?): {fix}"
            ) from None


def summary(result: GradeRun) -> str:
    """A table of per-item points (kernel→re-check where they differ), then each flagged student's reasons."""
    items = list(result.code_points)
    width = max(len(s.student) for s in result.students)
    lines = [f"{'student':<{width}}  " + "  ".join(items) + "  code  flag"]
    notes = []
    for s in result.students:
        corrected = [c for c in s.changes if c.kernel_score is not None]
        kernel = {c.item: c.kernel_score for c in corrected}
        points = {item: result.code_points[item] if s.verdicts[item].passed else 0 for item in items}
        cells = [f"{kernel[i]:g}→{points[i]:g}" if i in kernel else f"{points[i]:g}" for i in items]
        lines.append(
            f"{s.student:<{width}}  "
            + "  ".join(f"{c:>{len(i)}}" for c, i in zip(cells, items))
            + f"  {sum(points.values()):g}/{sum(result.code_points.values()):g}"
            + ("  FLAG" if s.flagged else "")
        )
        notes += [f"  {s.student}: {p}" for p in s.problems]
        notes += [f"  {s.student}: {n}" for n in s.notes]
        notes += [
            f"  {s.student}: {c.item}: kernel {c.kernel_score:g}, re-check {c.recheck_score:g} ({c.reason})"
            for c in corrected
        ]
    flagged = sum(s.flagged for s in result.students)
    lines += [
        "",
        f"{flagged} of {len(result.students)} submission(s) flagged for review:"
        if flagged
        else "no submission flagged",
        *notes,
        f"report: {result.report}",
    ]
    limits = sorted({s.memory_limit for s in result.students if s.memory_limit})
    lines += [f"memory limit: {limit}" for limit in limits]
    stats = result.stats
    if stats.released:
        lines.append(stats.released)
    for reason, students in stats.reasons.items():
        lines.append(f"graded {len(students)} — {reason}: {', '.join(students)}")
    lines.append(
        f"graded {stats.students} ({stats.skipped} already graded, skipped) with {stats.jobs} "
        f"worker(s) in {stats.wall_s:.1f} s wall; time spent: autograde {stats.worker_s:.1f} s "
        f"(on the workers), gradebook writes {stats.gradebook_s:.1f} s; the grading process's own "
        f"CPU (the sequential part) {stats.grading_cpu_s:.1f} s"
    )
    return "\n".join(lines)
