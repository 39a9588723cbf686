"""Show the rubric's 要点 to graders in nbgrader's formgrader, right below each student's answer.

Enabled by the course's nbgrader settings (course.nbgrader_hooks.config, loaded by autograder/nbgrader_config.py):
formgrader renders submissions with nbconvert's HTMLExporter, whose preprocessors include this one.
"""

from __future__ import annotations

import html
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbformat.v4 import new_markdown_cell
from traitlets import Unicode

from course.grading.rubric import Question, format_points, load_rubric, question_grade_id


class RubricKeyPoints(Preprocessor):
    """After each manually graded answer cell, insert a read-only note with that question's 要点 and 给分规则."""

    rubrics_dir = Unicode("rubrics", help="Folder holding the lessonNN.yml rubrics.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        """Only formgrader's page passes a submission id; students' feedback pages must never show the 要点."""
        if "submission_id" not in resources:
            return nb, resources
        rubric = load_rubric(Path(self.rubrics_dir) / f"{resources['assignment_id']}.yml")
        questions = {question_grade_id(q.id): q for q in rubric.questions}
        cells = []
        for cell in nb.cells:
            cells.append(cell)
            question = questions.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
            if question is not None:
                cells.append(new_markdown_cell(key_points_html(question), metadata={"course": "rubric-key-points"}))
        nb.cells = cells
        return nb, resources


def key_points_html(question: Question) -> str:
    """The grader's note for one question, as HTML (markdown would mangle N_d and the like)."""
    items = "".join(f"<li>{html.escape(k)}</li>" for k in question.key_points)
    return (f'<div class="rubric-key-points" style="border-left: 4px solid #1565c0; background: #e3f2fd; '
            f'padding: 0.5em 1em;"><p><strong>评分要点 · {question.id}（{format_points(question.points)} 分，'
            f'仅评分者可见）</strong></p><ul>{items}</ul>'
            f'<p>给分规则：{html.escape(question.partial_credit)}</p></div>')
