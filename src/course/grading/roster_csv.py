"""`course roster import FILE.csv`: the class list into nbgrader's Student table, as `nbgrader db student import`
reads it, with the names and LMS ids the exports need.

The CSV (UTF-8, a BOM from Excel is fine) has a header row. Columns are nbgrader's: `id` (required: the student's
nbgrader id, their folder name under submitted/ and their JupyterHub user name), `first_name`, `last_name`,
`email`, `lms_user_id` (Canvas's user id or whatever course config's canvas_identity / moodle_id_field use), or
`name` for a whole name written as people write it (张三, kept as the family name so it reads 张三 everywhere).
Every row is checked before anything is written: a bad row stops the import naming its line and column. A student
already in the gradebook gets the new fields (their grades are never touched); nobody is removed.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError, Location
from course.grading.lms_export import Person

COLUMNS = ("id", "first_name", "last_name", "email", "lms_user_id", "name")
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]*")  # a folder name and a JupyterHub user name
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


@dataclass(frozen=True)
class Imported:
    """What an import did: the students added and those updated."""

    added: tuple[str, ...]
    updated: tuple[str, ...]


def read_roster_csv(path: Path) -> list[Person]:
    """The students of a roster CSV, every row checked; the first problem names its line and column."""
    path = Path(path)
    try:
        text = path.read_text("utf-8-sig")
    except FileNotFoundError:
        raise CourseError(
            "file not found: expected a CSV with a header row (id, first_name, last_name, email, lms_user_id or name)",
            Location(str(path)),
        ) from None
    except UnicodeDecodeError as exc:
        raise CourseError(
            f"not UTF-8 ({exc.reason} at byte {exc.start}): save the CSV as UTF-8", Location(str(path))
        ) from None
    rows = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip() for h in next(rows, [])]
    unknown = [h for h in header if h not in COLUMNS]
    if "id" not in header or unknown:
        got = f"; unknown: {', '.join(unknown)}" if unknown else ""
        raise CourseError(
            f"expected a header row with id and any of {', '.join(COLUMNS[1:])}{got}", Location(str(path), 1)
        )
    if "name" in header and {"first_name", "last_name"} & set(header):
        raise CourseError(
            "expected either name (the whole name) or first_name/last_name, not both", Location(str(path), 1)
        )
    people, seen = [], {}
    for row in rows:
        line = rows.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise CourseError(
                f"expected {len(header)} fields ({', '.join(header)}), got {len(row)}", Location(str(path), line)
            )
        fields = {h: cell.strip() or None for h, cell in zip(header, row)}
        problem = _problem(fields, seen)
        if problem:
            raise CourseError(f"column {problem[0]}: {problem[1]}", Location(str(path), line))
        seen[fields["id"]] = line
        name = fields.pop("name", None)
        people.append(Person(**{**fields, **({"last_name": name} if name else {})}))
    if not people:
        raise CourseError("no students: expected one row per student under the header", Location(str(path), 2))
    return people


def _problem(fields: dict, seen: dict[str, int]) -> tuple[str, str] | None:
    """(column, what was expected) for a bad row, else None."""
    student = fields["id"]
    if not student:
        return "id", "expected the student's id (their nbgrader and JupyterHub user name)"
    if not ID.fullmatch(student):
        return "id", (
            f"expected letters, digits, '.', '_', '-' or '@' (it names the student's folder), got {student!r}"
        )
    if student in seen:
        return "id", f"{student} is already on line {seen[student]}"
    if fields.get("email") and not EMAIL.fullmatch(fields["email"]):
        return "email", f"expected an address like name@example.edu, got {fields['email']!r}"
    return None


def import_roster(db_url: str, people: list[Person]) -> Imported:
    """Add or update each student in nbgrader's gradebook (fields only; grades are never touched)."""
    from course.grading.gradebook import gradebook

    added, updated = [], []
    with gradebook(db_url) as gb:
        known = {s.id for s in gb.students}
        for person in people:
            given = {
                f: getattr(person, f)
                for f in ("first_name", "last_name", "email", "lms_user_id")
                if getattr(person, f) is not None
            }
            gb.update_or_create_student(person.id, **given)
            (updated if person.id in known else added).append(person.id)
    return Imported(tuple(added), tuple(updated))
