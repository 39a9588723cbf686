"""Render one page's commonmark_x to a standalone offline HTML page with pandoc and the variant filter."""

from __future__ import annotations

import re
from pathlib import Path

from course.lesson.variants import Variant, get_variant
from course.site.plan import BuildPlan
from course.tools.pandoc import run_pandoc

# mermaid (2.7 MB) and its options, which the template names: loaded only by a page with a diagram to draw, as Quarto
# loads it only there.
MERMAID_SCRIPTS = re.compile(r'<script defer src="site_libs/mermaid[^"]*"></script>\n')
DIAGRAM = '<pre class="mermaid"'


def filter_metadata(variant: str | Variant) -> list[str]:
    """pandoc's options that tell the page filter what VARIANT shows (as _quarto-NAME.yml tells it under Quarto)."""
    return [
        arg
        for key, value in get_variant(variant).metadata().items()
        for arg in ("-M", f"{key}={str(value).lower() if isinstance(value, bool) else value}")
    ]


def render_page(
    markdown: str,
    *,
    plan: BuildPlan,
    variant: str | Variant,
    title: str,
    lesson_dir: Path,
    toc: bool = True,
    number: int | None = None,
    sidebar: str = "",
    pager: str = "",
) -> str:
    """HTML for one page; math as MathJax reads it (typeset at build time: course.site.typeset_math), diagrams for
    mermaid (loaded only where there is one), code highlighted by pandoc; NUMBER is the page's own lesson (its
    mentions of other lessons link, of itself not); SIDEBAR and PAGER are the site's navigation."""
    variant = get_variant(variant)
    args = [
        "-t",
        "html5",
        "--standalone",
        "--wrap=none",
        "--mathjax",
        "--syntax-highlighting=pygments",
        f"--template={plan.site_files / 'page.html'}",
        f"--lua-filter={plan.lua_filter}",
        *filter_metadata(variant),
        "-M",
        f"course-lesson-dir={lesson_dir}",
        "-M",
        f"title={title}",
        "-M",
        f"pagetitle={title}",
        "-V",
        f"course-title={plan.config.course_title}",
        "-V",
        f"course-variant-label={variant.label}",
        "-V",
        f"course-sidebar={sidebar}",
        "-V",
        f"course-pager={pager}",
    ]
    if number is not None:
        args += ["-M", f"lesson={number}"]
    if toc:
        args += ["--toc", "--toc-depth=3"]
    page = run_pandoc(markdown, args, what=f"{title} ({variant})")
    return page if DIAGRAM in page else MERMAID_SCRIPTS.sub("", page)
