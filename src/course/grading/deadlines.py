"""Deadlines as nbgrader keeps them: each lesson's due date on its assignment, extensions per student.

The due dates are declared in [tool.course] due_dates (TOML date-times with their UTC offset) and written to the
gradebook as nbgrader's own Assignment.duedate (naive UTC, as nbgrader stores it) wherever a release or an
autograde run starts, so stock nbgrader (autograde's late check, formgrader, export) sees the same date. An
extension is nbgrader's SubmittedAssignment.extension (Gradebook.grant_extension): it moves that one student's
due date and nobody else's. How many points lateness costs is the late-submission policy (late_policy).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from course.config import load_config, project_of, setting_error
from course.errors import CourseError, NoProject


def due_dates(project_root: Path) -> dict[str, dt.datetime]:
    """Lesson → due date in UTC (naive, as nbgrader stores it), from [tool.course] due_dates, checked."""
    from course.lesson.discover import discover_lessons

    root = Path(project_root)
    config = load_config(root)
    if not config.due_dates:
        return {}
    lessons = [f.stem for f in discover_lessons(root / config.lessons_dir)]
    dates = {}
    for lesson, value in config.due_dates.items():
        if lesson not in lessons:
            raise setting_error(
                root,
                "due_dates",
                f"expected a lesson of this course ({', '.join(lessons) or 'none'}), got {lesson!r}",
                lesson,
            )
        if isinstance(value, str):
            try:
                value = dt.datetime.fromisoformat(value)
            except ValueError:
                value = None
        if not isinstance(value, dt.datetime) or value.tzinfo is None:
            raise setting_error(
                root,
                "due_dates",
                f"expected a date-time with its UTC offset, e.g. 2026-12-01T23:59:00+08:00, got {value!r}",
                lesson,
            )
        dates[lesson] = value.astimezone(dt.UTC).replace(tzinfo=None)
    return dates


@dataclass(frozen=True)
class DueDate:
    """A lesson's declared due date as written to the gradebook, and the one the gradebook held before (UTC)."""

    assignment: str
    due: dt.datetime
    before: dt.datetime | None

    def describe(self) -> str:
        """What changed, for a command's output."""
        before = f"{self.before:%Y-%m-%d %H:%M} UTC" if self.before else "none"
        return f"{self.assignment}: due date {before} → {self.due:%Y-%m-%d %H:%M} UTC ([tool.course] due_dates)"


def apply_due_date(course_root: Path, db_url: str, assignment: str) -> DueDate | None:
    """Write ASSIGNMENT's declared due date to the gradebook at DB_URL (if one is declared and the assignment
    exists there); the date written and the one before, else None. The due dates are the course project's."""
    from nbgrader.api import MissingEntry

    from course.grading.gradebook import gradebook

    try:
        due = due_dates(project_of(course_root)).get(assignment)
    except NoProject:  # a course root standing alone declares no due dates
        return None
    if due is None:
        return None
    with gradebook(db_url) as gb:
        try:
            found = gb.find_assignment(assignment)
        except MissingEntry:
            return None
        before = found.duedate
        if before != due:
            found.duedate = due
            gb.db.commit()
    return DueDate(assignment, due, before)


@dataclass(frozen=True)
class Extension:
    """One student's extension on one lesson: their own due date and how far it moved."""

    student: str
    assignment: str
    extension: dt.timedelta | None
    due: dt.datetime | None  # the student's due date (UTC), None where the lesson has none


def grant_extension(db_url: str, assignment: str, student: str, *, hours: float = 0, days: float = 0) -> Extension:
    """nbgrader's Gradebook.grant_extension (none when both are 0): only this student's due date moves."""
    from nbgrader.api import MissingEntry

    from course.grading.gradebook import gradebook

    with gradebook(db_url) as gb:
        for kind, find, name in (("lesson", gb.find_assignment, assignment), ("student", gb.find_student, student)):
            try:
                find(name)
            except MissingEntry:
                fix = (
                    "`course roster import FILE.csv` first"
                    if kind == "student"
                    else f"release it first (`nbgrader generate_assignment {assignment}`)"
                )
                raise CourseError(f"no {kind} {name!r} in the gradebook: {fix}") from None
        gb.update_or_create_submission(assignment, student)  # where nbgrader keeps it, before they hand in too
        gb.grant_extension(assignment, student, hours=hours, days=days)
        submission = gb.find_submission(assignment, student)
        return Extension(student, assignment, submission.extension, submission.duedate)
