"""Course configuration: every key declared once, typed, with its default and description beside it.

Values come from `[tool.course]` in the project's pyproject.toml; the loaded object is frozen.
"""

from __future__ import annotations

import tomllib
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from course.errors import CourseError, Location


def setting(default: Any, description: str) -> Any:
    """Declare one configuration key with its default and what it means."""
    return field(default=default, metadata={"description": description})


@dataclass(frozen=True)
class CourseConfig:
    """The course's settings; derived paths live in the build plan, not here."""

    lessons_dir: str = setting("lessons", "Folder of lesson sources lessonNN.qmd.")
    site_dir: str = setting("_site", "Where `course build` writes the student and answer sites.")
    autograder_dir: str = setting("autograder", "The nbgrader course root.")
    cache_dir: str = setting(".course-cache", "Execution and figure cache, keyed by content.")
    assets_dir: str = setting("assets", "Images and generated figures referenced by lessons.")
    kernel: str = setting("python3", "Jupyter kernel that executes lesson cells.")
    cell_timeout: int = setting(300, "Seconds one lesson cell may run during the build.")
    variants: tuple[str, ...] = setting(("student", "answer"), "Variants built from each lesson.")
    course_title: str = setting("大模型规模化训练", "Course title on the site index.")
    build_inputs: tuple[str, ...] = setting(
        ("lessons", "solutions", "assets", "autograder/rubrics", "_extensions", "package.json", "pyproject.toml"),
        "Project files and folders a build reads; with the course package they decide whether a rebuild has work.")
    generated_assets: tuple[str, ...] = setting(
        ("assets/figs", "assets/lab"),
        "Build outputs that live under assets/ (not committed; not build inputs): the folders lessons' "
        "figures.py draw into, plus any single file a lesson draws elsewhere.")

    @classmethod
    def describe(cls) -> dict[str, tuple[Any, str]]:
        """Each key with its default and description (for docs and `--help`)."""
        return {f.name: (f.default, f.metadata["description"]) for f in fields(cls) if f.default is not MISSING}


def load_config(root: Path) -> CourseConfig:
    """Read [tool.course] from ROOT/pyproject.toml; unknown keys and wrong types are errors."""
    path = root / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text("utf-8")).get("tool", {}).get("course", {})
    except FileNotFoundError:
        return CourseConfig()
    except tomllib.TOMLDecodeError as exc:
        raise CourseError(f"not valid TOML: {exc}", Location(path)) from None
    known = {f.name: f for f in fields(CourseConfig)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise CourseError(f"[tool.course] unknown key {key!r}; expected one of {', '.join(known)}", Location(path))
        expected = type(known[key].default)
        if expected is tuple and isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, expected):
            raise CourseError(f"[tool.course] {key} must be {expected.__name__}, got {value!r}", Location(path))
        values[key] = value
    return CourseConfig(**values)
