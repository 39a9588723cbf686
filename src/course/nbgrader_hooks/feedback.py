"""nbgrader feedback step: per test, passed or not, without hidden test code, values or raw tracebacks.

Stock feedback shows the autograded notebook, hidden tests and their tracebacks included
(jupyter/nbgrader#917). After GetGrades has put each cell's score from the gradebook into its metadata, this
preprocessor rewrites every test cell: the hidden region becomes one comment line and the outputs become one
status line chosen by the score (which `course grade` may have corrected) and by whether the kernel failed a
visible or a hidden check. Nothing the student's code printed during the tests is shown: it ran with the
hidden inputs. Display outputs elsewhere are dropped too, since a later cell can update them. Where the
re-check of `course grade` recognised a known wrong answer in a failed item (reports/<assignment>-grade.json),
the status line is followed by its name and explanation, which the lesson words without hidden values; an
exception the student's own cells raised while being defined (a SyntaxError) is named there too, with its line.

Feedback may be generated and released before graders have scored the written answers. nbgrader would show each
such answer as "Score: 0.0 / 2.0" and count it as 0 in the total; PendingGrades marks it 待评分 instead, and the
course's feedback template (templates/course_feedback) heads the page with the graded part and what is still
open. Once graded, `nbgrader generate_feedback --force` and `release_feedback` replace the page. A late
submission's penalty is the lesson's (LessonLatePenalty): taken from the whole total once it is known, provisional
before.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict, List

from course.grading.cells import HIDDEN_FAILED, HIDDEN_REGION, is_test, nbgrader_meta
from course.grading.rubric import code_grade_id, format_points, load_rubric, question_grade_id, rubric_path

HIDDEN_NOTE = "# （隐藏检查：代码与数值不公开）\n"
CODE_ERROR = "运行你的代码单元时出错（其中的函数可能因此没有定义）："
STATUS = {
    "passed": "✓ 通过：可见检查与隐藏检查都通过。",
    "hidden": "✗ 未通过：可见检查通过，隐藏检查（其他输入）未通过。",
    "visible": "✗ 未通过：可见检查未通过。在 notebook 中运行这个测试单元（或 nbgrader validate）可看到具体哪一项。",
    "recheck": "✗ 未通过：课程复核未通过——在独立进程中重新运行你的代码时，结果与要求不符。",
}


def test_status(cell) -> str:
    """Which STATUS line a graded test cell gets."""
    meta = nbgrader_meta(cell)
    score, points = meta.get("score"), meta.get("points")
    if score is not None and points is not None and float(score) >= float(points):
        return "passed"
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        return "recheck"
    return "hidden" if errors[-1].get("ename") == HIDDEN_FAILED else "visible"


def diagnosis_lines(grade_report: Path, student: str) -> dict[str, list[str]]:
    """Test cell grade id → the feedback lines naming each error in the student's cells (a SyntaxError, with its
    line) and each mistake the re-check diagnosed; {} without a report."""
    from course.grading.recheck import CellError

    try:
        verdicts = json.loads(Path(grade_report).read_text("utf-8"))[student]["verdicts"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {
        code_grade_id(item): [
            *(f"{CODE_ERROR}{CellError(**e).describe()}" for e in verdict.get("errors", ())),
            *(f"诊断：{d['name']}——{d['explanation']}" for d in verdict.get("diagnoses", ())),
        ]
        for item, verdict in verdicts.items()
        if not verdict.get("passed")
    }


class FeedbackStep(NbGraderPreprocessor):
    """A feedback preprocessor: nbconvert's HTML exporter configures display_data_priority for every step, which
    nbgrader's base class redeclares unconfigurable, so traitlets would warn once per step and run; it is declared
    configurable here, as nbgrader's own GetGrades does."""

    display_data_priority = List(NbGraderPreprocessor.class_traits()["display_data_priority"].default(), config=True)


