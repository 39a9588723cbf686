"""The built pages in headless Chromium: math typeset, diagrams drawn, answers collapsed, nothing fetched; every
lesson's pages accessible (axe-core) and readable at phone and desktop widths, its images loaded and captioned.

Each page is loaded once per width and kept open for the module's tests that read it (`opened`); a test that changes
its page (opens a callout, the contents) is the only one to read that state, or puts it back.
"""

from __future__ import annotations

import pytest

from tests.lesson_cases import each_lesson
from tests.offline_page import keep_offline
from tests.shared_browser import kept_open
from tests.site.page_checks import DESKTOP, PHONE, UNTYPESET, axe_violations

SIZES = {size["width"]: size for size in (DESKTOP, PHONE)}

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long(20)]


@pytest.fixture(scope="module")
def opened(built_site, chromium):
    """opened(variant, name, size=DESKTOP): the built page <variant>/<name>.html at SIZE, loaded from disk once for
    the module (one browser context of its own), its math typeset and diagrams drawn; (page, requests that tried to
    leave the file system, script errors so far)."""
    with kept_open(
        chromium,
        lambda context, variant, name, width: _open(context, built_site / variant / f"{name}.html", SIZES[width]),
    ) as page_at:
        yield lambda variant, name, size=DESKTOP: page_at(variant, name, size["width"])


def _open(context, path, size: dict):
    """Load a built page from disk at SIZE, failing any request that leaves the file system."""
    page = context.new_page()
    page.set_viewport_size(size)
    remote = keep_offline(page)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    _drawn(page)
    return page, remote, errors


def _drawn(page) -> None:
    """Wait until PAGE's diagrams are drawn (its formulas come typeset)."""
    page.wait_for_function(
        "() => document.querySelectorAll('pre.mermaid').length === document.querySelectorAll('pre.mermaid svg').length",
        timeout=20000,
    )


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_lesson5_math_and_diagrams_render_offline(opened, variant):
    page, remote, errors = opened(variant, "lesson05")
    math_spans = page.locator("span.math").count()
    typeset = page.locator("span.math > mjx-container > svg").count()
    assert math_spans > 100 and typeset == math_spans
    assert page.locator("mjx-merror").count() == 0
    assert page.evaluate(UNTYPESET) == {"mathjax": False, "missing": []}
    diagrams = page.locator("pre.mermaid")
    assert diagrams.count() == 2
    for i in range(2):
        assert diagrams.nth(i).locator("svg").count() == 1
        assert diagrams.nth(i).locator("svg text, svg foreignObject").count() > 3
    assert page.locator("pre.sourceCode code span.kw").count() > 5  # highlighted code
    assert "冗余" in page.inner_text("main")
    assert not remote and not errors


def test_lesson5_answer_callout_starts_collapsed_and_opens(opened):
    page, _, _ = opened("answer", "lesson05")
    callout = page.locator("details.callout", has_text="点击展开参考答案")
    assert callout.count() == 1
    assert callout.evaluate("el => el.open") is False
    inside = callout.get_by_text("dp=1 时三档相等 ✓").first
    assert not inside.is_visible()
    callout.locator("summary").click()
    assert callout.evaluate("el => el.open") is True
    assert inside.is_visible()
    callout.locator("summary").click()  # collapsed again, as the module's other tests read the page


def test_lesson5_student_page_has_no_answer_callout(opened):
    page, _, _ = opened("student", "lesson05")
    assert page.locator("details.callout", has_text="参考答案").count() == 0
    assert page.locator("details.callout", has_text="完整结果表").count() == 1  # the full lab table starts collapsed
    assert page.locator(".variant-badge").inner_text() == "学生版"


@each_lesson
@pytest.mark.parametrize("variant", ["student", "answer"])
def test_diagrams_and_figures_fit_the_text_column_at_1280px(opened, variant, stem):
    """No figure is cut off: each fits the column, or its own box scrolls; the page never scrolls sideways."""
    page, _, _ = opened(variant, stem)
    assert page.viewport_size == DESKTOP and DESKTOP["width"] == 1280
    boxes = page.evaluate("""() => {
      const column = document.querySelector('main').getBoundingClientRect();
      return [...document.querySelectorAll('pre.mermaid svg, main figure img, .img-card img, .cell-output-display img')].map(el => {
        const box = el.parentElement, r = el.getBoundingClientRect();
        return {what: el.tagName + ' in ' + box.className, fits: r.right <= column.right + 0.5 && r.left >= column.left - 0.5,
                scrolls: box.scrollWidth > box.clientWidth && getComputedStyle(box).overflowX === 'auto'};
      });
    }""")  # noqa: E501
    if stem == "lesson05":
        assert len(boxes) >= 5  # two mermaid diagrams, two lesson images, the 实测 figure
    assert not [b["what"] for b in boxes if not (b["fits"] or b["scrolls"])]
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def test_lesson5_student_page_links_the_assignment_at_the_exercise(opened):
    page, _, _ = opened("student", "lesson05")
    link = page.locator("a[href='lesson05.ipynb']")
    assert link.count() == 1 and link.is_visible()
    heading_y = page.locator("h2", has_text="代码填空题").bounding_box()["y"]
    exercise_y = page.locator("#cell-ex-zero-memory").bounding_box()["y"]
    assert heading_y < link.bounding_box()["y"] < exercise_y
    assert "Submit" in page.inner_text("main") and "lesson05.ipynb" in page.inner_text("main")


