"""`course hand-in`: a submission handed to the instructors as files, taken in as `nbgrader collect` would leave it.

nbgrader reads when a submission arrived from the `timestamp.txt` beside it (written by `nbgrader submit` and kept by
`collect`): the late-submission penalty and the feedback release depend on it. A file a student emailed or uploaded
to the LMS has none, so this records the moment it was received, in nbgrader's own format, with the files in
submitted/<student>/<assignment>/ (a later hand-in replaces the whole folder, as `collect --update` does).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from course.errors import CourseError, Location
from course.fileio import replace_dir_atomically
from course.grading.roster_csv import ID

TIMESTAMP = "timestamp.txt"
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"  # nbgrader's Exchange.timestamp_format


@dataclass(frozen=True)
class HandIn:
    """What was taken in: the folder, its files and when it was received."""

    folder: Path
    files: tuple[str, ...]
    received: datetime


def received_at(text: str | None) -> datetime:
    """TEXT (ISO 8601 with its UTC offset, e.g. 2026-12-01T17:59+08:00) as a UTC time; now when None."""
    if text is None:
        return datetime.now(UTC)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise CourseError(
            f"--received {text!r}: expected a date and time with its UTC offset, e.g. 2026-12-01T17:59+08:00"
        ) from None
    if when.tzinfo is None:
        raise CourseError(f"--received {text!r}: give its UTC offset, e.g. {text}+08:00 (the due dates carry theirs)")
    return when.astimezone(UTC)


def hand_in(
    course_root: Path, assignment: str, student: str, files: list[Path], received: datetime | None = None
) -> HandIn:
    """Copy FILES into submitted/STUDENT/ASSIGNMENT/ with timestamp.txt saying RECEIVED (now when None)."""
    if not ID.fullmatch(student):
        raise CourseError(
            f"student id {student!r}: expected letters, digits and . _ @ - (a folder name and a "
            "hub user name), as in the roster"
        )
    names = [Path(f).name for f in files]
    for path in files:
        if not Path(path).is_file():
            raise CourseError("not a file", Location(Path(path)))
    if TIMESTAMP in names or len(set(names)) != len(names):
        raise CourseError(f"expected files with distinct names other than {TIMESTAMP}: {', '.join(names)}")
    when = received or datetime.now(UTC)
    folder = Path(course_root) / "submitted" / student / assignment
    with replace_dir_atomically(folder) as staging:
        for path in files:
            shutil.copyfile(path, staging / Path(path).name)
        (staging / TIMESTAMP).write_text(when.strftime(TIMESTAMP_FORMAT), "utf-8")
    return HandIn(folder, tuple(names), when)
