"""Beside each answer in formgrader, the evidence `course similarity` found linking it to another student's.

`course similarity lessonNN` writes reports/<lesson>-similarity.json (per student, per nbgrader cell: the other
student, the reason, the score and both texts with the shared spans marked); this preprocessor puts each piece
below that cell for graders only, as the veto hints are shown (course.nbgrader_hooks.formgrader). It reads the
file only: evidence is computed once for the class, not per page, and never sent anywhere.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Unicode

from course.nbgrader_hooks.formgrader import HINT_STYLE, for_graders, insert_after


class SimilarityEvidence(Preprocessor):
    """After each cell with evidence of copying, a note with the other student, the reason and the spans."""

    reports_dir = Unicode("reports", help="Folder where `course similarity` writes <assignment>-similarity.json.").tag(
        config=True
    )

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        """Graders only; nothing shown when `course similarity` has not been run for the lesson."""
        if not for_graders(resources):
            return nb, resources
        path = Path(self.reports_dir) / f"{resources['assignment_id']}-similarity.json"
        if not path.is_file():
            return nb, resources
        try:
            found = json.loads(path.read_text("utf-8")).get(resources["student"], {})
        except (OSError, ValueError) as exc:
            self.log.error("similarity evidence not shown: cannot read %s: %s", path, exc)
            return nb, resources
        insert_after(
            nb, {cell: [evidence_html(e) for e in items] for cell, items in found.items()}, "similarity-evidence"
        )
        return nb, resources


def evidence_html(e: dict) -> str:
    """One piece of evidence as a grader's note: a hint to compare two answers, never a decision."""
    return (
        f'<div class="similarity-evidence" data-other="{html.escape(e["other"])}" '
        f'data-kind="{html.escape(e["kind"])}" {HINT_STYLE}><p><strong>相似度证据 '
        f"· 与 {html.escape(e['other'])}（{e['score']:.2f}，只供评分者参考，"
        f'不是判定）</strong>：{html.escape(e["reason"])}</p><table style="width:100%;table-layout:fixed"><tr>'
        f"<th>本答案</th><th>{html.escape(e['other'])}</th></tr><tr>"
        f'<td><pre style="white-space:pre-wrap">{e["mine_html"]}</pre></td>'
        f'<td><pre style="white-space:pre-wrap">{e["theirs_html"]}</pre></td></tr></table></div>'
    )
