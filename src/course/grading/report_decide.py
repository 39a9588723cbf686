"""The result rules, student by student: a file grading could not take → INCOMPLETE with the reason; any veto → FAIL
whatever the points; any item still waiting for a grader → INCOMPLETE; otherwise the total against the pass line."""

from __future__ import annotations

from dataclasses import replace

from course.grading.report_evidence import read_grade_report
from course.grading.report_model import FAIL, INCOMPLETE, PASS, CoursePaths, ItemScore, StudentReport, Submission
from course.grading.report_read import read_gradebook
from course.grading.rubric import Rubric, format_points, load_rubric
from course.grading.vetoes import VetoRecord, load_vetoes


def decide_lesson(paths: CoursePaths) -> tuple[Rubric, tuple[StudentReport, ...]]:
    """Every submission of one lesson decided by the result rules: what this report and the semester's both show."""
    rubric = load_rubric(paths.rubric)
    submissions = read_gradebook(paths.gradebook, rubric, paths.autograded)
    vetoes = load_vetoes(paths.vetoes, rubric, {s.student for s in submissions})
    outcomes = read_grade_report(paths.grade_report, rubric)
    return rubric, tuple(
        decide(
            rubric,
            s,
            tuple(v for v in vetoes if v.student == s.student),
            ungradable=outcomes.get(s.student, {}).get("ungradable") or None,
        )
        for s in submissions
    )


def decide(
    rubric: Rubric, submission: Submission, vetoes: tuple[VetoRecord, ...], *, ungradable: str | None = None
) -> StudentReport:
    """Apply the result rules: a file grading could not take (UNGRADABLE: why) → INCOMPLETE, never a silent 0;
    veto → FAIL; anything ungraded → INCOMPLETE; else total vs pass line."""
    report = _decide(rubric, submission, vetoes, ungradable)
    if submission.late:
        return replace(report, reasons=(*report.reasons, submission.late.reason(submission.late_policy)))
    return report


def _decide(
    rubric: Rubric, submission: Submission, vetoes: tuple[VetoRecord, ...], ungradable: str | None
) -> StudentReport:
    """The result rules on the total after any late penalty."""
    waiting = submission.pending()
    total = f"{format_points(submission.total)}/{format_points(rubric.total)}"
    if ungradable:
        return StudentReport(
            submission,
            vetoes,
            INCOMPLETE,
            (
                f"提交的文件无法评分（{ungradable}），按 0 分记入 gradebook；"
                "学生按原因改正并重新提交、重新评分之前不能判定结果",
            ),
        )
    if vetoes:
        reasons = [f"一票否决：{v.veto}（{v.question}）{rubric.veto(v.veto).text} 评分者记录：{v.note}" for v in vetoes]
        if waiting:
            reasons.append(f"另有 {'、'.join(_name(i) for i in waiting)} 尚未评分，但一票否决已决定结果")
        return StudentReport(submission, vetoes, FAIL, tuple(reasons))
    if waiting:
        return StudentReport(
            submission,
            vetoes,
            INCOMPLETE,
            tuple(f"{_name(i)} 尚未评分（nbgrader 标记为需要人工评分），评完之前不能判定通过" for i in waiting),
        )
    extra = submission.extra
    if extra:  # judged on the points alone: extra credit raises the total, never the result
        points = sum(i.points for i in submission.code + submission.questions) - (
            submission.late.penalty if submission.late else 0
        )
        shown = (
            f"得分 {format_points(points)}/{format_points(rubric.total)} + 加分 {format_points(extra)}（总分 {total}）"
        )
        if points >= rubric.pass_line:
            return StudentReport(
                submission,
                vetoes,
                PASS,
                (f"{shown}，不含加分已达通过线 {format_points(rubric.pass_line)}，没有一票否决项",),
            )
        return StudentReport(
            submission,
            vetoes,
            FAIL,
            (f"{shown}，不含加分低于通过线 {format_points(rubric.pass_line)}：加分计入总分，不改变是否通过",),
        )
    if submission.total >= rubric.pass_line:
        return StudentReport(
            submission, vetoes, PASS, (f"总分 {total} ≥ 通过线 {format_points(rubric.pass_line)}，没有一票否决项",)
        )
    return StudentReport(submission, vetoes, FAIL, (f"总分 {total} 低于通过线 {format_points(rubric.pass_line)}",))


def _name(item: ItemScore) -> str:
    """How an item is named in explanations: Q2, or 代码「通信量」."""
    return item.item_id if item.grade_id.startswith("answer-") else f"代码「{item.title}」"
