"""Unconverted fenced-div and shortcode text is found on pages and in notebook markdown, never inside code."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.site.check_markup import check_markup, leftover_in_html, leftover_in_markdown


def test_a_broken_div_and_a_shortcode_on_a_page_are_found():
    page = (
        "<p>::: {.callout-note title=“a\\“b”}</p><p>text</p><p>:::</p>"
        "<p>see {{< include x.py >}}</p><pre><code>::: kept in code</code></pre>"
    )
    assert leftover_in_html(page) == ["::: {.callout-note title=“a\\“b”}", ":::", "see {{< include x.py >}}"]


def test_a_clean_page_has_no_leftovers():
    assert leftover_in_html("<div class='callout'><p>a ::: b is prose, not a fence start</p></div>") == []


def test_notebook_markdown_outside_fences_only():
    text = "intro\n\n::: {.img-card}\n\n```text\n::: inside a fence\n{{< x >}}\n```\n\ndone {{< y >}}"
    assert leftover_in_markdown(text) == ["::: {.img-card}", "done {{< y >}}"]


def test_error_names_the_lesson_line(tmp_path):
    lesson = tmp_path / "lesson01.qmd"
    lesson.write_text('# t\n\n::: {.callout-note title="实测对\\"FSDP\\"的细化"}\nx\n:::\n', "utf-8")
    with pytest.raises(CourseError, match=r"lesson01.qmd, line 3: student/lesson01.html shows unconverted markup"):
        check_markup(["::: {.callout-note title=“实测对“FSDP”的细化”}"], source=lesson, what="student/lesson01.html")
    check_markup([], source=lesson, what="student/lesson01.html")  # nothing left: no error
