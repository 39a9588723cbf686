"""Which notebook a site runs in the browser and what its lesson page's block says (course.site.lite_page) follow
whether the variant offers the assignment (course.lesson.variants), not its name."""

from __future__ import annotations

from dataclasses import replace

from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.lesson.variants import ANSWER, STUDENT
from course.site.lite_page import BrowserRun, browser_notebook, page_markdown
from course.site.plan import make_plan
from tests.lesson_cases import ROOT

HAND_IN = "再提交（装有本课程工具时可先用 `course check` 检查）"


def test_a_site_that_offers_the_assignment_runs_it_and_says_how_to_hand_it_in():
    plan, run = make_plan(ROOT), BrowserRun("lesson05", "lesson05.ipynb")
    assert (
        browser_notebook(STUDENT, "lesson05")
        == browser_notebook("student", "lesson05")
        == assignment_notebook("lesson05")
    )
    assert HAND_IN in page_markdown(plan, STUDENT, run)
    assert browser_notebook(ANSWER, "lesson05") == notes_notebook("lesson05")
    block = page_markdown(plan, "answer", run)
    assert HAND_IN not in block and f"这是{ANSWER.label} notebook" in block


def test_the_offer_is_the_models():
    plan, run = make_plan(ROOT), BrowserRun("lesson05", "lesson05.ipynb")
    withheld, offered = replace(STUDENT, offers_assignment=False), replace(ANSWER, offers_assignment=True)
    assert browser_notebook(withheld, "lesson05") == notes_notebook("lesson05")
    assert HAND_IN not in page_markdown(plan, withheld, run)
    assert browser_notebook(offered, "lesson05") == assignment_notebook("lesson05")
    assert HAND_IN in page_markdown(plan, offered, run)
