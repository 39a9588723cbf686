"""The answer site's page of a lesson's departures from its original (course.site.departures_page): each departure
with its place, a heading linked to that section of the answer page; the answer page and the index link to it; the
student site has no such page and no link to it."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from course.lesson.departures import load_departures
from course.lesson.parse_qmd import parse_lesson
from course.lesson.variants import ANSWER, STUDENT
from course.site.departures_page import (
    QUARTO_READER,
    departures_by_lesson,
    heading_anchors,
    page_title,
    pandoc_markdown,
    pandoc_page,
)
from course.tools.pandoc import READER, run_pandoc
from tests.lesson_cases import LESSONS, ROOT, each_lesson, lesson

pytestmark = pytest.mark.slow


class _Page(HTMLParser):
    """The ids of a page, and its h2 headings with the links inside them."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.sections: list[dict] = []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "h2":
            self._in_h2 = True
            self.sections.append({"text": "", "links": []})
        elif tag == "a" and self._in_h2:
            self.sections[-1]["links"].append(a.get("href"))

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data):
        if self._in_h2:
            self.sections[-1]["text"] += data


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text("utf-8"))
    return page


def departures_of(stem: str):
    return load_departures(lesson(stem), ROOT)


WITH_DEPARTURES = [stem for stem in LESSONS if departures_of(stem)]


def test_lesson5_has_departures_to_show():
    assert "lesson05" in WITH_DEPARTURES


def test_a_site_has_departures_pages_where_its_variant_shows_departures():
    """The variant's shows_departures decides, not its name: flipped on a copy of each, the pages follow."""
    lessons = [lesson(stem) for stem in LESSONS]
    assert set(departures_by_lesson(lessons, ROOT, ANSWER)) == set(WITH_DEPARTURES)
    assert departures_by_lesson(lessons, ROOT, replace(ANSWER, shows_departures=False)) == {}
    assert departures_by_lesson(lessons, ROOT, STUDENT) == {}
    assert set(departures_by_lesson(lessons, ROOT, replace(STUDENT, shows_departures=True))) == set(WITH_DEPARTURES)


@pytest.mark.parametrize("stem", WITH_DEPARTURES)
def test_the_page_lists_each_departure_with_its_place_and_a_working_link(built_site, stem):
    site = built_site / "answer"
    page, answer = parse(site / pandoc_page(stem)), parse(site / f"{stem}.html")
    departures = departures_of(stem)
    assert len(page.sections) == len(departures)
    text = (site / pandoc_page(stem)).read_text("utf-8")
    assert f"<title>{page_title(lesson(stem))}" in text
    for section, d in zip(page.sections, departures):
        if d.heading:
            [link] = section["links"]
            target, anchor = link.split("#")
            assert target == f"{stem}.html" and anchor in answer.ids, d.where
        else:
            assert not section["links"] and f"<code>{d.where}</code>" in text
    for d in departures:
        for field in (d.original, d.now, d.why):
            first_words = re.sub(r"[*`$\\]", "", field.strip()).split("\n")[0][:12]
            assert first_words in re.sub(r"<[^>]+>", "", text)


@pytest.mark.parametrize("stem", WITH_DEPARTURES)
def test_the_answer_page_and_the_index_link_to_it(built_site, stem):
    site = built_site / "answer"
    assert f'href="{pandoc_page(stem)}"' in (site / f"{stem}.html").read_text("utf-8")
    assert f'href="{pandoc_page(stem)}"' in (site / "index.html").read_text("utf-8")


@each_lesson
def test_the_student_site_has_no_departures_page_and_no_link_to_one(built_site, stem):
    site = built_site / "student"
    assert not (site / pandoc_page(stem)).exists()
    for page in site.glob("*.html"):
        text = page.read_text("utf-8")
        assert "departures" not in text and "与原稿的差异" not in text, page.name


def test_markdown_and_math_in_the_fields_are_rendered_and_a_file_is_shown_as_its_path(tmp_path):
    (tmp_path / "lessons" / "lesson07").mkdir(parents=True)
    qmd = tmp_path / "lessons" / "lesson07.qmd"
    qmd.write_text('---\ntitle: "第 7 课"\nlesson: 7\n---\n\n## 6. 工程选型准则：FSDP 与扩展边界\n\n正文\n', "utf-8")
    (tmp_path / "notes.yml").write_text("x", "utf-8")
    (tmp_path / "lessons" / "lesson07" / "departures.yml").write_text(
        "version: 1\ndepartures:\n"
        '  - where: "6. 工程选型准则：FSDP 与扩展边界"\n    original: "写 $6\\\\Psi_u$。"\n'
        '    now: "**8Ψ_u**，见 `fsdp`。"\n    why: "预取时有两个单元。"\n'
        '  - where: notes.yml\n    original: "a"\n    now: "b"\n    why: "c"\n',
        "utf-8",
    )
    parsed = parse_lesson(qmd)
    html = run_pandoc(
        pandoc_markdown(parsed, load_departures(parsed, tmp_path)),
        ["-t", "html5", "--mathjax", "--wrap=none"],
        what="departures",
    )
    assert '<span class="math inline">\\(6\\Psi_u\\)</span>' in html
    assert "<strong>8Ψ_u</strong>" in html and "<code>fsdp</code>" in html
    assert 'href="lesson07.html#6-工程选型准则fsdp-与扩展边界"' in html
    assert "<code>notes.yml</code>" in html


def test_each_renderers_reader_gives_the_anchor_that_renderer_gives_the_heading(tmp_path):
    """pandoc's commonmark_x keeps the leading number, pandoc's markdown (Quarto's) drops it: the links follow."""
    qmd = tmp_path / "lesson07.qmd"
    qmd.write_text(
        '---\ntitle: "第 7 课"\nlesson: 7\n---\n\n## 6. 工程选型\n\n## 6. 工程选型\n\n### 细节 {#sec-x}\n', "utf-8"
    )
    parsed = parse_lesson(qmd)
    assert heading_anchors(parsed, READER) == {"6. 工程选型": "6-工程选型", "细节": "sec-x"}
    assert heading_anchors(parsed, QUARTO_READER) == {"6. 工程选型": "工程选型", "细节": "sec-x"}
