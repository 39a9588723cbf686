"""What a grader's marks mean, on the feedback page: extra credit apart from the points, and a veto named.

nbgrader's GetGrades puts each cell's score, extra credit included, into the page, so an answer given 1 of 2 points
and 2 extra reads "3.0 / 2.0". ExtraCreditAndVetoes shows the points as the score and the extra credit beside them
("1.0 / 2.0 + 加分 2.0", and a note under the answer), and heads the page of a student with a recorded veto (the
graders' vetoes/<assignment>.yml) with the veto item and what it means: the lesson is not passed whatever the
points. The grader's own note is not shown (it quotes what they found, for graders).
"""

from __future__ import annotations

import html
from pathlib import Path

import nbformat

from course.grading.cells import nbgrader_meta
from course.grading.rubric import format_points, load_rubric, rubric_path
from course.grading.vetoes import load_vetoes, veto_path
from course.nbgrader_hooks.feedback import FeedbackStep, item_names

EXTRA_NOTE = (
    '<div class="extra-credit" style="border-left: 4px solid #2e7d32; background: #f1f8e9; '
    'padding: 0.5em 1em;"><strong>{name}：加分 {extra}</strong>（得分 {points} / {max}，另加 {extra} 分）。'
    "加分计入总分，总分最多为满分；是否通过只看不含加分的得分。</div>"
)


class ExtraCreditAndVetoes(FeedbackStep):
    """Scores without extra credit, the extra credit beside them, and the student's vetoes for the page's heading."""

    def preprocess(self, nb, resources):
        """Read the extra credit from the gradebook and the vetoes from the course root; note both."""
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        root = self.config.get("CourseDirectory", {}).get("root")
        names = item_names(root, info["assignment"])
        cells, extra = [], 0.0
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                cells.append(cell)
                meta = nbgrader_meta(cell)
                if not meta.get("grade") or meta.get("score") is None:
                    continue
                grade = gb.find_grade(meta["grade_id"], info["notebook"], info["assignment"], info["student"])
                if grade.extra_credit:
                    extra += grade.extra_credit
                    meta["score"], meta["course_extra"] = grade.score - grade.extra_credit, grade.extra_credit
                    cells.append(
                        nbformat.v4.new_markdown_cell(
                            EXTRA_NOTE.format(
                                name=html.escape(names.get(meta["grade_id"], meta["grade_id"])),
                                extra=format_points(grade.extra_credit),
                                points=format_points(meta["score"]),
                                max=format_points(grade.max_score),
                            ),
                            metadata={"course": "extra-credit"},
                        )
                    )
            students = {s.id for s in gb.students}
        nb.cells = cells
        resources["course_extra"] = extra
        resources["course_vetoes"] = student_vetoes(root, info["assignment"], info["student"], students)
        return nb, resources


def student_vetoes(course_root, assignment: str, student: str, students: set[str]) -> list[dict[str, str]]:
    """The vetoes recorded for STUDENT (the file checked against the gradebook's STUDENTS, as the report does): the
    item (Q2, 代码「通信量」), the veto id and what the veto item means."""
    if not isinstance(course_root, str):
        return []
    path = rubric_path(Path(course_root), assignment)
    if not path.is_file():
        return []
    rubric = load_rubric(path)
    names = {q.id: q.id for q in rubric.questions} | {c.id: f"代码「{c.title}」" for c in rubric.code_items}
    records = load_vetoes(veto_path(Path(course_root), assignment), rubric, students)
    return [
        {"item": names.get(r.question, r.question), "veto": r.veto, "text": rubric.veto(r.veto).text.rstrip("。")}
        for r in records
        if r.student == student
    ]
