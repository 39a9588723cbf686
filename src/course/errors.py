"""Errors that point at the place in a course file that needs fixing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Location:
    """Where a problem sits: a file, optionally a line and a cell label."""

    path: Path | str
    line: int | None = None
    cell: str | None = None

    def __str__(self) -> str:
        parts = [Path(self.path).name if isinstance(self.path, Path) else str(self.path)]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.cell:
            parts.append(f"cell {self.cell}")
        return ", ".join(parts)


class CourseError(Exception):
    """A user-facing error: 'lesson05.qmd, line 212, cell ex-1: what was expected'."""

    def __init__(self, message: str, where: Location | None = None):
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class NoGradebook(CourseError):
    """No gradebook where nbgrader's db_url points (nothing graded there yet): a course that some commands report on
    as it is, unlike a gradebook that cannot be read."""


class NoProject(CourseError):
    """An nbgrader course root with no course project around it (a copy standing alone): no lessons, no settings."""


class InvalidYaml(CourseError):
    """A data file YAML cannot parse (a line holding ': ' unquoted, say)."""


class SchemaMismatch(CourseError):
    """Data unlike its schema at one place: FOUND is the value there, RULE the schema keyword it breaks ('type')
    and EXPECTED that keyword's value ('string'), so a reader of a particular file can add advice of its own."""

    def __init__(
        self,
        message: str,
        where: Location | None = None,
        *,
        found: object = None,
        rule: str = "",
        expected: object = None,
    ):
        super().__init__(message, where)
        self.found, self.rule, self.expected = found, rule, expected


class ToolMissing(CourseError):
    """An external tool the course needs is not installed; the message says how to get it."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C in a command that can go on later: the message says how far it got and how to resume."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(message)