@each_lesson
@pytest.mark.parametrize("variant", ["student", "answer"])
def test_the_lesson_page_has_no_serious_or_critical_accessibility_violation(opened, variant, stem):
    page, remote, _ = opened(variant, stem)
    assert not axe_violations(page) and not remote


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_the_index_has_no_serious_or_critical_accessibility_violation(opened, variant):
    page, remote, _ = opened(variant, "index")
    assert not axe_violations(page) and not remote


def test_axe_finds_what_it_should_on_this_machine(built_site, browser, tmp_path):
    """The check can fail: light grey text and an image without alt text are reported offline."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html lang="zh-CN"><head><title>t</title></head><body><main>'
        '<p style="color:#bbb">浅灰色的字</p><img src="x.png"></main></body></html>',
        "utf-8",
    )
    page = browser.new_page()
    page.goto(bad.as_uri())
    assert {v.split(" ")[0] for v in axe_violations(page)} == {"color-contrast", "image-alt"}
    page.close()


@each_lesson
@pytest.mark.parametrize("variant", ["student", "answer"])
def test_the_lesson_page_reads_at_phone_and_desktop_widths(opened, variant, stem):
    """At 390 px the contents stand collapsed above a full-width text; at 1280 px beside it; nothing scrolls
    sideways. (Each width's page was loaded at that width, as a reader's browser opens it.)"""
    for size in (PHONE, DESKTOP):
        page, _, _ = opened(variant, stem, size)
        assert page.viewport_size == size
        box = page.evaluate("""() => {
          const main = document.querySelector('main').getBoundingClientRect();
          const toc = document.querySelector('#TOC');
          const t = toc.getBoundingClientRect();
          return {main_left: main.left, main_width: main.width, main_top: main.top,
                  toc_bottom: t.bottom, toc_right: t.right, toc_open: toc.querySelector('details').open,
                  sideways: document.documentElement.scrollWidth > window.innerWidth};
        }""")
        assert not box["sideways"], size
        if size is PHONE:
            assert box["main_width"] >= 0.9 * (PHONE["width"] - 40) and box["toc_bottom"] <= box["main_top"] + 1
            assert not box["toc_open"] and box["toc_bottom"] < 150  # collapsed: one line above the text
        else:
            assert box["toc_right"] <= box["main_left"] and box["main_width"] >= 700 and box["toc_open"]
    page, _, _ = opened(variant, stem, PHONE)  # no other test reads the phone page: the contents may stay open
    page.locator("#TOC summary").click()
    assert page.locator("#TOC li a").first.is_visible()  # the collapsed contents open with a tap


@each_lesson
@pytest.mark.parametrize("variant", ["student", "answer"])
def test_every_image_loads_and_every_figure_shows_its_caption(opened, variant, stem):
    page, _, errors = opened(variant, stem)
    page.wait_for_load_state("load")
    images = page.evaluate(
        "() => [...document.querySelectorAll('main img')].map(i => [i.getAttribute('src').slice(0, 60), "
        "i.complete && i.naturalWidth > 0, i.alt])"
    )
    assert not [src for src, loaded, _ in images if not loaded]
    assert not [src for src, _, alt in images if not alt.strip() and not src.startswith("data:")]
    captions = page.locator("main figure > figcaption")
    for i in range(captions.count()):
        assert captions.nth(i).is_visible() and captions.nth(i).inner_text().strip()
    # an image with alt text alone in its paragraph (`![图 6-1：…](…)`) is a captioned figure, never a bare image
    uncaptioned = page.evaluate(
        "() => [...document.querySelectorAll('main p')].filter(p => p.children.length === 1 "
        "&& p.firstElementChild.tagName === 'IMG' && !p.textContent.trim() "
        "&& p.firstElementChild.alt.trim()).map(p => p.firstElementChild.alt)"
    )
    assert not uncaptioned
    assert not errors


def test_lesson5s_figures_carry_their_captions_and_the_memory_chart_its_alt_text(opened):
    page, _, _ = opened("student", "lesson05")
    captions = page.locator("main figure > figcaption").all_inner_texts()
    assert [c for c in captions if c.startswith(("图 5-3：", "图 5-4："))] == [
        "图 5-3：ZeRO 各阶段单卡静态显存对比（7B 模型，8 卡）",
        "图 5-4：ZeRO-3 一个训练步里每层的通信与计算：①前向 ②反向 ③优化器更新",
    ]
    assert page.locator("img[src$='train_zero_memory.png']").get_attribute("alt").startswith("图 5-3：")
