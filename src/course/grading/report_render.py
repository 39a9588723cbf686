"""The report's two files: the CSV (one row per submission) and the self-contained HTML page with its histogram."""

from __future__ import annotations

import csv
import io
import math
from importlib import resources

import jinja2
from markupsafe import Markup

from course.grading.report_model import FAIL, INCOMPLETE, PASS, Hints, SimilarityInReport, StudentReport
from course.grading.rubric import Rubric, format_points, render_text


def render_csv(
    rubric: Rubric,
    students: tuple[StudentReport, ...],
    hints: Hints,
    problems: dict[str, tuple[str, ...]],
    similarity: SimilarityInReport | None = None,
) -> str:
    """student, each code item, Q1..Qn, total, veto ids, veto hint ids, result, why grading flagged it, the
    strongest similar pair — one row per submission."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "student",
            *(c.id for c in rubric.code_items),
            *(q.id for q in rubric.questions),
            "total",
            "vetoes",
            "veto_hints",
            "result",
            "flags",
            "similar_pair",
            "late_penalty",
            "late",
        ]
    )
    for s in students:
        items = s.submission.code + s.submission.questions
        writer.writerow(
            [
                s.submission.student,
                *("" if i.score is None else format_points(i.points) for i in items),
                format_points(s.submission.total),
                ";".join(sorted({v.veto for v in s.vetoes})),
                ";".join(hints.veto_ids(s.submission.student)),
                s.result,
                " | ".join(problems.get(s.submission.student, ())),
                similarity.strongest.get(s.submission.student, "") if similarity else "",
                format_points(s.submission.late.penalty) if s.submission.late else "",
                s.submission.late.reason(s.submission.late_policy) if s.submission.late else "",
            ]
        )
    return out.getvalue()


def render_html(
    rubric: Rubric,
    students: tuple[StudentReport, ...],
    hints: Hints,
    problems: dict[str, tuple[str, ...]],
    code_errors: dict[str, dict[str, tuple[str, ...]]],
    similarity: SimilarityInReport | None = None,
    item_analysis: str = "",
) -> str:
    """A self-contained page: class summary with histogram and pass rate, then one section per student.

    PROBLEMS (student → why grading flagged the submission) explain a flag, a corrected score, or a damaged file's
    zero; CODE_ERRORS (student → item → errors) say why a code item whose cells raised failed.
    """
    template = resources.files("course.grading").joinpath("templates", "report.html").read_text("utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["points"] = format_points
    env.filters["rubric"] = lambda text: Markup(render_text(text, "html"))
    graded = [s.submission.total for s in students if not s.submission.pending()]
    counts = {r: sum(s.result == r for s in students) for r in (PASS, FAIL, INCOMPLETE)}
    return env.from_string(template).render(
        rubric=rubric,
        students=students,
        counts=counts,
        graded=len(graded),
        histogram=Markup(histogram_svg(graded, rubric.total, rubric.pass_line)),
        hints={s.submission.student: hints.text.get(s.submission.student, ()) for s in students},
        code_hints={s.submission.student: hints.code.get(s.submission.student, ()) for s in students},
        problems={s.submission.student: problems.get(s.submission.student, ()) for s in students},
        code_errors={s.submission.student: code_errors.get(s.submission.student, {}) for s in students},
        similarity=Markup(similarity.section_html) if similarity else "",
        item_analysis=Markup(item_analysis),
    )


def histogram_svg(totals: list[float], total: float, pass_line: float, title_id: str = "hist-title") -> str:
    """Inline SVG bar chart of totals in one-point bins, with the pass line marked (TITLE_ID: unique per page)."""
    bins = [0] * (int(total) + 1)
    for t in totals:
        bins[min(int(math.floor(t)), int(total))] += 1
    bar, gap, height, top, bottom, left = 36, 8, 160, 40, 40, 16
    tallest = max(bins + [1])
    width = left * 2 + len(bins) * (bar + gap)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + bottom}" '
        f'viewBox="0 0 {width} {top + height + bottom}" role="img" aria-labelledby="{title_id}">'
        f'<title id="{title_id}">总分分布（已完成评分 {len(totals)} 人）</title>'
    ]
    for score, count in enumerate(bins):
        x = left + score * (bar + gap)
        h = height * count / tallest
        y = top + height - h
        colour = "#2e7d32" if score >= pass_line else "#9e9e9e"
        parts.append(
            f'<rect class="bin" data-score="{score}" data-count="{count}" x="{x}" y="{y:.1f}" '
            f'width="{bar}" height="{h:.1f}" fill="{colour}"/>'
        )
        if count:
            parts.append(f'<text x="{x + bar / 2}" y="{y - 4:.1f}" text-anchor="middle" font-size="12">{count}</text>')
        parts.append(
            f'<text x="{x + bar / 2}" y="{top + height + 16}" text-anchor="middle" font-size="12">{score}</text>'
        )
    px = left + pass_line * (bar + gap) - gap / 2
    parts.append(
        f'<line x1="{px}" y1="{top - 24}" x2="{px}" y2="{top + height}" stroke="#c62828" '
        f'stroke-dasharray="4 3"/><text x="{px + 4}" y="{top - 26}" font-size="12" fill="#c62828">'
        f"通过线 {format_points(pass_line)}</text>"
    )
    parts.append(
        f'<text x="{width / 2}" y="{top + height + 34}" text-anchor="middle" font-size="12">'
        f"总分（满分 {format_points(total)}）</text></svg>"
    )
    return "".join(parts)
