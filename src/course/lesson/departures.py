"""A lesson's departures from the original it was made from (lessons/lessonNN/departures.yml): for instructors and
graders, who need to know where and why the lesson differs from what it was made from; students never see them.

    version: 1
    departures:
      - where: "6. 工程选型准则：FSDP 与扩展边界"   # an h2–h4 heading of the lesson, as written after its #'s,
        original: "…"                               # or a project-relative file (autograder/rubrics/lesson05.yml)
        now: "…"
        why: "…"

Each `where` must name a heading of the lesson or a file of the project, so an entry cannot point at nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from course.lesson.model import Lesson, Markdown, walk
from course.lesson.validate import load_yaml, validate_document

DEPARTURES = "departures.yml"
HEADING = re.compile(r"^(#{2,4})[ \t]+(?P<text>.*?)(?:[ \t]+\{[^}]*\})?[ \t]*$")  # h2–h4, an {#id .class} left off


@dataclass(frozen=True)
class Heading:
    """An h2–h4 heading of a lesson as its author wrote it."""

    level: int
    text: str
    line: int
    source: str  # the whole line, an {#id} included (it decides the heading's anchor)


@dataclass(frozen=True)
class Departure:
    """One place where the lesson departs from its original: a heading of it, or a file of the project."""

    where: str
    heading: Heading | None  # None: WHERE is a project-relative file
    original: str
    now: str
    why: str


def lesson_headings(lesson: Lesson) -> list[Heading]:
    """The lesson's h2–h4 headings in order, answer-only ones included."""
    found = []
    for block in walk(lesson.blocks):
        if isinstance(block, Markdown):
            for offset, line in enumerate(block.text.splitlines()):
                if m := HEADING.match(line):
                    found.append(Heading(len(m[1]), m["text"], block.line + offset, line))
    return found


def departures_file(lesson: Lesson) -> Path:
    """Where a lesson keeps its departures: lessons/lessonNN/departures.yml."""
    return lesson.path.with_suffix("") / DEPARTURES


def load_departures(lesson: Lesson, root: Path) -> list[Departure]:
    """The lesson's departures (none when it has no departures.yml); a bad file or a `where` that names neither a
    heading of the lesson nor a file under ROOT is an error at its line."""
    path = departures_file(lesson)
    if not path.is_file():
        return []
    doc = load_yaml(path)
    validate_document(doc, "course.lesson", "departures.v1")
    written = lesson_headings(lesson)
    headings = {h.text: h for h in reversed(written)}  # the first of two equal headings
    found = []
    for i, entry in enumerate(doc.data["departures"]):
        where = entry["where"]
        heading = headings.get(where)
        if heading is None and not _project_file(root, where):
            names = "; ".join(f"{h.text!r} (line {h.line})" for h in written)
            raise doc.error(
                ("departures", i, "where"),
                f"{where!r} is neither an h2–h4 heading of {lesson.path.name} nor a file of the project; "
                f"expected a heading exactly as written after its #'s ({names}) or a project-relative "
                f"file path such as autograder/rubrics/{lesson.stem}.yml",
            )
        found.append(Departure(where, heading, entry["original"], entry["now"], entry["why"]))
    return found


def _project_file(root: Path, where: str) -> bool:
    """Whether WHERE is a relative path to a file inside the project ROOT."""
    path = (root / where).resolve()
    return not Path(where).is_absolute() and path.is_relative_to(root.resolve()) and path.is_file()
