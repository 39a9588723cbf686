"""The answer site's page "第 N 课 · 与原稿的差异": each departure of a lesson from its original (where, what the
original said, what the lesson says now, why), from lessons/lessonNN/departures.yml (course.lesson.departures).

Only the site of a variant that shows departures (course.lesson.variants: the answer site) has it; the answer lesson
page and the index link to it. A departure at a heading links to that section of the answer page: the anchor is the
one the renderer gives the heading, asked of pandoc with the renderer's own markdown reader (the pandoc build reads
commonmark_x, Quarto pandoc's markdown, and the two derive different identifiers from the same heading). A departure
in a file shows its project path.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from course.errors import CourseError
from course.lesson.departures import Departure, lesson_headings, load_departures
from course.lesson.model import Lesson
from course.lesson.variants import Variant, get_variant
from course.tools.pandoc import READER, pandoc_path

QUARTO_READER = "markdown"  # what Quarto hands a page's text to pandoc as
# Under Quarto the page's source is generated at the project's root, like the front page (outside lessons/, so the
# sidebar's lesson list does not take it for a lesson); not committed.
QUARTO_PATTERN = "lesson[0-9][0-9]-departures.qmd"
INTRO = (
    "本页逐条列出本课与它所依据的原稿不同的地方：在哪里、原稿怎么说、本课现在怎么说、为什么改。它只在参考答案版网站上，"
    "供教师与助教核对；学生版的页面与 notebook 只讲正确的内容，不提原稿。"
)


def departures_by_lesson(lessons: list[Lesson], root: Path, variant: str | Variant) -> dict[str, list[Departure]]:
    """The lessons of VARIANT's site that have a departures page, with their departures (none on a site that does
    not show departures: the student site)."""
    if not get_variant(variant).shows_departures:
        return {}
    return {lesson.stem: found for lesson in lessons if (found := load_departures(lesson, root))}


def page_title(lesson: Lesson) -> str:
    """第 N 课 · 与原稿的差异."""
    return f"第 {lesson.number} 课 · 与原稿的差异"


def pandoc_page(stem: str) -> str:
    """The page's file on the pandoc site, beside the lesson's page."""
    return f"{stem}-departures.html"


def quarto_source(stem: str) -> str:
    """The page's generated source under Quarto, at the project's root (rendered to STEM-departures.html there)."""
    return f"{stem}-departures.qmd"


def heading_anchors(lesson: Lesson, reader: str) -> dict[str, str]:
    """Each h2–h4 heading's text → the identifier READER gives it on the lesson's page (the first of equal ones)."""
    headings = lesson_headings(lesson)
    source = "\n\n".join(h.source for h in headings)
    proc = subprocess.run(
        [str(pandoc_path()), "-f", reader, "-t", "json"], input=source.encode("utf-8"), capture_output=True, timeout=120
    )
    if proc.returncode != 0:
        raise CourseError(f"pandoc failed on the headings of {lesson.path.name}: {proc.stderr.decode().strip()}")
    ids = [b["c"][1][0] for b in json.loads(proc.stdout)["blocks"] if b["t"] == "Header"]
    anchors: dict[str, str] = {}
    for heading, ident in zip(headings, ids, strict=True):
        anchors.setdefault(heading.text, ident)
    return anchors


def departures_markdown(lesson: Lesson, departures: list[Departure], *, lesson_page: str, reader: str) -> str:
    """The page's body: one section per departure, its place linked to LESSON_PAGE's section (or a file's path)."""
    anchors = heading_anchors(lesson, reader)
    parts = [INTRO]
    for number, d in enumerate(departures, 1):
        place = f"[{d.where}]({lesson_page}#{anchors[d.where]})" if d.heading else f"`{d.where}`"
        kind = "章节" if d.heading else "文件"
        parts.append(
            f"## {number}. {kind}：{place}\n\n::: {{.departure}}\n\n**原稿**：{d.original.strip()}\n\n"
            f"**现在**：{d.now.strip()}\n\n**原因**：{d.why.strip()}\n\n:::"
        )
    return "\n\n".join(parts) + "\n"


def quarto_page(lesson: Lesson, departures: list[Departure], lessons_dir: str) -> str:
    """The generated .qmd Quarto renders into STEM-departures.html; its "第 N 课" link to the lessons in LESSONS_DIR,
    as on the front page."""
    front = {"title": page_title(lesson), "course-lesson-dir": lessons_dir}
    body = departures_markdown(lesson, departures, lesson_page=f"{lessons_dir}/{lesson.stem}.qmd", reader=QUARTO_READER)
    return f"---\n{json.dumps(front, ensure_ascii=False)}\n---\n\n" + body


def pandoc_markdown(lesson: Lesson, departures: list[Departure]) -> str:
    """The pandoc site's page body (the title comes from the page template)."""
    return departures_markdown(lesson, departures, lesson_page=f"{lesson.stem}.html", reader=READER)


def link_markdown(lesson: Lesson, target: str) -> str:
    """The answer lesson page's pointer to its departures page."""
    return (
        f"::: {{.departures-link}}\n本课与原稿的差异（改了哪里、为什么）逐条列在"
        f"[{page_title(lesson)}]({target})，供教师与助教查阅。\n:::\n\n"
    )
