"""One student's grading outcome, written by the autograde steps for whichever command ran them.

Every autograde of the course (stock `nbgrader autograde`, formgrader's button, `course grade`) ends with the
same outcome per student, written in two places: the student's record (.course-grade/<assignment>/records/,
what `course grade` reads back from its workers) and the student's entry in reports/<assignment>-grade.json
(what `course report` and the feedback read: verdicts, diagnoses, problems; `course grade` merges its batch's
outcomes there at the end).
"""

from __future__ import annotations

import glob
import json
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course.assignment.preflight import Problem
from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.grading.recheck import Change, ItemVerdict

STATE_DIR = ".course-grade"


@dataclass
class StudentGrade:
    """One student's outcome: re-check verdicts, corrections written to the gradebook, problems found."""

    student: str
    verdicts: dict[str, ItemVerdict]
    changes: list[Change] = field(default_factory=list)
    problems: list[Problem | str] = field(default_factory=list)  # str once read back from JSON
    notes: list[str] = field(default_factory=list)  # said in the row, no reason to flag (e.g. the engine used)
    memory_limit: str = ""  # which memory limit the sandbox applied
    version: str = ""  # the assignment version graded against (course.assignment.versions)
    ungradable: str = ""  # why the submission could not be graded at all (scored 0; the report says INCOMPLETE)

    @property
    def flagged(self) -> bool:
        """Whether a grader should look at this submission."""
        return bool(self.changes or self.problems)

    def to_json(self) -> dict:
        """The outcome as plain data (problems as their messages), for reports, records and state files."""
        return {
            "flagged": self.flagged,
            "verdicts": {k: asdict(v) for k, v in self.verdicts.items()},
            "changes": [asdict(c) for c in self.changes],
            "problems": [str(p) for p in self.problems],
            "notes": self.notes,
            "memory_limit": self.memory_limit,
            "version": self.version,
            "ungradable": self.ungradable,
        }

    @classmethod
    def from_json(cls, student: str, data: dict) -> StudentGrade:
        """An outcome written by to_json."""
        return cls(
            student,
            {k: ItemVerdict(**v) for k, v in data["verdicts"].items()},
            [Change(**c) for c in data["changes"]],
            list(data["problems"]),
            list(data.get("notes", [])),
            data.get("memory_limit") or "",
            data.get("version") or "",
            data.get("ungradable") or "",
        )


def record_path(course_root: Path | str, assignment: str, student: str) -> Path:
    """Where the autograde steps leave what happened to one student's submission."""
    return Path(course_root) / STATE_DIR / assignment / "records" / f"{student}.json"


def grade_report_path(course_root: Path | str, assignment: str) -> Path:
    """reports/<assignment>-grade.json: every student's latest outcome, read by `course report` and the feedback."""
    return Path(course_root) / "reports" / f"{assignment}-grade.json"


def save_outcome(
    course_root: Path | str,
    assignment: str,
    grade: StudentGrade,
    stamp: dict | None = None,
    current: Collection[str] | None = None,
) -> None:
    """Write one student's record (with STAMP, what it was graded from) and put the outcome in the grade report
    (CURRENT: see merge_into_report)."""
    write_record(course_root, assignment, grade, stamp)
    merge_into_report(course_root, assignment, [grade], current)


def write_record(course_root: Path | str, assignment: str, grade: StudentGrade, stamp: dict | None = None) -> None:
    """Write one student's record: the outcome and STAMP, what it was graded from (atomically)."""
    write_atomic(
        record_path(course_root, assignment, grade.student),
        json.dumps({**grade.to_json(), **({"graded": stamp} if stamp else {})}, ensure_ascii=False, indent=1),
    )


def current_students(coursedir, assignment: str) -> set[str]:
    """Who still has a submission: a folder in submitted/ (nbgrader's CourseDirectory COURSEDIR) and a submission
    in its gradebook. A student who left either no longer belongs in the grade report."""
    from course.grading.gradebook import gradebook

    folders = {
        Path(p).parent.name for p in glob.glob(coursedir.format_path(coursedir.submitted_directory, "*", assignment))
    }
    with gradebook(coursedir.db_url) as gb:
        return folders & {s.student.id for s in gb.assignment_submissions(assignment)}


def gradebook_row(submission) -> dict:
    """What the gradebook holds for one submission: its id and each grade's auto score (what a rerun compares)."""
    return {"id": submission.id, "grades": {g.name: g.auto_score for nb in submission.notebooks for g in nb.grades}}


def graded_stamp(db_url: str, assignment: str, student: str, folder: Path | str, version: str | None) -> dict:
    """What a grade came from: the submission's digest, the assignment version and the gradebook's row after it.

    Whichever command graded the student, `course grade` skips them while all three still hold.
    """
    from course.assignment.versions import submission_digest
    from course.grading.gradebook import gradebook

    with gradebook(db_url) as gb:
        row = gradebook_row(gb.find_submission(assignment, student))
    return {"submission": submission_digest(Path(folder)), "version": version, "gradebook": row}


def merge_into_report(
    course_root: Path | str, assignment: str, grades: list[StudentGrade], current: Collection[str] | None = None
) -> Path:
    """Replace these students' entries in the grade report, keeping everyone else's (atomically).

    CURRENT, where given, is who still has a submission (current_students): anyone else's entry is dropped, so
    the report keeps no student who left. Only ever called under the course's batch lock, so two runs never
    interleave their updates. A report that cannot be read (damaged by hand) is rebuilt from the students'
    records, so no one's outcome is lost.
    """
    path = grade_report_path(course_root, assignment)
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError):
        data = None
    data = data if isinstance(data, dict) else outcomes_from_records(course_root, assignment)
    data.update({g.student: g.to_json() for g in grades})
    if current is not None:
        data = {
            student: outcome
            for student, outcome in data.items()
            if student in current or any(g.student == student for g in grades)
        }
    return write_atomic(path, json.dumps(dict(sorted(data.items())), ensure_ascii=False, indent=2) + "\n")


def outcomes_from_records(course_root: Path | str, assignment: str) -> dict[str, dict]:
    """Every student's last outcome as the per-student records hold it (each written atomically by save_outcome)."""
    course_root = Path(course_root)
    folder = record_path(course_root, assignment, "_").parent
    outcomes = {}
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text("utf-8"))
            if isinstance(record, dict):
                record.pop("graded", None)  # what the grade came from, not part of the outcome
            outcomes[path.stem] = record
        except (OSError, ValueError) as exc:
            raise CourseError(
                f"grading record cannot be read ({exc}); delete it and grade that student again with --force",
                Location(str(path.relative_to(course_root))),
            ) from exc
    return outcomes
