"""Formgrader's extra credit: shown beside the points ("1/2 + 加分 2"), never 满分 unless the points are full,
counted in the total up to full marks, and never turning FAIL into PASS."""

from __future__ import annotations

from nbgrader.api import Gradebook

from course.grading.gradebook import configured_gradebook
from course.grading.report import make_report
from tests.grading.report_class import report_rows, student_section

CODE = {"test-formulas": 1, "test-fp32-accum": 1, "test-comm-volume": 1, "test-dp1-cross-check": 1}
CLASS = {
    "ada": {"scores": {**CODE, "answer-Q1": 1, "answer-Q2": 2, "answer-Q3": 0}},  # 7 + 2 extra
    "bo": {"scores": {**CODE, "answer-Q1": 2, "answer-Q2": 2, "answer-Q3": 2}},
}  # 10 + 1 extra
EXTRA = {("ada", "answer-Q1"): 2, ("bo", "answer-Q2"): 1}


def give_extra(root) -> None:
    """What formgrader's extra credit box saves."""
    with Gradebook(configured_gradebook(root / "autograder").url) as gb:
        for (student, grade_id), points in EXTRA.items():
            gb.find_grade(grade_id, "lesson05", "lesson05", student).extra_credit = points
        gb.db.commit()


def test_extra_credit_is_shown_apart_counts_up_to_full_marks_and_never_passes_a_fail(course):
    root = course(CLASS, vetoes=None)
    give_extra(root)
    result = make_report(root, "lesson05")
    decided = {s.submission.student: s for s in result.students}
    assert decided["ada"].result == "FAIL" and decided["bo"].result == "PASS"
    assert decided["ada"].reasons == (
        "得分 7/10 + 加分 2（总分 9/10），不含加分低于通过线 8：加分计入总分，不改变是否通过",
    )
    assert decided["bo"].reasons == ("得分 10/10 + 加分 1（总分 10/10），不含加分已达通过线 8，没有一票否决项",)
    rows = report_rows(result.csv)
    assert rows["ada"]["total"] == "9" and rows["bo"]["total"] == "10"  # capped at full marks
    assert rows["ada"]["Q1"] == "1" and rows["bo"]["Q2"] == "2"  # the items' points, extra credit in the total
    html = result.html.read_text("utf-8")
    ada = student_section(html, "ada")
    assert "1/2 + 加分 2" in ada and "未得满分，对照要点找出缺失项" in ada
    assert ada.count("<p>满分。</p>") == 1  # Q2 only: Q1's 1 point plus extra credit is not full marks
    assert "加分 2：计入总分（总分最多为满分），不计入是否通过。" in ada and "（含加分 2）" in ada
    assert "2/2 + 加分 1" in student_section(html, "bo")
