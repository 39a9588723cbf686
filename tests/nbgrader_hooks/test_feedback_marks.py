"""What graders' marks mean reaches the student: extra credit beside the points (never read as more than full marks
of the item), and a recorded veto named with what it means, in the feedback page as in the report."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ROOT = Path(__file__).resolve().parents[2]
NOTE = "学生写 ZeRO-3 每步通信量是 2Ψ"


def text(page: str) -> str:
    """A page's text without tags."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def marked(answered, tmp_path_factory):
    """zhangsan: Q1 1/2 + 2 extra, Q2–Q3 full; wangwu: Q1–Q2 partly, a veto on Q2; feedback generated, report
    written."""
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.grading.report import make_report, record_veto
    from course.workflows.grade import run_nbgrader

    project = shutil.copytree(answered.parent, tmp_path_factory.mktemp("marked") / "course", symlinks=True)
    root = project / "autograder"
    marks = {
        ("zhangsan", "Q1"): (1, 2),
        ("zhangsan", "Q2"): (2, None),
        ("zhangsan", "Q3"): (2, None),
        ("wangwu", "Q1"): (0.5, None),
        ("wangwu", "Q2"): (1, None),
    }
    with gradebook(configured_gradebook(root).url) as gb:
        for (student, qid), (points, extra) in marks.items():
            grade = gb.find_grade(f"answer-{qid}", "lesson05", "lesson05", student)
            grade.manual_score, grade.extra_credit, grade.needs_manual_grade = points, extra, False
        gb.db.commit()
    record_veto(project, "lesson05", student="wangwu", question="Q2", veto="comm-volume", note=NOTE)
    run_nbgrader(root, "generate_feedback", "lesson05", "--force")
    pages = {
        s: (root / "feedback" / s / "lesson05" / "lesson05.html").read_text("utf-8") for s in ("zhangsan", "wangwu")
    }
    return pages, make_report(project, "lesson05")


def test_extra_credit_is_shown_beside_the_points_in_the_feedback(marked):
    pages, _ = marked
    page = text(pages["zhangsan"])
    assert "lesson05 (Score: 9.0 / 10.0 + 加分 2.0；总分 10.0，最多为满分)" in page  # 4 + 1 + 2 + 2, capped
    assert "Written response (Score: 1.0 / 2.0 + 加分 2.0)" in page and "3.0 / 2.0" not in page
    assert "Q1：加分 2（得分 1 / 2，另加 2 分）。加分计入总分，总分最多为满分；是否通过只看不含加分的得分。" in page
    assert "一票否决：" not in page and "course-veto" not in pages["zhangsan"]


def test_a_vetoed_students_feedback_names_the_veto_and_what_it_means(marked):
    pages, report = marked
    page = text(pages["wangwu"])
    from course.grading.rubric import load_rubric

    meaning = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml").veto("comm-volume").text.rstrip("。")
    assert (
        f"一票否决：Q2 · comm-volume——{meaning}。评分者在你的Q2中认定了这一项：本课的结果为不通过，与上面的得分无关。"
        in page
    )
    assert NOTE not in page  # the grader's note is for graders
    decided = {s.submission.student: s for s in report.students}
    assert decided["wangwu"].result == "FAIL" and decided["wangwu"].reasons[0].startswith("一票否决：comm-volume（Q2）")
    assert decided["zhangsan"].result == "PASS" and "+ 加分 2" in decided["zhangsan"].reasons[0]
    assert "1/2 + 加分 2" in report.html.read_text("utf-8")
