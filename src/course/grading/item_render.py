"""Item analysis written out: reports/lessonNN-items.csv and -items.json, and the HTML section (with its two
pictures, inline SVG drawn here: nothing fetched, readable on a 390 px phone) that the lesson's report and the
semester report end with. Nothing here names a student: examples arrive anonymised."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from html import escape
from importlib import resources
from pathlib import Path

import jinja2
from markupsafe import Markup

from course.config import load_config
from course.fileio import write_atomic
from course.grading.item_analysis import Analysis, ItemFiles, ItemRow, analyse_lesson
from course.grading.item_data import LEFT_OUT, NothingToAnalyse
from course.grading.item_stats import LOW_DISCRIMINATION, RELIABLE_N, UPPER_LOWER_SHARE

COLUMNS = (
    "item",
    "kind",
    "max_points",
    "n",
    "mean",
    "facility",
    "sd",
    "discrimination",
    "upper_lower",
    "alpha_if_deleted",
    "flags",
)
PLOTTED = ("code", "question", "veto")  # checks are many: the table lists them, the picture does not


def number(value: float | None) -> str:
    """A figure for the CSV: 12 significant digits, empty when undefined (the flags say why)."""
    return "" if value is None else format(value, ".12g")


def render_csv(analysis: Analysis) -> str:
    """One row per item: code items each followed by its checks, then questions, then veto items."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in analysis.rows:
        f = row.figures
        writer.writerow(
            [
                row.item,
                row.kind,
                number(f.max_points),
                f.n,
                number(f.mean),
                number(f.facility),
                number(f.sd),
                number(f.discrimination),
                number(f.upper_lower),
                number(f.alpha_if_deleted),
                "; ".join(map(str, row.flags)),
            ]
        )
    return out.getvalue()


def _row_json(row: ItemRow) -> dict:
    """One item as the JSON report holds it."""
    figures = asdict(row.figures)
    figures.pop("no_variance")
    return {
        "item": row.item,
        "kind": row.kind,
        "title": row.title,
        **({"code_item": row.parent, "hidden": row.hidden} if row.kind == "check" else {}),
        **figures,
        "flags": [{"flag": f.code, "rule": f.rule} for f in row.flags],
    }


def render_json(analysis: Analysis) -> str:
    """The test-level figures, every item, the misconceptions (reteach first) and any movement between releases."""
    data = {
        "lesson": analysis.lesson,
        "test": asdict(analysis.test),
        "unreliable": analysis.unreliable,
        "left_out": analysis.left_out,
        "items": [_row_json(r) for r in analysis.rows],
        "misconceptions": [asdict(m) for m in analysis.misconceptions],
        "releases": [
            {"version": v, "n": n, "items": [_row_json(r) for r in rows if r.kind != "check"]}
            for v, n, rows in analysis.versions
        ],
    }
    return json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def write_item_reports(
    course_root: Path, lesson: str, *, autograder: Path | None = None, out_dir: Path | None = None
) -> ItemFiles:
    """Analyse the lesson and write reports/<lesson>-items.csv and -items.json (each replaced atomically)."""
    root = Path(course_root)
    out = Path(out_dir or Path(autograder or root / load_config(root).autograder_dir) / "reports")
    analysis = analyse_lesson(root, lesson, autograder=autograder, out_dir=out)
    csv_text, json_text = render_csv(analysis), render_json(analysis)
    return ItemFiles(
        write_atomic(out / f"{lesson}-items.csv", csv_text),
        write_atomic(out / f"{lesson}-items.json", json_text),
        analysis,
    )


# ---------------------------------------------------------------- pictures


