"""The build plan: every path and choice derived from the configuration, computed once."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from course.config import CourseConfig, load_config
from course.errors import CourseError, Location

LESSON_FILE = re.compile(r"^lesson(\d{2})\.qmd$")
VARIANT_LABELS = {"student": "学生版", "answer": "参考答案版"}


@dataclass(frozen=True)
class BuildPlan:
    """What `course build` will read and write."""

    root: Path
    config: CourseConfig
    lessons: tuple[Path, ...]

    @property
    def site_root(self) -> Path:
        """Folder holding one site per variant."""
        return self.root / self.config.site_dir

    def site_dir(self, variant: str) -> Path:
        """The site of one variant, e.g. _site/student."""
        return self.site_root / variant

    @property
    def cache_dir(self) -> Path:
        """Execution cache, keyed by content."""
        return self.root / self.config.cache_dir

    @property
    def lua_filter(self) -> Path:
        """The variant filter, shared with Quarto as an extension."""
        return self.root / "_extensions" / "course-variant" / "course-variant.lua"

    @property
    def site_files(self) -> Path:
        """Template, CSS and JS that every page uses."""
        return Path(str(resources.files("course").joinpath("site")))


def make_plan(root: Path) -> BuildPlan:
    """Find the lessons (every lessons/lessonNN.qmd) and load the configuration."""
    root = Path(root).resolve()
    config = load_config(root)
    folder = root / config.lessons_dir
    found = sorted(p for p in folder.glob("lesson*.qmd") if LESSON_FILE.match(p.name))
    if not found:
        raise CourseError("no lessons found: expected files named lessonNN.qmd", Location(folder))
    return BuildPlan(root=root, config=config, lessons=tuple(found))
