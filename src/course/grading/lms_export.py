"""The semester's points as the files Canvas's and Moodle's gradebooks import (reports/canvas.csv, moodle.csv).

Canvas (Grades ▸ Import, CSV): the header "Student", "ID", "SIS User ID", "SIS Login ID", "Section", then one
column per assignment, "Title (assignment id)" to update that assignment or a bare title, which Canvas matches by
title or creates; an optional second row starting "Points Possible" gives new assignments their points. Canvas finds
each row's student by ID (its user id), then SIS User ID, then SIS Login ID, then the name in "Student" (Canvas's
GradebookImporter, app/models/gradebook_importer.rb in canvas-lms). A blank cell is no score.
Moodle (Grades ▸ Import ▸ CSV file): one identifier column that the import maps to a user field (id, idnumber, email
or username) and one column per grade item; "" or "-" is no grade (grade/import/csv/classes/load_data.php).
Both files are UTF-8 CSV (RFC 4180: commas, CRLF), points as nbgrader stores them. Which nbgrader Student field (id,
first_name, last_name, email, lms_user_id) fills each identity column is course config (canvas_identity,
moodle_id_column, moodle_id_field); a student whose identity is missing stops the export, naming the fix.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from course.config import CourseConfig, setting_error
from course.errors import CourseError
from course.grading.gradebook import GradebookAt
from course.grading.report_model import INCOMPLETE
from course.grading.rubric import format_points
from course.grading.semester_policy import Mark, Standing

STUDENT_FIELDS = ("id", "first_name", "last_name", "email", "lms_user_id")
CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_IDENTITY = CANVAS_HEADER[1:4]
MOODLE_COLUMNS = ("username", "idnumber", "email", "id")
SEMESTER_COLUMN = "semester"  # the weighted total under the course's policy, a 100-point item of its own
OPTION = {"first_name": "--first-name", "last_name": "--last-name", "email": "--email", "lms_user_id": "--lms-user-id"}


@dataclass(frozen=True)
class Person:
    """A student as nbgrader's Student table holds them."""

    id: str
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    lms_user_id: str | None = None

    def field(self, name: str) -> str:
        """One field's value, '' when nbgrader has none."""
        return getattr(self, name) or ""

    @property
    def display_name(self) -> str:
        """The name as people write it: 李雷 (family name first, no space) or Ada Lovelace; '' when none is stored."""
        if self.first_name and self.last_name and not (self.first_name + self.last_name).isascii():
            return self.last_name + self.first_name
        return " ".join(n for n in (self.first_name, self.last_name) if n)

    @property
    def sortable_name(self) -> str:
        """'Last, First' as Canvas sorts and matches names; the nbgrader id when no name is known."""
        return ", ".join(n for n in (self.last_name, self.first_name) if n) or self.id


@dataclass(frozen=True)
class Identity:
    """How students and lessons are named in each LMS, checked against what nbgrader and the LMS accept."""

    canvas: dict[str, str]  # Canvas identity column → Student field
    canvas_assignment_ids: dict[str, str]  # lesson → Canvas assignment id
    moodle_column: str
    moodle_field: str


Row = tuple[Person, dict[str, Mark], Standing]  # a student, their counted lessons, their semester


def load_identity(root: Path, config: CourseConfig, lessons: list[str]) -> Identity:
    """The LMS identity settings of CONFIG; a bad one names its line of pyproject.toml."""

    def field(key: str, value, entry: str | None = None) -> str:
        if value not in STUDENT_FIELDS:
            raise setting_error(
                root, key, f"expected an nbgrader Student field ({', '.join(STUDENT_FIELDS)}), got {value!r}", entry
            )
        return value

    for column in config.canvas_identity:
        if column not in CANVAS_IDENTITY:
            raise setting_error(
                root,
                "canvas_identity",
                f"expected a Canvas identity column ({', '.join(CANVAS_IDENTITY)}), got {column!r}",
                column,
            )
    canvas = {column: field("canvas_identity", value, column) for column, value in config.canvas_identity.items()}
    if not canvas:
        raise setting_error(root, "canvas_identity", f"expected at least one of {', '.join(CANVAS_IDENTITY)}")
    ids = {}
    for lesson, number in config.canvas_assignment_ids.items():
        if lesson not in lessons:
            raise setting_error(
                root,
                "canvas_assignment_ids",
                f"expected a graded lesson of this course ({', '.join(lessons) or 'none yet'}), got {lesson!r}",
                lesson,
            )
        if not (
            isinstance(number, int)
            and not isinstance(number, bool)
            and number > 0
            or isinstance(number, str)
            and number.isdigit()
        ):
            raise setting_error(
                root, "canvas_assignment_ids", f"expected Canvas's numeric assignment id, got {number!r}", lesson
            )
        ids[lesson] = str(number)
    if config.moodle_id_column not in MOODLE_COLUMNS:
        raise setting_error(
            root,
            "moodle_id_column",
            f"expected a Moodle user field the import maps to "
            f"({', '.join(MOODLE_COLUMNS)}), got {config.moodle_id_column!r}",
        )
    return Identity(canvas, ids, config.moodle_id_column, field("moodle_id_field", config.moodle_id_field))


