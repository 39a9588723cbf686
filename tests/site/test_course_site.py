"""A course of three lessons in headless Chromium: the sidebar and previous/next links reach every lesson both ways,
the search finds a phrase of another lesson offline (from file:// and from a server), a mention of another lesson
("第 N 课") links only when that lesson exists, the index lists prerequisites and notebooks, and every page stays
accessible (axe-core) and readable at phone width.

The course is a copy of this project with lessons 3 and 4 added (`course new`'s shape) before lesson 5.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.lesson.scaffold import scaffold_lesson
from tests.loopback import serving
from tests.offline_page import keep_offline
from tests.project_copy import copy_project
from tests.site.page_checks import AXE, PHONE, axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long(41)]

LESSONS = ["lesson03", "lesson04", "lesson05"]
TITLES = {
    "lesson03": "第 3 课：激活重计算",
    "lesson04": "第 4 课：数据并行 DP 与 DDP",
    "lesson05": "第 5 课：ZeRO 与 FSDP",
}
PHRASE = "梯度检查点以计算换显存"  # in lesson 3's body only
PLACEHOLDER = "（在这里写本课要讲清楚的内容。）"


def add_lesson(project, stem: str, body: str, prerequisites: str = "[]") -> None:
    """A scaffolded lesson with BODY as its opening text and its prerequisites set."""
    scaffold_lesson(project, stem, TITLES[stem])
    qmd = project / "lessons" / f"{stem}.qmd"
    text = qmd.read_text("utf-8").replace(PLACEHOLDER, body)
    qmd.write_text(text.replace("prerequisites: []", f"prerequisites: {prerequisites}", 1), "utf-8")


@pytest.fixture(scope="module")
def three_lessons(built_site, tmp_path_factory):
    """The student and answer sites of a course with lessons 3, 4 and 5 (built_site first: lesson 5's cells cached)."""
    from course.workflows.build_site import build_course

    project = copy_project(tmp_path_factory.mktemp("three") / "project")
    add_lesson(project, "lesson03", f"{PHRASE}：只保存每层的输入，反向时再算一遍。")
    add_lesson(project, "lesson04", "先复习第 3 课的重计算；第 5 课讲 ZeRO，第 7 课讲流水线。", "[3]")
    build_course(project)
    return project / "_site"


@contextmanager
def opened(browser, url: str, allowed: tuple[str, ...] = ("file://", "data:")):
    """A page at URL whose every request outside ALLOWED fails the test (nothing is fetched from a network)."""
    page = browser.new_page()
    remote, errors = keep_offline(page, allowed), []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_load_state("load")
    yield page
    assert not remote and not errors
    page.close()


def current_lesson(page) -> str:
    """The stem of the page shown, from its address."""
    return page.url.rsplit("/", 1)[1].split(".html")[0]


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_the_sidebar_lists_every_lesson_in_order_and_reaches_each(three_lessons, browser, variant):
    site = three_lessons / variant
    with opened(browser, (site / "index.html").as_uri()) as page:
        for stem in LESSONS:
            links = page.locator(".lessons-nav a")
            assert links.all_inner_texts() == [TITLES[s] for s in LESSONS]
            links.nth(LESSONS.index(stem)).click()
            page.wait_for_load_state("load")
            assert current_lesson(page) == stem and page.locator("h1.title").inner_text() == TITLES[stem]
            assert page.locator('.lessons-nav a[aria-current="page"]').all_inner_texts() == [TITLES[stem]]


def test_next_and_previous_walk_the_course_both_ways(three_lessons, browser):
    with opened(browser, (three_lessons / "student" / "lesson03.html").as_uri()) as page:
        assert page.locator("a[rel=prev]").count() == 0  # the first lesson has no previous one
        for stem in LESSONS[1:]:
            page.locator("a[rel=next]").click()
            page.wait_for_load_state("load")
            assert current_lesson(page) == stem
        assert page.locator("a[rel=next]").count() == 0  # nor the last a next one
        for stem in reversed(LESSONS[:-1]):
            page.locator("a[rel=prev]").click()
            page.wait_for_load_state("load")
            assert current_lesson(page) == stem


def search(page, text: str) -> list[str]:
    """Type TEXT into the search box; the addresses of the results shown."""
    page.fill("#course-search", text)
    page.wait_for_function(
        "() => !document.getElementById('course-search-results').hidden "
        "|| document.getElementById('course-search-status').textContent"
    )
    return page.locator("#course-search-results a").evaluate_all("links => links.map(a => a.getAttribute('href'))")


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_search_finds_a_chinese_phrase_of_lesson_3_offline_from_file(three_lessons, browser, variant):
    with opened(browser, (three_lessons / variant / "lesson05.html").as_uri()) as page:
        found = search(page, PHRASE)
        assert found and all(href.startswith("lesson03.html") for href in found)
        assert search(page, "冗余")[0].startswith("lesson05.html")  # lesson 5's own word, its own page first
        assert any(href.startswith("lesson05.html") for href in search(page, "冗"))  # one character: pieces it begins
        assert search(page, "没有这样一句话的课程内容") == []
        assert "没有找到" in page.locator("#course-search-status").inner_text()
        search(page, PHRASE)
        page.locator("#course-search-results a").first.click()
        page.wait_for_load_state("load")
        assert current_lesson(page) == "lesson03" and PHRASE in page.inner_text("main")


def test_search_works_the_same_from_a_server(three_lessons, browser):
    with serving(three_lessons / "student") as base:
        with opened(browser, f"{base}/lesson04.html", allowed=(base, "data:")) as page:
            assert search(page, PHRASE)[0].startswith("lesson03.html")


def test_a_mention_of_another_lesson_links_only_when_that_lesson_exists(three_lessons, browser):
    with opened(browser, (three_lessons / "student" / "lesson04.html").as_uri()) as page:
        refs = dict(
            page.locator("main a.lesson-ref").evaluate_all(
                "links => links.map(a => [a.textContent, a.getAttribute('href')])"
            )
        )
        assert refs == {"第 3 课": "lesson03.html", "第 5 课": "lesson05.html"}
        assert "第 7 课讲流水线" in page.inner_text("main")  # no lesson 7: plain text
        page.locator("main a.lesson-ref", has_text="第 3 课").click()
        page.wait_for_load_state("load")
        assert current_lesson(page) == "lesson03"
    lesson5 = (three_lessons / "student" / "lesson05.html").read_text("utf-8")
    assert 'href="lesson04.html" class="lesson-ref"' in lesson5  # lesson 5's 前置：第 4 课 now has a page
    assert "lesson06.html" not in lesson5 and 'lesson05.html" class="lesson-ref' not in lesson5  # none, not itself


def test_the_index_lists_each_lessons_title_prerequisites_and_notebooks(three_lessons, browser):
    with opened(browser, (three_lessons / "student" / "index.html").as_uri()) as page:
        items = page.locator(".lesson-list li")
        assert items.count() == 3
        for i, stem in enumerate(LESSONS):
            hrefs = items.nth(i).locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
            assert hrefs[0] == f"{stem}.html" and notes_notebook(stem) in hrefs and assignment_notebook(stem) in hrefs
        assert "前置：无" in items.nth(0).inner_text()
        assert items.nth(1).locator("a.lesson-ref").get_attribute("href") == "lesson03.html"
        assert items.nth(2).locator("a.lesson-ref").get_attribute("href") == "lesson04.html"


@pytest.mark.parametrize("name", ["index", *LESSONS])
def test_every_page_of_the_course_is_accessible_and_reads_at_phone_width(three_lessons, browser, name):
    with opened(browser, (three_lessons / "student" / f"{name}.html").as_uri()) as page:
        assert AXE.is_file() and not axe_violations(page)
        page.set_viewport_size(PHONE)
        page.reload()
        page.wait_for_load_state("load")
        box = page.evaluate("""() => {
          const main = document.querySelector('main').getBoundingClientRect();
          const side = document.querySelector('.sidebar').getBoundingClientRect();
          const search = document.getElementById('course-search').getBoundingClientRect();
          return {main_width: main.width, main_top: main.top, side_bottom: side.bottom, search_right: search.right,
                  open: [...document.querySelectorAll('.sidebar details')].some(d => d.open),
                  sideways: document.documentElement.scrollWidth > window.innerWidth};
        }""")
        assert not box["sideways"] and box["main_width"] >= 0.9 * (PHONE["width"] - 40)
        assert box["side_bottom"] <= box["main_top"] + 1 and not box["open"]  # lessons and contents collapsed above
        assert box["side_bottom"] < 160 and box["search_right"] <= PHONE["width"]
        page.locator(".lessons-nav summary").click()
        assert page.locator(".lessons-nav a").count() == 3 and page.locator(".lessons-nav a").first.is_visible()
