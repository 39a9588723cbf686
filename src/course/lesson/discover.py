"""Find the course's lessons: every lessons/lessonNN.qmd with its data folder lessons/lessonNN/.

A lesson is content: adding one means adding files, never registering it in code. The data folder holds what
the engine reads about the lesson besides its text: checks.yml (graded exercises and known wrong answers),
figures.py (generated figures), veto_hints.yml (vocabulary for veto hints).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from course.errors import CourseError, Location

LESSON_FILE = re.compile(r"^lesson(\d{2})\.qmd$")
LESSON_DIR = re.compile(r"^lesson(\d{2})$")
CHECKS = "checks.yml"
FIGURES = "figures.py"


@dataclass(frozen=True)
class LessonFiles:
    """Where one lesson's source and data live."""

    qmd: Path

    @property
    def stem(self) -> str:
        """lesson05: names the page, the notebook, the nbgrader assignment and the rubric."""
        return self.qmd.stem

    @property
    def number(self) -> int:
        """The lesson's number, from its file name."""
        return int(LESSON_FILE.match(self.qmd.name)[1])

    @property
    def data_dir(self) -> Path:
        """lessons/lessonNN/, the lesson's data beside its text."""
        return self.qmd.with_suffix("")

    @property
    def checks(self) -> Path | None:
        """The lesson's checks.yml, or None when it has no graded exercise."""
        path = self.data_dir / CHECKS
        return path if path.is_file() else None

    @property
    def figures(self) -> Path | None:
        """The lesson's figures.py, or None when it generates no figure."""
        path = self.data_dir / FIGURES
        return path if path.is_file() else None


def discover_lessons(lessons_dir: Path) -> list[LessonFiles]:
    """Every lesson in LESSONS_DIR by number; a data folder without its lesson, or a lesson numbered unlike its file,
    fails."""
    lessons_dir = Path(lessons_dir)
    found = [LessonFiles(p) for p in sorted(lessons_dir.glob("lesson*.qmd")) if LESSON_FILE.match(p.name)]
    stems = {f.stem for f in found}
    for folder in sorted(p for p in lessons_dir.glob("lesson*") if p.is_dir() and LESSON_DIR.match(p.name)):
        if folder.name not in stems:
            raise CourseError(
                f"a lesson data folder without its lesson: expected {folder.name}.qmd beside it",
                Location(f"{lessons_dir.name}/{folder.name}"),
            )
    by_number = {f.number: f for f in found}
    for lesson in found:
        number, line = _front_matter_number(lesson.qmd)
        if number is not None and number != lesson.number:
            other = by_number.get(number)
            clash = f"; {other.qmd.name} already is lesson {number}" if other else ""
            raise CourseError(
                f"front matter says lesson: {number}, the file name says lesson {lesson.number}{clash}; "
                f"expected lesson: {lesson.number}",
                Location(lesson.qmd, line),
            )
    return found


def _front_matter_number(qmd: Path) -> tuple[int | None, int | None]:
    """The front matter's `lesson:` number and its line (None when unreadable: the parser reports that)."""
    lines = qmd.read_text("utf-8", errors="replace").splitlines()
    if not lines or lines[0].strip() != "---":
        return None, None
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), None)
    try:
        data = yaml.safe_load("\n".join(lines[1:end])) if end else None
    except yaml.YAMLError:
        return None, None
    number = data.get("lesson") if isinstance(data, dict) else None
    if type(number) is not int:
        return None, None
    return number, next((i + 1 for i, line in enumerate(lines[:end]) if line.startswith("lesson:")), None)
