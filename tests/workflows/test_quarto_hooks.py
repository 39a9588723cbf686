"""The course's Quarto project scripts without Quarto: which variant a render makes, and the post-render checks
(the CDN polyfill removed, anything else from another host refused, a solution line or a departures page in the
student site refused, each error naming the page). The renders themselves: tests/workflows/test_quarto_render.py."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.lesson.parse_qmd import parse_lesson
from course.site.check_leaks import solution_lines
from course.site.plan import make_plan
from course.workflows.quarto_hooks import active_variant, check_pages

POLYFILL = '  <script src="https://cdnjs.cloudflare.com/polyfill/v3/polyfill.min.js?features=es6"></script>\n'


def site(tmp_path, lesson_page: str):
    """A Quarto-shaped site: index.html and lessons/lesson05.html holding LESSON_PAGE."""
    (tmp_path / "lessons").mkdir()
    (tmp_path / "index.html").write_text("<html><head>" + POLYFILL + "</head><main>课程列表</main></html>", "utf-8")
    (tmp_path / "lessons" / "lesson05.html").write_text(lesson_page, "utf-8")
    return tmp_path


@pytest.fixture(scope="module")
def course(project_root):
    plan = make_plan(project_root)
    return plan, [parse_lesson(p) for p in plan.lessons]


def test_the_variant_is_the_course_profile_among_quartos_active_ones_else_answer(course):
    plan, _ = course
    assert active_variant(plan, "student") == "student" and active_variant(plan, "draft,student") == "student"
    assert active_variant(plan, None) == "answer" and active_variant(plan, "draft") == "answer"


def test_the_cdn_polyfill_is_removed_and_nothing_else_may_come_from_another_host(course, tmp_path):
    plan, lessons = course
    out = site(tmp_path, "<html><head>" + POLYFILL + "</head><main><p>正文</p></main></html>")
    check_pages(plan, lessons, "student", out)
    assert "polyfill" not in (out / "index.html").read_text("utf-8")
    assert "polyfill" not in (out / "lessons" / "lesson05.html").read_text("utf-8")
    (out / "lessons" / "lesson05.html").write_text('<script src="https://cdn.example.org/x.js"></script>', "utf-8")
    with pytest.raises(CourseError, match=r"student/lessons/lesson05.html loads from another host .*cdn\.example\.org"):
        check_pages(plan, lessons, "student", out)


def test_a_solution_line_on_a_student_page_stops_the_render_and_not_on_the_answer_page(course, tmp_path):
    plan, lessons = course
    line = solution_lines(lessons[0])[0]
    highlighted = "<span class='kw'>" + line.replace(" ", "</span> <span>", 1) + "</span>"
    out = site(tmp_path, f"<html><main><pre><code>{highlighted}</code></pre></main></html>")
    check_pages(plan, lessons, "answer", out)
    with pytest.raises(CourseError, match=r"lesson05.qmd: student/lessons/lesson05.html shows solution code of lesson05"):
        check_pages(plan, lessons, "student", out)


def test_a_departures_page_in_the_student_site_stops_the_render_and_not_in_the_answer_site(course, tmp_path):
    plan, lessons = course
    out = site(tmp_path, "<html><main><p>正文</p></main></html>")
    (out / "lesson05-departures.html").write_text("<html><main><p>原稿</p></main></html>", "utf-8")
    check_pages(plan, lessons, "answer", out)
    with pytest.raises(CourseError, match=r"student/lesson05-departures.html: a page of departures from the original "
                                          r"is for the answer site only"):
        check_pages(plan, lessons, "student", out)
