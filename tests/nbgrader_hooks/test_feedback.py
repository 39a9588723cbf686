"""Feedback says per test passed or not and never shows hidden test code, hidden values or test-time output."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from course.grading.cells import HIDDEN_FAILED
from course.nbgrader_hooks.feedback import CODE_ERROR, STATUS, HideHiddenTests
from tests.assignment.hidden_checks import hidden_tokens, leaked
from tests.assignment.make_submissions import EXPECTED, SPEC

pytestmark = pytest.mark.long(40)

SOURCE = (
    "check(f(1))\n### BEGIN HIDDEN TESTS\nwith _course.hidden():\n"
    "    check(f(1_000_003))\n### END HIDDEN TESTS\nprint('ok')"
)


def graded_test_cell(score: float, outputs: list) -> nbformat.NotebookNode:
    """A graded test cell as GetGrades leaves it."""
    cell = nbformat.v4.new_code_cell(
        SOURCE,
        metadata={
            "nbgrader": {
                "grade": True,
                "solution": False,
                "locked": True,
                "grade_id": "test-x",
                "points": 1,
                "score": score,
            }
        },
    )
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


STDOUT = {"output_type": "stream", "name": "stdout", "text": "num_params=1000003\n"}


def error(ename: str) -> dict:
    """An error output with a traceback that shows hidden code."""
    return {"output_type": "error", "ename": ename, "evalue": "1000003", "traceback": ["check(f(1_000_003))"]}


@pytest.mark.parametrize(
    "score,outputs,status",
    [
        (1, [STDOUT], "passed"),
        (0, [STDOUT, error(HIDDEN_FAILED)], "hidden"),
        (0, [error("AssertionError")], "visible"),
        (0, [STDOUT], "recheck"),
    ],
)
def test_each_test_cell_becomes_its_source_without_hidden_tests_and_one_status_line(score, outputs, status):
    cell, _ = HideHiddenTests().preprocess_cell(graded_test_cell(score, outputs), {}, 0)
    assert "1_000_003" not in cell.source and cell.source.startswith("check(f(1))\n")
    assert [o.text for o in cell.outputs] == [STATUS[status] + "\n"]


def test_a_diagnosed_mistake_follows_the_status_line_of_a_failed_test(tmp_path):
    from traitlets.config import Config

    diagnosis = {
        "id": "x",
        "name": "写反了",
        "explanation": "应先乘后加。",
        "evidence": "f(1_000_003) == 7",
        "veto": None,
    }
    report = {"s": {"verdicts": {"x": {"passed": False, "reason": "f(1_000_003)", "diagnoses": [diagnosis]}}}}
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "a-grade.json").write_text(__import__("json").dumps(report), "utf-8")
    config = Config({"CourseDirectory": {"root": str(tmp_path)}})
    nb = nbformat.v4.new_notebook(cells=[graded_test_cell(0, [error("AssertionError")])])
    nb, _ = HideHiddenTests(config=config).preprocess(nb, {"nbgrader": {"assignment": "a", "student": "s"}})
    text = nb.cells[0].outputs[0].text
    assert text == f"{STATUS['visible']}\n诊断：写反了——应先乘后加。\n" and not leaked(text)


def test_an_error_in_the_students_cell_is_named_with_its_line(tmp_path):
    from traitlets.config import Config

    raised = {"cell": "cell ex-f", "error": "SyntaxError", "line": 4, "message": "invalid syntax"}
    report = {"s": {"verdicts": {"x": {"passed": False, "reason": "f is not defined", "errors": [raised]}}}}
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "a-grade.json").write_text(__import__("json").dumps(report), "utf-8")
    config = Config({"CourseDirectory": {"root": str(tmp_path)}})
    nb = nbformat.v4.new_notebook(cells=[graded_test_cell(0, [error("NameError")])])
    nb, _ = HideHiddenTests(config=config).preprocess(nb, {"nbgrader": {"assignment": "a", "student": "s"}})
    assert nb.cells[0].outputs[0].text == (
        f"{STATUS['visible']}\n{CODE_ERROR}cell ex-f, line 4: SyntaxError: invalid syntax\n"
    )


def test_display_outputs_of_other_cells_are_dropped():
    cell = nbformat.v4.new_code_cell(
        "x",
        outputs=[
            nbformat.v4.new_output("display_data", data={"text/plain": "1"}),
            nbformat.v4.new_output("stream", text="table\n"),
        ],
    )
    cell, _ = HideHiddenTests().preprocess_cell(cell, {}, 0)
    assert [o.output_type for o in cell.outputs] == ["stream"]


@pytest.fixture(scope="session")
def feedback_course(graded, tmp_path_factory) -> Path:
    """A copy of the graded samples' course (its project folder) with stock `nbgrader generate_feedback` run in it."""
    from course.workflows.grade import run_nbgrader

    project = tmp_path_factory.mktemp("feedback")
    shutil.copytree(graded.course_root, project / "autograder")
    run_nbgrader(project / "autograder", "generate_feedback", "lesson05", "--force")
    return project