class HideHiddenTests(FeedbackStep):
    """Replace hidden tests and test outputs with a status line (and any diagnosis); drop display outputs."""

    diagnoses = Dict(help="Test cell grade id → diagnosis lines of the notebook being processed (set per notebook).")

    def preprocess(self, nb, resources):
        """Read the student's diagnoses once per notebook, from the grade report under the course root."""
        root = self.config.get("CourseDirectory", {}).get("root")
        info = resources.get("nbgrader", {})
        report = Path(root) / "reports" / f"{info.get('assignment')}-grade.json" if isinstance(root, str) else None
        self.diagnoses = diagnosis_lines(report, info.get("student")) if report else {}
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        """Rewrite one cell of the feedback notebook."""
        if cell.cell_type != "code":
            return cell, resources
        if is_test(cell):
            status = test_status(cell)
            cell.source = HIDDEN_REGION.sub(HIDDEN_NOTE, cell.source)
            found = self.diagnoses.get(nbgrader_meta(cell).get("grade_id"), []) if status != "passed" else []
            text = "\n".join([STATUS[status], *found]) + "\n"
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        else:
            cell.outputs = [o for o in cell.outputs if o.output_type not in ("display_data", "update_display_data")]
        return cell, resources


PENDING_NOTE = (
    '<div class="pending-grade" style="border-left: 4px solid #9e9e9e; background: #f5f5f5; '
    'padding: 0.5em 1em;"><strong>{name}：待评分</strong>（满分 {points} 分）。评分者还没有给分，'
    "这里不算 0 分；评完后会重新发布反馈。</div>"
)


class PendingGrades(FeedbackStep):
    """Grade cells nbgrader still marks as needing a grader read 待评分, never 0; the page's total names them."""

    def preprocess(self, nb, resources):
        """Ask the gradebook (nbgrader's configured db_url) which cells wait for a grader; note each one."""
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        names = item_names(self.config.get("CourseDirectory", {}).get("root"), info["assignment"])
        pending, cells = [], []
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                cells.append(cell)
                meta = nbgrader_meta(cell)
                if not meta.get("grade"):
                    continue
                grade = gb.find_grade(meta["grade_id"], info["notebook"], info["assignment"], info["student"])
                if grade.needs_manual_grade:
                    item = {
                        "grade_id": meta["grade_id"],
                        "name": names.get(meta["grade_id"], meta["grade_id"]),
                        "points": grade.max_score,
                    }
                    pending.append(item)
                    meta["grade"] = False  # nbgrader's template would print its missing score as 0.0
                    cells.append(
                        nbformat.v4.new_markdown_cell(
                            PENDING_NOTE.format(name=html.escape(item["name"]), points=format_points(item["points"])),
                            metadata={"course": "pending-grade"},
                        )
                    )
        nb.cells = cells
        resources["course_pending"] = pending
        return nb, resources


class LessonLatePenalty(FeedbackStep):
    """The page's score less the lesson's late penalty on its whole total (course.grading.late_total), not the one
    nbgrader stored at autograde from the code alone; while items wait for a grader the penalty is named as
    provisional and not taken. The reason goes to the page's contents (resources.course_late)."""

    def preprocess(self, nb, resources):
        """Ask the configured late-submission plugin, as the reports and the export do."""
        from nbgrader.api import Gradebook

        from course.grading.late_policy import policy_in_words
        from course.grading.late_total import late_plugin, lesson_late, notebook_shares

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            submission = gb.find_submission(info["assignment"], info["student"])
            late = lesson_late(submission, late_plugin(self.config))
            scores = {notebook.name: notebook.score for notebook in submission.notebooks}
        share = notebook_shares(late, scores)[info["notebook"]] if late and not late.provisional else 0.0
        info["late_penalty"], info["score"] = share, scores[info["notebook"]] - share
        resources["course_late"] = late.reason(policy_in_words(self.config)) if late else ""
        return nb, resources


def item_names(course_root, assignment: str) -> dict[str, str]:
    """Grade id → how the page names it (Q2, 代码「通信量」); {} without the lesson's rubric."""
    path = rubric_path(Path(course_root), assignment) if isinstance(course_root, str) else None
    if path is None or not path.is_file():
        return {}
    rubric = load_rubric(path)
    return {
        **{code_grade_id(c.id): f"代码「{c.title}」" for c in rubric.code_items},
        **{question_grade_id(q.id): q.id for q in rubric.questions},
    }
