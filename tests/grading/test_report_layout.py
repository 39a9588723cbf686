"""The lesson report reads on a phone (issue 34, finding 8): at 390 px no table row is taller than the screen and the
page never scrolls sideways (one row was 8,493 px tall, the page 483,772 px); at 1280 px the similarity evidence
fits the window (it was 1,552 px wide)."""

from __future__ import annotations

import json

import pytest
from nbgrader.api import Gradebook

from course.grading.report import make_report
from tests.similarity.planted_class import graded  # noqa: F401 (the planted class with its gradebook)
from tests.site.page_checks import DESKTOP, PHONE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WAITING = ("h1", "h2", "para-a")  # Q1–Q3 not graded yet: their items show every key point
LONG_PROBLEM = (
    "submitted/h3/lesson05/lesson05.ipynb, cell test-fp32-accum: read-only cell was edited; graded with "
    "the original: " + "x" * 300
)


@pytest.fixture
def report(graded):  # noqa: F811
    """The planted class's lesson report, some students still waiting for Q1–Q3 and one flagged with a long line."""
    with Gradebook(f"sqlite:///{graded / 'autograder' / 'gradebook.db'}") as gb:
        for student in WAITING:
            for q in ("Q1", "Q2", "Q3"):
                grade = gb.find_grade(f"answer-{q}", "lesson05", "lesson05", student)
                grade.manual_score, grade.needs_manual_grade = None, True
        gb.db.commit()
    reports = graded / "autograder" / "reports"
    reports.mkdir(exist_ok=True)
    (reports / "lesson05-grade.json").write_text(
        json.dumps({"h3": {"flagged": True, "verdicts": {}, "changes": [], "problems": [LONG_PROBLEM]}}), "utf-8"
    )
    from course.workflows.similarity_report import similarity_for_report

    return make_report(graded, "lesson05", similarity=similarity_for_report(graded, "lesson05")).html


MEASURE = """() => ({
  page_width: document.documentElement.scrollWidth,
  window_width: window.innerWidth,
  tallest_row: Math.max(...[...document.querySelectorAll('tr')].map(r => r.getBoundingClientRect().height)),
  widest_evidence: Math.max(...[...document.querySelectorAll('table.side-by-side')]
                            .map(t => t.getBoundingClientRect().right)),
  evidence: document.querySelectorAll('table.side-by-side').length,
  key_points: document.querySelectorAll('table.items details.key-points li').length,
})"""


def test_the_report_reads_on_a_phone_and_its_evidence_fits_a_desktop(report, browser):
    page = browser.new_page()
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort())
    for size in (PHONE, DESKTOP):
        page.set_viewport_size(size)
        page.goto(report.as_uri())
        shown = page.evaluate(MEASURE)
        print(size["width"], shown)
        assert shown["evidence"] >= 3 and shown["key_points"] >= 9  # the long parts are there
        assert shown["page_width"] <= shown["window_width"], shown  # no sideways scroll of the page
        assert shown["widest_evidence"] <= shown["window_width"], shown
        if size is PHONE:
            assert shown["tallest_row"] <= PHONE["height"], shown