@pytest.fixture(scope="session")
def feedback(feedback_course):
    """Student → feedback HTML of the graded samples."""
    pages = (feedback_course / "autograder" / "feedback").glob("*/lesson05/lesson05.html")
    return {p.parts[-3]: p.read_text("utf-8") for p in pages}


@pytest.mark.slow
@pytest.mark.sandbox
def test_feedback_exists_for_every_submission_and_leaks_nothing_hidden(feedback):
    assert sorted(feedback) == sorted(EXPECTED)
    unreadable = {n for n, e in EXPECTED.items() if "file" in e or n == "invalid-json"}
    assert {n for n, html in feedback.items() if "这份提交无法评分" in html} == unreadable  # says why it scored 0
    assert {name: found for name, html in feedback.items() if (found := leaks(html))} == {}


def leaks(page: str) -> list[str]:
    """leaked(PAGE), its regular expressions run only on a page where some hidden token occurs at all (which
    leaked() needs for any match): a plain substring test of each token is a hundred times quicker on a whole page."""
    return leaked(page) if any(token in page for token in hidden_tokens()) else []


@pytest.mark.slow
@pytest.mark.sandbox
def test_feedback_status_per_item_matches_the_gradebook(feedback, graded):
    items = list(graded.code_points)
    for name, html in feedback.items():
        shown = re.findall(r"(✓ 通过|✗ 未通过)", html)
        want = ["✓ 通过" if EXPECTED[name]["scores"][i] else "✗ 未通过" for i in items]
        assert shown == want, name
    assert STATUS["recheck"] in feedback["cheat-replaced-checker"] and STATUS["hidden"] in feedback["floor-division"]


