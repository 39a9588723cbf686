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
AUTOGRADER_HELP = (
    "the nbgrader course root to work on, e.g. demo (the demo course `make` grades); default: the autograder/ "
    "of the course repository"
)


def nbgrader_course(given: Path | None, command: str) -> Path | None:
    """GIVEN (--autograder) resolved, said on the command's second line; None: the course repository's autograder/."""
    if given is None:
        return None
    from course.errors import CourseError, Location

    root = Path(given).resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise CourseError(
            f"--autograder {given}: not an nbgrader course root (expected its nbgrader_config.py there)", Location(root)
        )
    print(f"course {command}: the nbgrader course root {root}", flush=True)
    return root