def exported(mark: Mark | None, missing: str) -> str:
    """A lesson's points as the LMS gets them: decided results only ('' while INCOMPLETE); no submission is 0 when
    the policy counts it so (semester_missing = zero), else ''."""
    if mark is None or mark.result == INCOMPLETE or (mark.result is None and missing != "zero"):
        return ""
    return format_points(mark.score or 0)


def semester_value(standing: Standing) -> str:
    """The weighted total in percent (two decimals) once decided, '' while INCOMPLETE."""
    if standing.result == INCOMPLETE or standing.percent is None:
        return ""
    return format_points(round(standing.percent, 2))


def canvas_csv(identity: Identity, lessons: dict[str, float], rows: list[Row], missing: str, where: GradebookAt) -> str:
    """Canvas's gradebook import: identity columns, a Points Possible row, one column per lesson, the semester."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    names = [
        f"{lesson} ({identity.canvas_assignment_ids[lesson]})" if lesson in identity.canvas_assignment_ids else lesson
        for lesson in lessons
    ]
    writer.writerow([*CANVAS_HEADER, *names, SEMESTER_COLUMN])
    writer.writerow(["Points Possible", "", "", "", "", *(format_points(p) for p in lessons.values()), "100"])
    for person, marks, standing in rows:
        ids = {column: person.field(name) for column, name in identity.canvas.items()}
        if not any(ids.values()):
            raise _no_identity(where, person, list(identity.canvas.values()), "canvas_identity")
        writer.writerow(
            [
                person.sortable_name,
                *(ids.get(c, "") for c in CANVAS_IDENTITY),
                "",
                *(exported(marks.get(lesson), missing) for lesson in lessons),
                semester_value(standing),
            ]
        )
    return out.getvalue()


def moodle_csv(identity: Identity, lessons: dict[str, float], rows: list[Row], missing: str, where: GradebookAt) -> str:
    """Moodle's CSV grade import: the identifier column, one column per lesson (followed by `lessonNN feedback`
    where a lesson's points carry a note, such as a late penalty's reason: the import maps it to the item's
    feedback), the semester."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    noted = {lesson for lesson in lessons for _, marks, _ in rows if marks.get(lesson) and marks[lesson].note}
    columns = [c for lesson in lessons for c in (lesson, *([f"{lesson} feedback"] if lesson in noted else []))]
    writer.writerow([identity.moodle_column, *columns, SEMESTER_COLUMN])
    for person, marks, standing in rows:
        if not person.field(identity.moodle_field):
            raise _no_identity(where, person, [identity.moodle_field], "moodle_id_field")
        cells = []
        for lesson in lessons:
            cells.append(exported(marks.get(lesson), missing))
            if lesson in noted:
                cells.append(marks[lesson].note if marks.get(lesson) else "")
        writer.writerow([person.field(identity.moodle_field), *cells, semester_value(standing)])
    return out.getvalue()


def _no_identity(where: GradebookAt, person: Person, fields: list[str], key: str) -> CourseError:
    """A student the LMS could not find: which fields are empty and how to fill them."""
    fixes = "; ".join(f"`nbgrader db student add {person.id} {OPTION[f]} …`" for f in fields if f in OPTION)
    return CourseError(
        f"student {person.id}: no {' or '.join(fields)} in nbgrader's Student table, so the LMS "
        f"cannot find them; fill it ({fixes or 'every student has an id'}; for the whole class, "
        f"`course roster import FILE.csv`) or choose other fields with [tool.course] {key}",
        where.location(),
    )
