"""The site's way between lessons: a list of every lesson in order (the current one marked) and previous/next links,
as the sidebar and page navigation of a Quarto website give them; HTML for the page template."""

from __future__ import annotations

from html import escape

from course.lesson.model import Lesson


def sidebar_html(lessons: list[Lesson], current: str | None) -> str:
    """The course's lessons in order, each a link to its page; CURRENT (a stem, None on the index) is marked."""
    items = []
    for lesson in lessons:
        mark = ' aria-current="page"' if lesson.stem == current else ""
        items.append(f'<li><a href="{lesson.stem}.html"{mark}>{escape(lesson.title)}</a></li>')
    return (
        '<details class="lessons-details" open><summary class="sidebar-title">全部课程</summary>'
        f'<ol class="lessons-list">{"".join(items)}</ol></details>'
    )


def pager_html(lessons: list[Lesson], current: str) -> str:
    """Links to the lessons before and after CURRENT in course order; none past either end."""
    stems = [lesson.stem for lesson in lessons]
    at = stems.index(current)
    links = []
    if at > 0:
        links.append(_pager_link(lessons[at - 1], "prev", "← 上一课"))
    if at + 1 < len(lessons):
        links.append(_pager_link(lessons[at + 1], "next", "下一课 →"))
    return f'<nav class="course-pagination" aria-label="上一课与下一课">{"".join(links)}</nav>' if links else ""


def _pager_link(lesson: Lesson, rel: str, label: str) -> str:
    """One previous/next link: the direction in bold, then the lesson's title."""
    return (
        f'<a class="pagination-link pagination-{rel}" rel="{rel}" href="{lesson.stem}.html">'
        f"<strong>{label}</strong> {escape(lesson.title)}</a>"
    )