@pytest.mark.slow
@pytest.mark.sandbox
def test_feedback_names_the_diagnosed_mistake_without_hidden_values(feedback):
    [wrong] = [m for m in SPEC.misconceptions if m.id == "zero2-shards-params"]
    assert f"诊断：{wrong.name}——{wrong.explanation}" in feedback["zero2-shards-params"]
    assert "诊断：" not in feedback["reference"]


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_wrong_shard_target_submission_gets_the_diagnosis_in_feedback_and_a_shard_target_hint_in_the_report(
    feedback, feedback_course
):
    import csv

    from course.grading.report import make_report

    assert "诊断：ZeRO-2 把参数也分片了" in feedback["zero2-shards-params"]
    result = make_report(feedback_course, "lesson05")
    with open(result.csv, encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert rows["zero2-shards-params"]["veto_hints"] == "shard-target"
    assert rows["zero2-shards-params"]["vetoes"] == ""  # a hint, never a decision
    assert rows["swapped-comm-volumes"]["veto_hints"] == "comm-volume" and rows["reference"]["veto_hints"] == ""
    html = result.html.read_text("utf-8")
    assert (
        "可能的一票否决项 shard-target" in html and "zero_memory_per_gpu(7_000_000_000, 8, 2) == 14_000_000_000" in html
    )


def _heading(page: str) -> str:
    """The feedback page's heading: the notebook and its total."""
    return re.sub(r"<[^>]+>", "", re.search(r"<h4 class=\"course-total[^>]*>(.*?)</h4>", page, re.S)[1]).strip()


def _answer_panel(page: str, qid: str) -> str:
    """The answer panel of one question and what follows it, up to the next question's prompt."""
    start = page.index(f'name="comment-answer-{qid}"')
    end = page.find("<h3", start)
    return page[start : end if end > 0 else None]


@pytest.mark.slow
@pytest.mark.sandbox
def test_feedback_before_grading_says_pending_and_released_feedback_after_grading_shows_the_score(answered, tmp_path):
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.workflows.grade import run_nbgrader

    root = shutil.copytree(answered.parent, tmp_path / "course", symlinks=True) / "autograder"
    run_nbgrader(root, "generate_feedback", "lesson05")
    early = {
        s: (root / "feedback" / s / "lesson05" / "lesson05.html").read_text("utf-8") for s in ("zhangsan", "wangwu")
    }
    # zhangsan: code 4/4, Q1–Q3 written and waiting; nbgrader alone would print 4.0 / 10.0 and 0.0 / 2.0 each
    assert _heading(early["zhangsan"]) == (
        "lesson05（尚未评完：已评部分得分 4.0 / 4.0；待评分：Q1、Q2、Q3，共 6.0 分。总分 10.0 分在全部评完后才确定）"
    )
    # wangwu: two code items failed (ZeRO-2 shards the parameters: the formulas and the cross-check), Q3 left empty
    # (nbgrader scores an unchanged answer 0 itself: graded, not open)
    assert _heading(early["wangwu"]) == (
        "lesson05（尚未评完：已评部分得分 2.0 / 6.0；待评分：Q1、Q2，共 4.0 分。总分 10.0 分在全部评完后才确定）"
    )
    for qid in ("Q1", "Q2", "Q3"):
        panel = _answer_panel(early["zhangsan"], qid)
        assert f"{qid}：待评分" in panel and "Score:" not in panel
    assert "Score: 0.0 / 2.0" in _answer_panel(early["wangwu"], "Q3") and "待评分" not in _answer_panel(
        early["wangwu"], "Q3"
    )
    assert "4.0 / 10.0" not in early["zhangsan"] and "2.0 / 10.0" not in early["wangwu"]

    with gradebook(configured_gradebook(root).url) as gb:  # what formgrader's save does
        for student, points in (("zhangsan", (2, 1.5, 2)), ("wangwu", (0.5, 1))):
            for qid, score in zip(("Q1", "Q2", "Q3"), points):
                grade = gb.find_grade(f"answer-{qid}", "lesson05", "lesson05", student)
                grade.manual_score, grade.needs_manual_grade = score, False
        gb.db.commit()
    run_nbgrader(root, "generate_feedback", "lesson05", "--force")
    (root / "exchange").mkdir(mode=0o777)  # the exchange an instructor sets up, as nbgrader's docs say
    run_nbgrader(root, "release_feedback", "lesson05")
    released = {p.read_text("utf-8") for p in (root / "exchange").glob("*/feedback/*.html")}
    assert len(released) == 2
    headings = sorted(_heading(page) for page in released)
    assert headings == ["lesson05 (Score: 3.5 / 10.0)", "lesson05 (Score: 9.5 / 10.0)"]
    assert not any("待评分" in page for page in released)
    for page in released:  # the math is typeset offline: the course's MathJax inlined, nbgrader's CDN tag gone
        assert "cdnjs.cloudflare.com" not in page and "<script src=" not in page
        assert "window.MathJax = {" in page and "MathJax.Hub = window.MathJax.Hub" not in page
