"""Find the images a lesson shows, check they exist, and point them at their place in the site.

A lesson refers to images relative to its own file (../assets/…); the site mirrors the project layout
with pages at its root, so each image is copied to its project-relative path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError, Location
from course.lesson.model import Block, Div, Lesson, Markdown

IMAGE = re.compile(r"!\[[^\]]*\]\((?P<target><[^>]+>|[^)\s]+)(?:\s+\"[^\"]*\")?\)")
REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


@dataclass(frozen=True)
class Resource:
    """One image: as written in the lesson, and its path relative to the project root."""

    written: str
    project_path: str


def resolve_resources(lesson: Lesson, project_root: Path) -> tuple[Lesson, list[Resource]]:
    """The lesson with site-relative image paths, and the files the site must carry."""
    found: list[Resource] = []

    def fix(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
        out: list[Block] = []
        for b in blocks:
            if isinstance(b, Markdown):
                b = Markdown(b.line, IMAGE.sub(lambda m: _rewrite(lesson, project_root, b, m, found), b.text))
            elif isinstance(b, Div):
                b = Div(b.line, b.attr, fix(b.children))
            out.append(b)
        return tuple(out)

    return lesson.with_blocks(fix(lesson.blocks)), found


def _rewrite(lesson: Lesson, root: Path, block: Markdown, m: re.Match, found: list[Resource]) -> str:
    """Check one image target and return the markdown with its project-relative path."""
    written = m["target"].strip("<>")
    if REMOTE.match(written):
        line = block.line + block.text[: m.start()].count("\n")
        raise CourseError(
            f"image {written} is remote; the site must work offline: put it under assets/", Location(lesson.path, line)
        )
    file = (lesson.path.parent / written).resolve()
    line = block.line + block.text[: m.start()].count("\n")
    try:
        rel = file.relative_to(root.resolve())
    except ValueError:
        raise CourseError(f"image {written} is outside the project", Location(lesson.path, line)) from None
    if not file.is_file():
        raise CourseError(f"image {written} not found (expected the file {rel})", Location(lesson.path, line))
    found.append(Resource(written, rel.as_posix()))
    return m.group(0).replace(m["target"], rel.as_posix(), 1)
