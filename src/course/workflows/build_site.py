"""`course build`: each lesson → student and answer variants → executed notebook and page, as ordered steps.

lesson.qmd → parse_lesson → select_variant → resolve_resources → execute_cells → make_notebook (images embedded)
/ write_page_markdown → render_page → check_markup; then the index page and the site's shared files. The nbgrader
source notebooks (course.assignment.make_source) are written first, so the student site can offer each lesson's
assignment as stock nbgrader releases it (release_assignment). Each variant's site is built in a staging folder and
replaces the old one only when every step succeeded.
"""

from __future__ import annotations

import shutil
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from course.fileio import replace_dir_atomically, write_atomic
from course.lesson.model import Lesson
from course.site.fingerprint import STAMP, is_up_to_date, source_fingerprint
from course.site.plan import BuildPlan, make_plan

# The steps below import nbformat, nbclient and jsonschema (about a second); a build with nothing to do skips them.


@dataclass
class BuildResult:
    """What a build wrote, for the CLI summary and for later steps (nbgrader source)."""

    plan: BuildPlan
    lessons: list[Lesson] = field(default_factory=list)
    pages: list[Path] = field(default_factory=list)
    up_to_date: bool = False


def build_course(root: Path, *, variants: list[str] | None = None) -> BuildResult:
    """Build every lesson into the sites of the chosen variants (default: all)."""
    plan = make_plan(root)
    variants = list(variants or plan.config.variants)
    fingerprint = source_fingerprint(plan, variants)
    if is_up_to_date(plan, variants, fingerprint):
        from course.assignment.make_source import write_assignment_sources

        write_assignment_sources(plan, None)  # only when autograder/source/ is missing or stale
        return BuildResult(plan=plan, up_to_date=True)
    from course.lesson.parse_qmd import parse_lesson
    from course.site.resolve_resources import resolve_resources
    from course.tools.web_assets import locate_web_assets

    draw_figures(plan)
    parsed = [parse_lesson(p) for p in plan.lessons]
    for lesson in parsed:
        resolve_resources(lesson, plan.root)  # a missing image fails before anything runs
    web_assets = locate_web_assets(plan.root)
    result = BuildResult(plan=plan, lessons=parsed)
    from course.assignment.make_source import write_assignment_sources
    from course.workflows.release_assignment import released_assignments

    write_assignment_sources(plan, parsed)
    assignments = released_assignments(plan, [lesson.stem for lesson in parsed]) if "student" in variants else {}
    with ExitStack() as stack:
        for variant in variants:
            staging = stack.enter_context(replace_dir_atomically(plan.site_dir(variant)))
            written = build_variant(plan, parsed, variant, staging, web_assets,
                                    assignments if variant == "student" else {})
            result.pages += [plan.site_dir(variant) / p.relative_to(staging) for p in written]
            write_atomic(staging / STAMP, fingerprint)
    return result


def draw_figures(plan: BuildPlan) -> None:
    """Redraw the figures lessons show when their inputs changed."""
    from course.workflows.draw_figures import ensure_figures

    ensure_figures(plan.root)


def build_variant(plan: BuildPlan, lessons: list[Lesson], variant: str, out: Path, web_assets: dict,
                  assignments: dict | None = None) -> list[Path]:
    """Write one variant's pages, notebooks (lesson and released assignment), images and shared files into OUT."""
    import nbformat

    from course.site.check_markup import check_markup, leftover_in_html, leftover_in_markdown
    from course.site.embed_images import embed_images
    from course.site.execute_cells import execute_cells
    from course.site.make_index import index_markdown
    from course.site.make_notebook import make_notebook
    from course.site.render_page import render_page
    from course.site.resolve_resources import resolve_resources
    from course.site.select_variant import select_variant
    from course.site.unlink_self import unlink_self
    from course.site.write_page_markdown import write_page_markdown
    from course.assignment.make_source import assignment_name

    assignments = assignments or {}
    written = []
    for lesson in lessons:
        view, images = resolve_resources(select_variant(lesson, variant), plan.root)
        outputs = execute_cells(view, cache_dir=plan.cache_dir, kernel=plan.config.kernel,
                                timeout=plan.config.cell_timeout)
        lesson_nb = make_notebook(view, outputs, freeze_hidden_code=True, note_blanks=True)
        notebooks = {f"{lesson.stem}.ipynb": lesson_nb}
        if lesson.stem in assignments:
            notebooks[assignment_name(lesson.stem)] = assignments[lesson.stem]
        for name, nb in notebooks.items():
            embed_images(nb, plan.root, notebook=name)
            unlink_self(nb, name)
            markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
            check_markup(leftover_in_markdown(markdown), source=lesson.path, what=f"{variant}/{name}")
            written.append(write_atomic(out / name, nbformat.writes(nb)))
        page = render_page(write_page_markdown(view, outputs), plan=plan, variant=variant,
                           title=lesson.title, lesson_dir=lesson.path.parent)
        check_markup(leftover_in_html(page), source=lesson.path, what=f"{variant}/{lesson.stem}.html")
        written.append(write_atomic(out / f"{lesson.stem}.html", page))
        for image in images:
            _copy(plan.root / image.project_path, out / image.project_path)
    index = render_page(index_markdown(lessons, variant, {s: assignment_name(s) for s in assignments}), plan=plan,
                        variant=variant, title=plan.config.course_title, lesson_dir=plan.lessons[0].parent, toc=False)
    check_markup(leftover_in_html(index), source=plan.lessons[0], what=f"{variant}/index.html")
    written.append(write_atomic(out / "index.html", index))
    for name in ("course.css", "course.js"):
        _copy(plan.site_files / name, out / "site_libs" / name)
    for asset, path in web_assets.items():
        _copy(path, out / asset.site_path)
    return written


def _copy(src: Path, dst: Path) -> None:
    """Copy one file into the site, creating folders."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
