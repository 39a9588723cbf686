"""Who uses the course's hub and in which role: hub/roster.yml, validated with located errors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from course.lesson.validate import load_yaml, validate_document


@dataclass(frozen=True)
class Roster:
    """The course's accounts by role; instructors and graders together are its staff."""

    instructors: tuple[str, ...]
    graders: tuple[str, ...]
    students: tuple[str, ...]
    grading_account: str

    @property
    def staff(self) -> tuple[str, ...]:
        """Everyone who reaches formgrader: instructors, then graders."""
        return tuple(dict.fromkeys(self.instructors + self.graders))

    @property
    def everyone(self) -> tuple[str, ...]:
        """Everyone who may log in to the hub (not the grading account)."""
        return tuple(dict.fromkeys(self.staff + self.students))

    def role(self, name: str) -> str:
        """'staff' or 'student': which Jupyter configuration NAME's own server gets."""
        return "staff" if name in self.staff else "student"


def load_roster(path: Path) -> Roster:
    """Read and check a roster; a student who is also staff, or a grading account who logs in, is an error."""
    doc = load_yaml(Path(path))
    validate_document(doc, "course.hub", "roster.v1")
    data = doc.data
    roster = Roster(
        tuple(data["instructors"]), tuple(data["graders"]), tuple(data["students"]), data["grading_account"]
    )
    for i, name in enumerate(roster.students):
        if name in roster.staff:
            raise doc.error(("students", i), f"{name} is also an instructor or grader; give each account one role")
    if roster.grading_account in roster.everyone:
        raise doc.error(
            ("grading_account",),
            f"{roster.grading_account} also logs in; the grading account only runs the course's shared server",
        )
    return roster
