"""A lesson's own page scripts and styles (front matter `page-assets`: .js and .css files in lessons/lessonNN/),
e.g. an interactive calculator: copied into the site beside the lesson's page and loaded by it, on both renderers.

The page names them relative to itself (`lessonNN/FILE`), so the same markdown serves the pandoc site (pages at its
root) and Quarto's (pages under lessons/). On the student site each file is checked like a page: it must not show
a line of the lesson's solutions.
"""

from __future__ import annotations

import html
import shutil
from pathlib import Path

from course.errors import CourseError, Location
from course.lesson.model import Lesson
from course.lesson.variants import Variant, get_variant

KEY = "page-assets"


def page_assets(lesson: Lesson) -> list[Path]:
    """The files the lesson's front matter lists, in its data folder; a missing one is an error at the key."""
    folder = lesson.path.with_suffix("")
    files = [folder / name for name in lesson.front.get(KEY, ())]
    for path in files:
        if not path.is_file():
            raise CourseError(
                f"front matter {KEY}: {path.name!r} is not a file in {folder.name}/; expected the "
                f".js and .css files of the lesson's data folder {folder.name}/ that its pages load",
                Location(lesson.path, _key_line(lesson.path)),
            )
    return files


def _key_line(path: Path) -> int | None:
    """The front matter line that holds the key, for the error."""
    lines = path.read_text("utf-8").splitlines()
    return next((i + 1 for i, line in enumerate(lines) if line.startswith(f"{KEY}:")), None)


def site_path(lesson: Lesson, asset: Path) -> str:
    """Where an asset lies in the site, relative to the lesson's page: lessonNN/FILE."""
    return f"{lesson.stem}/{asset.name}"


def assets_markdown(lesson: Lesson) -> str:
    """A raw HTML block that loads the lesson's styles and (deferred) scripts; empty when it ships none."""
    tags = []
    for asset in page_assets(lesson):
        href = html.escape(site_path(lesson, asset), quote=True)
        tags.append(
            f'<link rel="stylesheet" href="{href}">'
            if asset.suffix == ".css"
            else f'<script defer src="{href}"></script>'
        )
    return f"```{{=html}}\n{chr(10).join(tags)}\n```\n\n" if tags else ""


def copy_assets(lesson: Lesson, page_dir: Path, variant: str | Variant) -> list[Path]:
    """Copy the lesson's assets beside its page in PAGE_DIR (replacing, never writing through, a linked file); on
    a site that does not show solutions (the student site), refuse one that shows a line of the lesson's solutions."""
    hides_solutions = not get_variant(variant).shows_solutions
    written = []
    for asset in page_assets(lesson):
        if hides_solutions:
            check_no_solution(lesson, asset)
        target = page_dir / site_path(lesson, asset)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        shutil.copyfile(asset, target)
        written.append(target)
    return written


def check_no_solution(lesson: Lesson, asset: Path) -> None:
    """Fail when a script or style the student site would ship holds a line of the lesson's solution code."""
    from course.site.check_leaks import script_leaks

    if leaked := script_leaks(lesson, asset.read_text("utf-8")):
        raise CourseError(
            f"{asset.name} would show solution code of {lesson.stem} on the student site: "
            f"{leaked[0]!r}; a page script may compute what the page derives, not hold the solution",
            Location(asset),
        )
