"""The built pages in headless Chromium: math typeset, diagrams drawn, answers collapsed, nothing fetched."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser():
    from course.tools.chromium import launch_chromium

    with launch_chromium() as b:
        yield b


def _open(browser, path):
    """Load a built page from disk, failing any request that leaves the file system."""
    page = browser.new_page()
    remote = []

    def guard(route):
        if route.request.url.startswith(("file://", "data:")):
            route.continue_()
        else:
            remote.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise")
    page.wait_for_function("() => document.querySelectorAll('pre.mermaid').length === "
                           "document.querySelectorAll('pre.mermaid svg').length", timeout=20000)
    return page, remote, errors


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_math_and_diagrams_render_offline(built_site, browser, variant):
    page, remote, errors = _open(browser, built_site / variant / "lesson05.html")
    math_spans = page.locator("span.math").count()
    typeset = page.locator("span.math > mjx-container > svg").count()
    assert math_spans > 100 and typeset == math_spans
    assert page.locator("mjx-merror").count() == 0
    diagrams = page.locator("pre.mermaid")
    assert diagrams.count() == 2
    for i in range(2):
        assert diagrams.nth(i).locator("svg").count() == 1
        assert diagrams.nth(i).locator("svg text, svg foreignObject").count() > 3
    assert page.locator("pre.sourceCode code span.kw").count() > 5  # highlighted code
    assert "冗余" in page.inner_text("main")
    assert not remote and not errors
    page.close()


def test_answer_callout_starts_collapsed_and_opens(built_site, browser):
    page, _, _ = _open(browser, built_site / "answer" / "lesson05.html")
    callout = page.locator("details.callout", has_text="点击展开参考答案")
    assert callout.count() == 1
    assert callout.evaluate("el => el.open") is False
    inside = callout.get_by_text("dp=1 时三档相等 ✓").first
    assert not inside.is_visible()
    callout.locator("summary").click()
    assert callout.evaluate("el => el.open") is True
    assert inside.is_visible()
    page.close()


def test_student_page_has_no_answer_callout(built_site, browser):
    page, _, _ = _open(browser, built_site / "student" / "lesson05.html")
    assert page.locator("details.callout", has_text="参考答案").count() == 0
    assert page.locator("details.callout", has_text="完整实测表").count() == 1  # the 实测 table starts collapsed
    assert page.locator(".variant-badge").inner_text() == "学生版"
    page.close()


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_diagrams_and_figures_fit_the_text_column_at_1280px(built_site, browser, variant):
    """No figure is cut off: each fits the column, or its own box scrolls; the page never scrolls sideways."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto((built_site / variant / "lesson05.html").as_uri())
    page.wait_for_function("() => document.querySelectorAll('pre.mermaid').length === "
                           "document.querySelectorAll('pre.mermaid svg').length", timeout=20000)
    boxes = page.evaluate("""() => {
      const column = document.querySelector('main').getBoundingClientRect();
      return [...document.querySelectorAll('pre.mermaid svg, .img-card img, .cell-output-display img')].map(el => {
        const box = el.parentElement, r = el.getBoundingClientRect();
        return {what: el.tagName + ' in ' + box.className, fits: r.right <= column.right + 0.5 && r.left >= column.left - 0.5,
                scrolls: box.scrollWidth > box.clientWidth && getComputedStyle(box).overflowX === 'auto'};
      });
    }""")
    assert len(boxes) >= 5  # two mermaid diagrams, two lesson images, the 实测 figure
    assert not [b["what"] for b in boxes if not (b["fits"] or b["scrolls"])]
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    page.close()


def test_student_page_links_the_assignment_at_the_exercise(built_site, browser):
    page, _, _ = _open(browser, built_site / "student" / "lesson05.html")
    link = page.locator("a[href='lesson05-assignment.ipynb']")
    assert link.count() == 1 and link.is_visible()
    heading_y = page.locator("h2", has_text="代码填空题").bounding_box()["y"]
    exercise_y = page.locator("#cell-ex-zero-memory").bounding_box()["y"]
    assert heading_y < link.bounding_box()["y"] < exercise_y
    assert "Submit" in page.inner_text("main") and "lesson05.ipynb" in page.inner_text("main")
    page.close()
