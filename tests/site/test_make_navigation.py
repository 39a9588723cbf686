"""make_navigation: the lesson list and the previous/next links every page carries."""

from __future__ import annotations

from pathlib import Path

from course.lesson.model import Lesson
from course.site.make_navigation import pager_html, sidebar_html


def course(*titles: str) -> list[Lesson]:
    """Lessons 1…N with these titles, in order."""
    return [
        Lesson(path=Path(f"lessons/lesson{i:02d}.qmd"), front={"title": t, "lesson": i}, blocks=())
        for i, t in enumerate(titles, 1)
    ]


def test_the_sidebar_lists_every_lesson_in_order_with_the_current_one_marked():
    lessons = course("第 1 课：甲", "第 2 课：乙 <与> & 丙", "第 3 课：丁")
    html = sidebar_html(lessons, "lesson02")
    assert html.index("lesson01.html") < html.index("lesson02.html") < html.index("lesson03.html")
    assert '<a href="lesson02.html" aria-current="page">第 2 课：乙 &lt;与&gt; &amp; 丙</a>' in html
    assert html.count("aria-current") == 1 and "aria-current" not in sidebar_html(lessons, None)


def test_previous_and_next_stop_at_the_ends_of_the_course():
    lessons = course("甲", "乙", "丙")
    first, middle, last = (pager_html(lessons, f"lesson0{i}") for i in (1, 2, 3))
    assert 'rel="prev"' not in first and 'rel="next" href="lesson02.html"' in first
    assert 'rel="prev" href="lesson01.html"' in middle and 'rel="next" href="lesson03.html"' in middle
    assert 'rel="prev" href="lesson02.html"' in last and 'rel="next"' not in last
    assert pager_html(course("甲"), "lesson01") == ""  # a course of one lesson has nowhere to go
