"""Write the ranked pairs as CSV (one row per piece of evidence) and HTML (the spans side by side, highlighted)."""

from __future__ import annotations

import csv
import io
import json
from html import escape
from pathlib import Path

from course.similarity.normalise import Span
from course.similarity.rank import Pair

TEMPLATES = Path(__file__).resolve().parent / "templates"
CSV_COLUMNS = ("rank", "student_a", "student_b", "pair_score", "kind", "item", "evidence_score", "reason")


def render_csv(pairs: list[Pair]) -> str:
    """One row per piece of evidence, pairs in rank order."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for i, p in enumerate(pairs, 1):
        for e in p.evidence:
            writer.writerow((i, p.a, p.b, f"{p.score:.3f}", e.kind, e.item, f"{e.score:.3f}", e.reason))
    return out.getvalue()


def highlight(text: str, spans: tuple[Span, ...]) -> str:
    """TEXT as HTML with SPANS marked."""
    out, last = [], 0
    for start, end in spans:
        out += [escape(text[last:start]), "<mark>", escape(text[start:end]), "</mark>"]
        last = end
    return "".join(out) + escape(text[last:])


def render_section(pairs: list[Pair]) -> str:
    """The HTML section of ranked pairs, as the similarity page, the lesson report and formgrader show it."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    return env.get_template("similarity_section.html").render(pairs=pairs, highlight=highlight)


def render_html(assignment: str, pairs: list[Pair], students: int) -> str:
    """The stand-alone page autograder/reports/<lesson>-similarity.html."""
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    return env.get_template("similarity.html").render(
        assignment=assignment, students=students, section=Markup(render_section(pairs))
    )


def render_json(pairs: list[Pair], question_ids: tuple[str, ...], answer_cell: str) -> str:
    """Per student, per nbgrader cell (answer-Qn, or the exercise cell), the evidence formgrader shows beside it."""
    out: dict[str, dict[str, list[dict]]] = {}
    for p in pairs:
        for e in p.evidence:
            cell = f"answer-{e.item}" if e.item in question_ids else answer_cell
            for me, other, mine, theirs in (
                (p.a, p.b, highlight(e.text_a, e.spans_a), highlight(e.text_b, e.spans_b)),
                (p.b, p.a, highlight(e.text_b, e.spans_b), highlight(e.text_a, e.spans_a)),
            ):
                out.setdefault(me, {}).setdefault(cell, []).append(
                    {
                        "other": other,
                        "pair_score": p.score,
                        "kind": e.kind,
                        "item": e.item,
                        "score": e.score,
                        "reason": e.reason,
                        "mine_html": mine,
                        "theirs_html": theirs,
                    }
                )
    return json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
