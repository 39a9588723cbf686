"""What graders see in nbgrader's formgrader, beside each answer: the rubric's 要点, the course's veto hints and
the re-check's code diagnoses, with math and diagrams drawn from the course's own offline copies.

Enabled by the course's nbgrader settings (course.nbgrader_hooks.config, loaded by autograder/nbgrader_config.py):
formgrader renders submissions with nbconvert's HTMLExporter, whose preprocessors include these and whose template
is `course_formgrade` (templates/ beside this module): nbgrader's formgrade page, but loading MathJax 3 and mermaid
inline from node_modules instead of MathJax 2 from a CDN. Students' feedback pages use the same exporter class
(with the course_feedback template, see course.nbgrader_hooks.feedback); every step here returns early there, so
feedback never shows them. Graders' notes carry the classes rubric-key-points, grader-hints (data-veto per hint)
and code-diagnosis (data-veto), for the tests and anyone styling them.
"""

from __future__ import annotations

import html
import re
from importlib import resources as package_files
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbformat.v4 import new_markdown_cell
from traitlets import Unicode

from course.grading.rubric import Question, code_grade_id, format_points, load_rubric, question_grade_id

TEMPLATES = Path(__file__).with_name("templates")
MATHJAX_CONFIG = """window.MathJax = {
  tex: { inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]], displayMath: [["$$", "$$"], ["\\\\[", "\\\\]"]],
         processEscapes: true },
  svg: { fontCache: "global" }
};"""
# formgrader's own script (formgrade.js) waits for MathJax 2's startup signal before focusing the first score box;
# MathJax 3 has no Hub, so this tells it when MathJax 3 has typeset the page.
MATHJAX2_SIGNAL = """window.MathJax.Hub = window.MathJax.Hub || { Startup: { signal: { Interest: function (listener) {
  window.MathJax.startup.promise.then(function () { listener("End"); });
} } } };"""


def for_graders(resources: dict) -> bool:
    """Only formgrader's page passes a submission id; students' feedback pages must never show grader notes."""
    return "submission_id" in resources


def insert_after(nb: NotebookNode, notes: dict[str, list[str]], kind: str) -> None:
    """Put each note (HTML) right after the cell with that grade id, as a cell students never receive."""
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        for note in notes.get(cell.metadata.get("nbgrader", {}).get("grade_id"), ()):
            cells.append(new_markdown_cell(note, metadata={"course": kind}))
    nb.cells = cells


