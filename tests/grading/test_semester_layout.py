"""The semester page on a phone and a desktop: at 390 px each student is a card whose scores are in the first view,
at 1280 px the table fits the window (flags wrap) with the student column pinned; never a sideways page. An
INCOMPLETE lesson or semester shows no number, as the LMS files leave it empty."""

from __future__ import annotations

import json
import re

import pytest

from course.grading.semester import make_semester_report
from tests.grading.report_class import empty_gradebook  # noqa: F401 (a fixture)
from tests.grading.semester_class import semester  # noqa: F401 (the fixture: lessons 05, 07, 09 and their class)
from tests.offline_page import keep_offline
from tests.site.page_checks import DESKTOP, PHONE

LONG_FLAG = "cell test-split: read-only cell was edited; graded with the original cell, " + "此处说明较长，" * 12

MEASURE = """() => {
  const table = document.querySelector('table.standings');
  const first = document.querySelector('table.standings tr[id^="student-"] .score');
  const pinned = document.querySelector('table.standings th[scope="row"]');
  return {page_width: document.documentElement.scrollWidth, window_width: window.innerWidth,
          table_right: table.getBoundingClientRect().right, first_score_top: first.getBoundingClientRect().top,
          first_score: first.textContent, pinned: getComputedStyle(pinned).position,
          cards: getComputedStyle(document.querySelector('table.standings tr[id^="student-"]')).display};
}"""


@pytest.fixture
def page(semester):  # noqa: F811
    """The semester report of the test class, one student's lesson07 flagged with a long line."""
    root = semester()
    reports = root / "autograder" / "reports"
    reports.mkdir(parents=True)
    (reports / "lesson07-grade.json").write_text(
        json.dumps({"zhang-wei": {"flagged": True, "verdicts": {}, "changes": [], "problems": [LONG_FLAG]}}), "utf-8"
    )
    return make_semester_report(root).html


@pytest.mark.parametrize("gradebook_db", ["sqlite"], indirect=True)
def test_incomplete_shows_no_number(page, gradebook_db):
    html = page.read_text("utf-8")
    liu = re.search(r'<tr id="student-liu-yang".*?</tr>', html, re.S).group(0)
    lesson05 = re.search(r'<td class="num" data-lesson="lesson05".*?</td>', liu, re.S).group(0)
    assert 'data-result="INCOMPLETE"' in lesson05 and 'class="score"' not in lesson05 and "/10" not in lesson05
    assert '<td class="num total"><span class="label">加权总分</span>—</td>' in liu and "90.0%" not in liu


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("gradebook_db", ["sqlite"], indirect=True)
def test_the_semester_page_reads_at_390_and_1280_px(page, gradebook_db, browser):
    tab = browser.new_page()
    remote = keep_offline(tab)
    for size in (PHONE, DESKTOP):
        tab.set_viewport_size(size)
        tab.goto(page.as_uri())
        shown = tab.evaluate(MEASURE)
        print(size["width"], shown)
        assert shown["page_width"] <= shown["window_width"], shown
        if size is PHONE:
            assert shown["cards"] == "block" and shown["first_score_top"] < PHONE["height"], shown
            assert re.fullmatch(r"\d+(\.\d+)?/\d+", shown["first_score"]), shown
        else:
            assert shown["table_right"] <= shown["window_width"] and shown["pinned"] == "sticky", shown
    assert remote == []
