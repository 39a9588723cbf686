"""One student's grading outcome, shared by `course grade`'s front end and its batch's state files."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from course.assignment.preflight import Problem
from course.grading.recheck import Change, ItemVerdict


@dataclass
class StudentGrade:
    """One student's outcome: re-check verdicts, corrections written to the gradebook, problems found."""

    student: str
    verdicts: dict[str, ItemVerdict]
    changes: list[Change] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said in the row, no reason to flag (e.g. the engine used)
    memory_limit: str = ""  # which memory limit the sandbox applied

    @property
    def flagged(self) -> bool:
        """Whether a grader should look at this submission."""
        return bool(self.changes or self.problems)

    def to_json(self) -> dict:
        """The outcome as plain data (problems as their messages), for reports and the batch's state files."""
        return {"flagged": self.flagged, "verdicts": {k: asdict(v) for k, v in self.verdicts.items()},
                "changes": [asdict(c) for c in self.changes], "problems": [str(p) for p in self.problems],
                "notes": self.notes, "memory_limit": self.memory_limit}

    @classmethod
    def from_json(cls, student: str, data: dict) -> "StudentGrade":
        """An outcome written by to_json."""
        return cls(student, {k: ItemVerdict(**v) for k, v in data["verdicts"].items()},
                   [Change(**c) for c in data["changes"]], list(data["problems"]), list(data.get("notes", [])),
                   data.get("memory_limit") or "")
