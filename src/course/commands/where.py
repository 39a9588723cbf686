"""Which course a command works on: the one named, else the one the current folder is in (as git finds its
repository, so `course report lesson05` works from autograder/ too), said on the command's first line."""

from __future__ import annotations

from pathlib import Path


def course_root(given: Path | None, command: str) -> Path:
    """GIVEN (--root), else the course repository around the current folder; say which (stop when there is none)."""
    from course.config import find_course
    from course.errors import CourseError

    root = Path(given).resolve() if given is not None else find_course(Path.cwd())
    if root is None:
        raise CourseError(
            f"no course here or above ({Path.cwd()}: no pyproject.toml with [tool.course] in it or a "
            "folder above it); use `--root` to name the course repository"
        )
    print(f"course {command}: the course at {root}", flush=True)
    return root


ROOT_HELP = "the course repository (default: the one the current folder is in, as git finds its repository)"