class RubricKeyPoints(Preprocessor):
    """After each manually graded answer cell, insert a read-only note with that question's 要点 and 给分规则."""

    rubrics_dir = Unicode("rubrics", help="Folder holding the lessonNN.yml rubrics.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        """Graders only: the 要点 of each question below its answer."""
        if not for_graders(resources):
            return nb, resources
        rubric = load_rubric(Path(self.rubrics_dir) / f"{resources['assignment_id']}.yml")
        insert_after(nb, {question_grade_id(q.id): [key_points_html(q)] for q in rubric.questions}, "rubric-key-points")
        return nb, resources


def key_points_html(question: Question) -> str:
    """The grader's note for one question, as HTML (markdown would mangle N_d and the like)."""
    items = "".join(f"<li>{html.escape(k)}</li>" for k in question.key_points)
    return (
        f'<div class="rubric-key-points" style="border-left: 4px solid #1565c0; background: #e3f2fd; '
        f'padding: 0.5em 1em;"><p><strong>评分要点 · {question.id}（{format_points(question.points)} 分，'
        f"仅评分者可见）</strong></p><ul>{items}</ul>"
        f"<p>给分规则：{html.escape(question.partial_credit)}</p></div>"
    )


class GraderHints(Preprocessor):
    """Beside each answer its veto hints, beside each code item's test the re-check's diagnoses: as `course report`."""

    rubrics_dir = Unicode("rubrics", help="Folder holding the lessonNN.yml rubrics.").tag(config=True)
    lessons_dir = Unicode("lessons", help="Folder of the lessons; lessonNN/veto_hints.yml is the hint vocabulary.").tag(
        config=True
    )
    reports_dir = Unicode(
        "reports", help="Folder where autograde writes <assignment>-grade.json (the re-check's verdicts and diagnoses)."
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        """Graders only: read the hints from the answers in this notebook and the diagnoses from the grade report."""
        from course.grading.report_evidence import read_code_hints, read_grade_report
        from course.hints.find import find_veto_hints
        from course.hints.vocabulary import lesson_vocabulary

        if not for_graders(resources):
            return nb, resources
        rubric = load_rubric(Path(self.rubrics_dir) / f"{resources['assignment_id']}.yml")
        vocabulary = lesson_vocabulary(Path(self.lessons_dir), rubric.lesson)
        questions = {question_grade_id(q.id): q.id for q in rubric.questions}
        notes: dict[str, list[str]] = {}
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in questions:
                found = find_veto_hints(cell.source, vocabulary, question=questions[grade_id])
                notes[grade_id] = [veto_hints_html(questions[grade_id], found)] if found else []
        outcomes = read_grade_report(Path(self.reports_dir) / f"{rubric.lesson}-grade.json", rubric)
        for hint in read_code_hints(outcomes, rubric).get(resources["student"], ()):
            notes.setdefault(code_grade_id(hint.item), []).append(diagnosis_html(hint))
        insert_after(nb, notes, "grader-hints")
        return nb, resources


HINT_STYLE = 'style="border-left: 4px solid #ffb300; background: #fff8e1; padding: 0.5em 1em;"'


def veto_hints_html(question: str, hints) -> str:
    """Sentences of one answer that look like a veto item, each with its veto id and why: a hint, never a decision."""
    items = "".join(
        f'<li class="veto-hint" data-veto="{html.escape(h.veto_id)}"><strong>{html.escape(h.veto_id)}'
        f"</strong>：「{html.escape(h.sentence)}」— {html.escape(h.reason)}</li>"
        for h in hints
    )
    return (
        f'<div class="grader-hints" {HINT_STYLE}><p><strong>评分提示 · {question}（自动检索的可疑句子，只供评分者参考，'
        f"不是判定；确认一票否决请用 course report --veto 记录）</strong></p><ul>{items}</ul></div>"
    )


def diagnosis_html(hint) -> str:
    """One known wrong answer the re-check recognised in a code item, with its evidence (for graders)."""
    veto = f" · 可能的一票否决项 <strong>{html.escape(hint.veto_id)}</strong>" if hint.veto_id else ""
    return (
        f'<div class="code-diagnosis" data-veto="{html.escape(hint.veto_id or "")}" {HINT_STYLE}><p><strong>'
        f"代码诊断 · 「{html.escape(hint.title)}」（复核认出的已知错误，只供评分者参考，不是判定）</strong></p>"
        f"<p>{html.escape(hint.name)}{veto}：{html.escape(hint.evidence)}</p></div>"
    )


class OfflineScripts(Preprocessor):
    """Hand formgrader's and feedback pages the course's MathJax (and mermaid, where there are diagrams) to inline."""

    project_root = Unicode(
        ".", help="The course repository, whose node_modules holds MathJax and mermaid (installed by `make`)."
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        """Both pages fetch nothing from a CDN (feedback drops nbgrader's MathJax 2 tag); a missing library is said."""
        from course.errors import ToolMissing
        from course.figures.diagrams import diagram_sources
        from course.tools.web_assets import locate_web_assets

        try:
            found = {asset.package: path for asset, path in locate_web_assets(Path(self.project_root)).items()}
        except (ToolMissing, OSError) as exc:  # OSError: no package.json, not a course checkout
            self.log.error("formgrader shows math and diagrams as source: %s", exc)
            nb.cells.insert(
                0,
                new_markdown_cell(
                    f'<div class="course-assets-missing" {HINT_STYLE}>公式与图以源码显示：{html.escape(str(exc))}</div>'
                ),
            )
            resources["course_scripts"] = []
            return nb, resources
        scripts = [MATHJAX_CONFIG, found["mathjax"].read_text("utf-8")]
        if for_graders(resources):  # formgrader's own script waits for MathJax 2's signal
            scripts.append(MATHJAX2_SIGNAL)
        if diagram_sources(c.source for c in nb.cells if c.cell_type == "markdown") and not drawn_here(
            nb, resources, found["mermaid"], Path(self.project_root), self.log
        ):
            site = package_files.files("course.site")
            scripts += [
                found["mermaid"].read_text("utf-8"),
                site.joinpath("mermaid-options.js").read_text("utf-8"),
                site.joinpath("course.js").read_text("utf-8"),
            ]
        resources["course_scripts"] = [inline_script(s) for s in scripts]
        return nb, resources


def drawn_here(nb: NotebookNode, resources: dict, mermaid_js: Path, project_root: Path, log) -> bool:
    """For a feedback page: its diagrams as SVG, as `course build` drew them (course.nbgrader_hooks.drawn_diagrams),
    so the page needs no mermaid script; False for formgrader (the grader's browser draws them) or where they cannot
    be drawn."""
    from course.figures.diagrams import diagram_store
    from course.nbgrader_hooks.drawn_diagrams import draw_into

    if for_graders(resources):
        return False
    try:
        draw_into(nb.cells, mermaid_js, diagram_store(project_root))
    except Exception as exc:  # no Chromium or Playwright (ToolMissing), or Playwright's own Error: draw in the browser
        log.warning("feedback inlines mermaid to draw its diagrams (%s)", exc)
        return False
    return True


def inline_script(source: str) -> str:
    """JavaScript made safe to sit inside <script>…</script> (a '</script' in a string would end the element)."""
    return re.sub(r"</(script)", r"<\\/\1", source, flags=re.I)


def use_course_templates(c) -> None:
    """Render formgrader's pages with course_formgrade and feedback with course_feedback (templates/ here).

    Both extend nbgrader's own templates, so nbgrader's template folder is searched by name too. Feedback is set
    under GenerateFeedback, which wins over the HTMLExporter settings formgrader reads (and which
    GenerateFeedback would otherwise replace with its own folder of bootstrap's CSS, still listed here).
    """
    from nbgrader.server_extensions.formgrader import handlers

    nbgrader_templates = str(Path(handlers.template_path).resolve())
    bootstrap_css = str(Path(handlers.template_path).parent / "static" / "node_modules" / "bootstrap" / "dist" / "css")
    c.HTMLExporter.extra_template_basedirs = [nbgrader_templates, str(TEMPLATES)]
    c.HTMLExporter.extra_template_paths = [nbgrader_templates]
    c.HTMLExporter.template_name = "course_formgrade"
    c.GenerateFeedback.HTMLExporter.template_name = "course_feedback"
    c.GenerateFeedback.HTMLExporter.extra_template_paths = [bootstrap_css, nbgrader_templates]
