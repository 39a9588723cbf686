"""Which assignments a course root knows, and the error that names them when a command is given another."""

from __future__ import annotations

import difflib
from pathlib import Path

from course.errors import CourseError, Location


def known_assignments(course_root: Path) -> list[str]:
    """Every assignment with a rubric (rubrics/<a>.yml) or a source notebook (source/<a>/<a>.ipynb)."""
    root = Path(course_root)
    rubrics = {p.stem for p in (root / "rubrics").glob("*.yml")}
    sources = {p.parent.name for p in (root / "source").glob("*/*.ipynb") if p.stem == p.parent.name}
    return sorted(rubrics | sources)


def unknown(what: str, name: str, known: list[str], where: Location | None = None) -> CourseError:
    """The error for NAME not being one of KNOWN: what exists, and the nearest match."""
    nearest = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    has = f"there are {', '.join(known)}" if known else "there is none yet"
    return CourseError(f"no {what} {name!r}: {has}" + (f"; did you mean {nearest[0]}?" if nearest else ""), where)


def require_assignment(course_root: Path, assignment: str) -> None:
    """Stop with what exists and the nearest match when COURSE_ROOT knows no ASSIGNMENT."""
    known = known_assignments(course_root)
    if assignment not in known:
        raise unknown("assignment", assignment, known, Location(Path(course_root) / "rubrics"))
