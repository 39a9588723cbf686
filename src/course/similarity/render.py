"""Write the ranked pairs as CSV (one row per piece of evidence) and HTML (the spans side by side, highlighted)."""

from __future__ import annotations

import csv
import io
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
    return env.get_template("similarity.html").render(assignment=assignment, students=students,
                                                      section=Markup(render_section(pairs)))
