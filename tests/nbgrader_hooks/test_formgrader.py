"""Graders see the rubric's 要点 below each answer in formgrader; students' feedback never does."""

from __future__ import annotations

import re
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
        nb.cells.append(
            nbformat.v4.new_markdown_cell(
                f"answer of {qid}",
                metadata={
                    "nbgrader": {
                        "grade_id": f"answer-{qid}",
                        "grade": True,
                        "solution": True,
                        "points": 2,
                        "schema_version": 3,
                    }
                },
            )
        )
    nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
    return nb


def _formgrader_resources() -> dict:
    """The resources formgrader's SubmissionHandler passes to its exporter."""
    return {
        "assignment_id": "lesson05",
        "notebook_id": "lesson05",
        "submission_id": "0123",
        "index": 0,
        "total": 1,
        "base_url": "/",
        "student": "ada",
        "last_name": None,
        "first_name": None,
        "notebook_path": "autograded/ada/lesson05/lesson05.ipynb",
    }


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


WRONG_Q1 = "ZeRO-3 把参数、梯度、优化器状态都分片了，激活也可以按 N_d 分片，所以 N_d 越大显存越小。"


def _graded_submission() -> nbformat.NotebookNode:
    """The submission above with a Q1 answer that reads like a veto item and the code item's test cell."""
    nb = _submission()
    nb.cells[1].source = WRONG_Q1
    nb.cells.insert(
        0,
        nbformat.v4.new_code_cell(
            "# the formulas test",
            metadata={
                "nbgrader": {
                    "grade_id": "test-formulas",
                    "grade": True,
                    "solution": False,
                    "points": 1,
                    "schema_version": 3,
                }
            },
        ),
    )
    return nb


def _hint_exporter(tmp_path) -> HTMLExporter:
    """An exporter with the course's grader steps, reading a grade report in which 'ada' got a diagnosis."""
    import json

    diagnosis = {
        "id": "zero2-shards-params",
        "name": "ZeRO-2 把参数也分片了",
        "explanation": "…",
        "evidence": "zero_memory_per_gpu(7_000_000_000, 8, 2) == 14_000_000_000",
        "veto": "shard-target",
    }
    report = {
        "ada": {
            "verdicts": {
                "formulas": {"passed": False, "reason": "", "diagnoses": [diagnosis]},
                "comm-volume": {"passed": True, "reason": "", "diagnoses": []},
            }
        }
    }
    (tmp_path / "lesson05-grade.json").write_text(json.dumps(report, ensure_ascii=False), "utf-8")
    config = Config()
    config.HTMLExporter.preprocessors = [
        "course.nbgrader_hooks.formgrader.GraderHints",
        "course.nbgrader_hooks.formgrader.RubricKeyPoints",
    ]
    config.RubricKeyPoints.rubrics_dir = config.GraderHints.rubrics_dir = str(RUBRICS)
    config.GraderHints.lessons_dir = str(ROOT / "lessons")
    config.GraderHints.reports_dir = str(tmp_path)
    return HTMLExporter(config=config)


def test_graders_see_the_veto_hints_below_the_answer_and_the_diagnosis_below_the_code_items_test(tmp_path):
    from course.hints.find import find_veto_hints
    from course.hints.vocabulary import lesson_vocabulary

    page, _ = _hint_exporter(tmp_path).from_notebook_node(_graded_submission(), resources=_formgrader_resources())
    hints = find_veto_hints(WRONG_Q1, lesson_vocabulary(ROOT / "lessons", "lesson05"), question="Q1")
    assert "activation-shard" in {h.veto_id for h in hints}
    note = page.index("评分提示 · Q1")
    assert page.index(WRONG_Q1) < page.index("评分要点 · Q1") < note < page.index("answer of Q2")
    for hint in hints:
        assert f'data-veto="{hint.veto_id}"' in page[note : page.index("answer of Q2")]
    assert page.count('class="grader-hints"') == 1  # the other answers draw none
    diagnosis = page.index('class="code-diagnosis" data-veto="shard-target"')
    assert page.index("# the formulas test") < diagnosis < page.index(WRONG_Q1)
    assert (
        "ZeRO-2 把参数也分片了 · 可能的一票否决项 <strong>shard-target</strong>："
        "zero_memory_per_gpu(7_000_000_000, 8, 2) == 14_000_000_000"
    ) in page
    assert page.count('class="code-diagnosis"') == 1  # passed items get none


def test_students_feedback_gets_no_hints_no_diagnoses_but_the_courses_mathjax(tmp_path):
    exporter = _hint_exporter(tmp_path)
    exporter.register_preprocessor("course.nbgrader_hooks.formgrader.OfflineScripts", enabled=True)
    exporter.config.OfflineScripts.project_root = str(ROOT)
    page, resources = exporter.from_notebook_node(_graded_submission(), resources={})
    assert "评分提示" not in page and "代码诊断" not in page
    scripts = resources["course_scripts"]  # math offline on feedback pages too, without formgrader's MathJax 2 shim
    assert len(scripts) == 2 and "MathJax" in scripts[1] and not any("MathJax.Hub" in s for s in scripts)


def test_formgrader_pages_inline_the_courses_mathjax_and_mermaid_only_where_diagrams_are(tmp_path):
    from course.nbgrader_hooks.formgrader import OfflineScripts

    steps = OfflineScripts(project_root=str(ROOT))
    _, plain = steps.preprocess(_submission(), _formgrader_resources())
    assert len(plain["course_scripts"]) == 3 and "MathJax" in plain["course_scripts"][1]
    drawn = _submission()
    drawn.cells.insert(0, nbformat.v4.new_markdown_cell("```mermaid\ngraph LR\n  A --> B\n```"))
    _, with_diagram = steps.preprocess(drawn, _formgrader_resources())
    assert len(with_diagram["course_scripts"]) == 6 and "mermaid" in with_diagram["course_scripts"][3]
    assert "COURSE_MERMAID" in with_diagram["course_scripts"][4]  # the pages' look for diagrams, before course.js
    assert not any(re.search(r"</script", s, re.I) for s in with_diagram["course_scripts"])
    _, missing = OfflineScripts(project_root=str(tmp_path)).preprocess(_submission(), _formgrader_resources())
    assert missing["course_scripts"] == []


def test_a_script_inlined_in_the_page_cannot_end_its_element():
    from course.nbgrader_hooks.formgrader import inline_script

    assert inline_script('s = "</script><b>";') == 's = "<\\/script><b>";'
