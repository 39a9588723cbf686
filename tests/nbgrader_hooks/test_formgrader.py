"""Graders see the rubric's 要点 below each answer in formgrader; students' feedback never does."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbconvert.exporters import HTMLExporter
from traitlets.config import Config

from course.grading.rubric import load_rubric

ROOT = Path(__file__).resolve().parents[2]
RUBRICS = ROOT / "autograder" / "rubrics"


def _submission() -> nbformat.NotebookNode:
    """An autograded notebook: each question's prompt, the student's answer cell, then a code cell."""
    nb = nbformat.v4.new_notebook()
    for qid in ("Q1", "Q2", "Q3"):
        nb.cells.append(nbformat.v4.new_markdown_cell(f"### {qid}"))
        nb.cells.append(nbformat.v4.new_markdown_cell(
            f"answer of {qid}", metadata={"nbgrader": {"grade_id": f"answer-{qid}", "grade": True, "solution": True,
                                                       "points": 2, "schema_version": 3}}))
    nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
    return nb


def _formgrader_resources() -> dict:
    """The resources formgrader's SubmissionHandler passes to its exporter."""
    return {"assignment_id": "lesson05", "notebook_id": "lesson05", "submission_id": "0123", "index": 0,
            "total": 1, "base_url": "/", "student": "ada", "last_name": None, "first_name": None,
            "notebook_path": "autograded/ada/lesson05/lesson05.ipynb"}


def test_formgrader_shows_each_questions_key_points_after_its_answer(tmp_path, monkeypatch):
    # The exporter is configured the way formgrader builds it: nbgrader reads nbgrader_config.py from the course.
    from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension

    # The course's own nbgrader_config.py, in a course root holding the rubrics.
    shutil.copy(RUBRICS.parent / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    shutil.copytree(RUBRICS, tmp_path / "rubrics")
    monkeypatch.chdir(tmp_path)
    formgrader = FormgradeExtension()
    formgrader.initialize([])
    exporter = HTMLExporter(config=formgrader.config)
    page, _ = exporter.from_notebook_node(_submission(), resources=_formgrader_resources())
    rubric = load_rubric(RUBRICS / "lesson05.yml")
    positions = []
    for q in rubric.questions:
        answer = page.index(f"answer of {q.id}")
        note = page.index(f"评分要点 · {q.id}（2 分，仅评分者可见）")
        positions += [answer, note]
        assert all(point in page[note:] for point in q.key_points)
        assert f"给分规则：{q.partial_credit}" in page
    assert positions == sorted(positions)  # Q1 answer, Q1 要点, Q2 answer, Q2 要点, …


def test_feedback_pages_do_not_show_key_points():
    config = Config()
    config.HTMLExporter.preprocessors = ["course.nbgrader_hooks.formgrader.RubricKeyPoints"]
    config.RubricKeyPoints.rubrics_dir = str(RUBRICS)
    page, _ = HTMLExporter(config=config).from_notebook_node(_submission(), resources={})
    assert "answer of Q1" in page and "评分要点" not in page