def scatter_svg(rows: tuple[ItemRow, ...], title_id: str) -> str:
    """Facility (x, 0–1) against discrimination (y, −1–1), one dot per item; flagged items labelled."""
    width, height, left, top, plot_w, plot_h = 360, 280, 40, 24, 300, 200
    x = lambda v: left + v * plot_w  # noqa: E731
    y = lambda v: top + (1 - v) / 2 * plot_h  # noqa: E731
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{width * 1.5}px" role="img" aria-labelledby="{title_id}" class="item-scatter">'
        f'<title id="{title_id}">每道题的难度（得分率）与区分度：左下角的题要先看</title>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#9e9e9e"/>',
        f'<rect x="{left}" y="{y(LOW_DISCRIMINATION)}" width="{plot_w}" '
        f'height="{y(-1) - y(LOW_DISCRIMINATION)}" fill="#fdecea"/>',
        f'<line x1="{left}" x2="{left + plot_w}" y1="{y(0)}" y2="{y(0)}" stroke="#757575" stroke-dasharray="3 3"/>',
    ]
    for v in (-1, 0, LOW_DISCRIMINATION, 1):
        parts.append(f'<text x="{left - 4}" y="{y(v) + 4}" text-anchor="end" font-size="11">{v:g}</text>')
    for v in (0, 0.5, 1):
        parts.append(f'<text x="{x(v)}" y="{top + plot_h + 14}" text-anchor="middle" font-size="11">{v:g}</text>')
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{top + plot_h + 30}" text-anchor="middle" font-size="12">'
        f"得分率（facility）</text>"
        f'<text x="12" y="{top + plot_h / 2}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 12 {top + plot_h / 2})">区分度（discrimination）</text>'
    )
    labels: dict[tuple[float, float], list[str]] = {}  # flagged items drawn on the same spot share one label
    for row in rows:
        f = row.figures
        if row.kind not in PLOTTED or f.facility is None or (row.kind == "veto" and f.facility >= 1):
            continue  # checks are listed in the table; a veto nobody got is nothing to look at
        d = 0.0 if f.discrimination is None else f.discrimination  # no variance: drawn on the zero line, hollow
        flagged = [fl for fl in row.flags if fl.code != "unreliable"]
        colour = "#c62828" if flagged else "#1565c0"
        fill = "none" if f.discrimination is None else colour
        parts.append(
            f'<circle class="item-dot" data-item="{escape(row.item)}" cx="{x(f.facility):.1f}" '
            f'cy="{y(d):.1f}" r="4" fill="{fill}" stroke="{colour}"><title>{escape(row.item)}</title>'
            f"</circle>"
        )
        if flagged:
            labels.setdefault((round(f.facility, 2), round(d, 2)), []).append(row.item)
    for (fx, d), names in labels.items():
        anchor, dx = ("end", -6) if fx > 0.6 else ("start", 6)
        parts.append(
            f'<text class="item-label" x="{x(fx) + dx:.1f}" y="{y(d) - 6:.1f}" text-anchor="{anchor}" '
            f'font-size="11" fill="#c62828">{escape("、".join(names))}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def misconception_svg(analysis: Analysis, title_id: str) -> str:
    """One bar per misconception or veto hint: how many students, reteach first."""
    entries = analysis.misconceptions
    width, row_h, left = 360, 36, 8
    bar_w = width - 2 * left - 40
    most = max([m.students for m in entries] + [1])
    height = row_h * len(entries) + 8
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{width * 1.5}px" role="img" aria-labelledby="{title_id}" class="mistake-bars">'
        f'<title id="{title_id}">每个误区与一票否决提示涉及的学生人数（共 {analysis.test.n} 人）</title>'
    ]
    for i, m in enumerate(entries):
        top = 4 + i * row_h
        length = bar_w * m.students / most
        label = m.name if len(m.name) <= 26 else m.name[:25] + "…"
        parts.append(
            f'<text x="{left}" y="{top + 12}" font-size="12">{escape(label)}</text>'
            f'<rect class="mistake-bar" data-id="{escape(m.id)}" data-students="{m.students}" x="{left}" '
            f'y="{top + 16}" width="{length:.1f}" height="14" '
            f'fill="{"#c62828" if m.kind == "misconception" else "#ef6c00"}"/>'
            f'<text x="{left + length + 4:.1f}" y="{top + 28}" font-size="12">{m.students}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


# ---------------------------------------------------------------- the HTML section


def render_section(analysis: Analysis | None, *, lesson: str, reason: str = "", id_prefix: str = "items") -> str:
    """The item analysis section the lesson report ends with (REASON: why there is none, when ANALYSIS is None)."""
    template = resources.files("course.grading").joinpath("templates", "item_section.html").read_text("utf-8")
    return (
        _environment()
        .from_string(template)
        .render(
            a=analysis,
            lesson=lesson,
            reason=reason,
            prefix=id_prefix,
            reliable_n=RELIABLE_N,
            left_out_words=LEFT_OUT,
            low=LOW_DISCRIMINATION,
            share=UPPER_LOWER_SHARE,
            scatter=Markup(scatter_svg(analysis.rows, f"{id_prefix}-scatter-title")) if analysis else "",
            bars=Markup(misconception_svg(analysis, f"{id_prefix}-bars-title"))
            if analysis and analysis.misconceptions
            else "",
        )
    )


def _environment() -> jinja2.Environment:
    """Jinja with the figures' filters: two decimals (or —), a percentage."""
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["fig"] = lambda v, digits=2: "—" if v is None else f"{v:.{digits}f}"
    env.filters["pct"] = lambda v: "—" if v is None else f"{v * 100:.0f}%"
    return env


def semester_section(lessons: list[tuple[str, Analysis | None, str]]) -> str:
    """The semester report's section: per lesson (name, analysis or None, why none) facility and discrimination
    per item, and per release when a lesson was graded against more than one."""
    template = resources.files("course.grading").joinpath("templates", "item_semester.html").read_text("utf-8")
    return _environment().from_string(template).render(lessons=lessons, reliable_n=RELIABLE_N)


def analyse_or_why(course_root, lesson: str, **where) -> tuple[Analysis | None, str]:
    """The lesson's analysis, or None and why there is none yet (no graded submission it can use)."""
    try:
        return analyse_lesson(course_root, lesson, **where), ""
    except NothingToAnalyse as exc:
        return None, exc.message


def lesson_section(course_root, lesson: str, *, autograder=None, out_dir=None) -> str:
    """The section for the lesson's own HTML report: the analysis, or why there is none yet."""
    analysis, reason = analyse_or_why(course_root, lesson, autograder=autograder, out_dir=out_dir)
    return render_section(analysis, lesson=lesson, reason=reason)
