"""The build plan: every path and choice derived from the configuration, computed once."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from course.config import CourseConfig, load_config, setting_error
from course.errors import CourseError, Location
from course.lesson.variants import VARIANTS, Variant, get_variant

LESSON_FILE = re.compile(r"^lesson(\d{2})\.qmd$")


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

    @property
    def variants(self) -> tuple[Variant, ...]:
        """The variants [tool.course] variants names, in its order (checked by make_plan)."""
        return tuple(get_variant(name) for name in self.config.variants)

    def site_dir(self, variant: str | Variant) -> Path:
        """The site of one variant (a name or a Variant), e.g. _site/student."""
        return self.site_root / str(variant)

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
    check_variants(root, config.variants)
    folder = root / config.lessons_dir
    found = sorted(p for p in folder.glob("lesson*.qmd") if LESSON_FILE.match(p.name))
    if not found:
        raise CourseError("no lessons found: expected files named lessonNN.qmd", Location(folder))
    return BuildPlan(root=root, config=config, lessons=tuple(found))


def check_variants(root: Path, names: tuple) -> None:
    """[tool.course] variants names at least one variant, each of the model's (course.lesson.variants) and once."""
    unknown = [name for name in names if not isinstance(name, str) or name not in VARIANTS]
    if unknown:
        raise setting_error(
            root, "variants", f"unknown variant {unknown[0]!r}; expected names among {', '.join(VARIANTS)}"
        )
    if not names or len(set(names)) < len(names):
        raise setting_error(root, "variants", f"expected at least one variant, each named once, got {list(names)}")
