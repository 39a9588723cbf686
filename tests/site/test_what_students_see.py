"""The pandoc site as a student reads it in Chromium, offline, at 390 and 1280 px: diagrams whose labels stay in their
boxes and read on their fill, no link inside a link, search snippets that show the text (never TeX or a diagram's
source) with the searched words marked. (The Quarto site's same checks: tests/workflows/test_quarto_render.py.)

Each page is loaded once per width and kept open for the module's tests that read it (`opened`); a test that changes
it (types a search, opens a figure) puts it back."""

from __future__ import annotations

import pytest

from tests.lesson_cases import each_lesson
from tests.offline_page import keep_offline
from tests.shared_browser import kept_open
from tests.site.page_checks import (
    CAPTION_STYLES,
    DIAGRAM_COUNT,
    SNIPPET_SOURCE,
    figures,
    mermaid_problems,
    nested_links,
    opens_full_size,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long(21)]

WIDTHS = (390, 1280)
# Words whose results show lesson 5's formulas and the text around its diagrams (whose source said 消除优化器冗余).
QUERIES = ("冗余", "N_d", "分片", "通信量")


@pytest.fixture(scope="module")
def opened(built_site, chromium):
    """opened(variant, name, width): the built page <variant>/<name>.html at WIDTH px, loaded from disk once for the
    module (one browser context of its own); (page, requests that tried to leave the file system)."""
    with kept_open(
        chromium, lambda context, variant, name, width: _open(context, built_site / variant / f"{name}.html", width)
    ) as page_at:
        yield page_at


def _open(context, path, width: int):
    """PATH at WIDTH px, offline, once its diagrams are drawn."""
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 844})
    remote = keep_offline(page)
    page.goto(path.as_uri())
    page.wait_for_function(
        "() => document.querySelectorAll('pre.mermaid').length === document.querySelectorAll('pre.mermaid svg').length",
        timeout=20000,
    )
    return page, remote


@each_lesson
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("variant", ["student", "answer"])
def test_diagram_labels_stay_in_their_boxes_and_read_on_their_fill(opened, variant, width, stem):
    page, remote = opened(variant, stem, width)
    if stem == "lesson05":
        assert page.evaluate(DIAGRAM_COUNT) == 2
    assert mermaid_problems(page) == [] and remote == []


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("variant", ["student", "answer"])
def test_no_link_holds_another_link(built_site, opened, variant, width):
    for path in [built_site / variant / "index.html", *sorted((built_site / variant).glob("lesson[0-9][0-9].html"))]:
        page, _ = opened(variant, path.stem, width)
        assert nested_links(page) == [], path.name


@pytest.mark.parametrize("width", WIDTHS)
def test_search_snippets_show_the_text_with_the_searched_words_marked(opened, width):
    page, remote = opened("student", "lesson05", width)
    snippets = []
    for query in QUERIES:
        page.fill("#course-search", query)
        page.wait_for_function("() => !document.getElementById('course-search-results').hidden")
        found = page.locator("#course-search-results .search-excerpt").evaluate_all(
            "els => els.map(e => [e.textContent, [...e.querySelectorAll('mark')].map(m => m.textContent)])"
        )
        assert found, query
        snippets += [text for text, _ in found]
        for text, marks in found:
            if query.lower() in text.lower():
                assert marks and {m.lower() for m in marks} == {query.lower()}, (query, text)
    assert not [s for s in snippets if SNIPPET_SOURCE.search(s)]
    assert any("Ψ" in s for s in snippets)  # the formulas are there, as they read
    assert remote == []
    page.fill("#course-search", "")  # the results closed again, as the module's other tests read the page
    page.wait_for_function("() => document.getElementById('course-search-results').hidden")


@each_lesson
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("variant", ["student", "answer"])
def test_each_figure_opens_full_size_by_tap_and_keyboard_and_its_alt_text_stays_alt_text(opened, variant, width, stem):
    page, remote = opened(variant, stem, width)
    found = figures(page)
    if stem == "lesson05":
        assert len(found) == 3  # 图 5-3, 5-4 and the cell's 图 5-5
    for i, figure in enumerate(found):
        assert figure["link"] and figure["alt"], figure
        assert not figure["alt_visible"], figure["alt"][:40]
        assert opens_full_size(page, i, "tap") and opens_full_size(page, i, "key"), figure["alt"][:40]
    assert remote == []


@pytest.mark.parametrize("width", WIDTHS)
def test_every_caption_has_one_style_and_the_lab_figure_reads_on_a_phone(opened, width):
    from course.lab.lesson_view import FIGURE_INCHES, FIGURE_PT

    page, _ = opened("student", "lesson05", width)
    styles = page.evaluate(CAPTION_STYLES)
    assert [s[0][:5] for s in styles] == [f"图 5-{n}" for n in range(1, 6)]
    assert {tuple(s[1:]) for s in styles} == {tuple(styles[0][1:])} and styles[0][1] == "center"
    lab = next(f for f in figures(page) if f["caption"].startswith("图 5-5"))
    assert FIGURE_PT / 72 * lab["shown"] / FIGURE_INCHES[0] >= 10  # its labels' height on the screen, in px
