"""`course build`: each lesson → student and answer variants → executed notebook and page, as ordered steps.

lesson.qmd → parse_lesson → select_variant → resolve_resources → execute_cells → make_notebook (images embedded)
/ write_page_markdown → render_page (with make_navigation's lesson list and previous/next links) → check_markup; then
the index page, the search index of every page (make_search_index) and the site's shared files. The nbgrader
source notebooks (course.assignment.make_source) are written first, so the student site can offer each lesson's
assignment as stock nbgrader releases it (release_assignment). Each variant's site is built in a staging folder and
replaces the old one only when every step succeeded.

That is the pandoc renderer (build_variant). The Quarto renderer (choose_renderer; course.workflows.quarto_site)
swaps only the page step: one `quarto render --profile VARIANT` of the whole variant into the same staging folder,
whose project scripts write the same notebooks by the same code; the stamp records which renderer built a site.

Only the lessons whose inputs changed since a site's last build are rebuilt (course.site.fingerprint); the others'
files are hard-linked from the old site into the new one, so they are not rewritten. The index, the search index
and the shared files are always remade from every lesson.
"""

from __future__ import annotations

import os
import shutil
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from course.fileio import project_lock, replace_dir_atomically, write_atomic
from course.lesson.model import Lesson
from course.site.fingerprint import (STAMP, lesson_fingerprints, read_stamp, read_stamp_renderer, read_steps,
                                     stale_lessons, stamp_text)
from course.site.lite_site import lite_fingerprint
from course.site.plan import BuildPlan, make_plan

UNRELEASED = "unreleased"  # a stamp's entry for a lesson whose assignment a build left unreleased: stale on purpose

# The steps below import nbformat, nbclient and jsonschema (about a second); a build with nothing to do skips them.


@dataclass
class BuildResult:
    """What a build wrote, for the CLI summary and for later steps (nbgrader source)."""

    plan: BuildPlan
    lessons: list[Lesson] = field(default_factory=list)  # every lesson, parsed (the index lists them all)
    pages: list[Path] = field(default_factory=list)  # the files written; a kept lesson's are not among them
    up_to_date: bool = False
    rebuilt: dict[str, list[str]] = field(default_factory=dict)  # variant -> the lessons rebuilt in it
    unreleased: list[str] = field(default_factory=list)  # rebuilt without releasing their assignment (release=False)


def build_course(root: Path, *, variants: list[str] | None = None, release: bool = True,
                 renderer: str | None = None) -> BuildResult:
    """Build the lessons whose inputs changed into the sites of the chosen variants (default: all).

    RELEASE False skips stock nbgrader's release of the rebuilt lessons' assignments (seconds each; `course
    preview` shows the page first): the student site keeps their old assignment notebooks, and its stamp leaves
    those lessons stale, so the next build with RELEASE releases and rebuilds them. RENDERER (quarto, pandoc or
    auto; default: [tool.course] renderer) chooses what renders the pages (choose_renderer)."""
    plan = make_plan(root)
    with project_lock(plan.cache_dir, what="course build"):
        return _build(plan, list(variants or plan.config.variants), release, choose_renderer(plan, renderer))


def _build(plan: BuildPlan, variants: list[str], release: bool, renderer: Renderer) -> BuildResult:
    """build_course's work, with the project's lock held."""
    fingerprints = lesson_fingerprints(plan)
    steps = {"lite": lite_fingerprint(plan)}  # the in-browser notebooks' own inputs (a lite/ edit rebuilds no page)
    stale = {v: stems for v in variants
             if (stems := _stale(plan, v, fingerprints, renderer.label)) or read_steps(plan.site_dir(v)) != steps}
    if not stale:
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
    result = BuildResult(plan=plan, lessons=parsed, rebuilt=stale)
    from course.assignment.make_source import write_assignment_sources
    from course.lesson.notebook_names import assignment_notebook
    from course.workflows.release_assignment import assignment_lessons, released_assignments

    changed = {stem for stems in stale.values() for stem in stems}
    write_assignment_sources(plan, [lesson for lesson in parsed if lesson.stem in changed])
    write_assignment_sources(plan, None)  # the others' too, when autograder/source/ lacks them
    student = stale.get("student", [])
    assignments = released_assignments(plan, student) if release and not renderer.whole_site else {}
    result.unreleased = [] if release or renderer.whole_site else assignment_lessons(plan, student)
    with ExitStack() as stack:
        for variant, stems in stale.items():
            site = plan.site_dir(variant)
            staging = stack.enter_context(replace_dir_atomically(site))
            unreleased = result.unreleased if variant == "student" else []
            for stem in unreleased:
                _keep(site / assignment_notebook(stem), staging / assignment_notebook(stem))
            written = renderer.render(plan, parsed, variant, staging, web_assets,
                                      assignments if variant == "student" else {}, rebuild=set(stems), old=site)
            result.pages += [site / p.relative_to(staging) for p in written]
            write_atomic(staging / STAMP, stamp_text({**fingerprints, **dict.fromkeys(unreleased, UNRELEASED)},
                                                     renderer=renderer.label, steps=steps))
    return result


@dataclass(frozen=True)
class Renderer:
    """What turns a variant's lessons into pages: pandoc, one page at a time by the course's own steps
    (build_variant), or Quarto, the whole site in one `quarto render` whose project hooks add the course's files
    (WHOLE_SITE: it renders every page and writes the notebooks itself)."""

    name: str
    version: str
    render: Callable[..., list[Path]]  # (plan, lessons, variant, out, web_assets, assignments, *, rebuild, old)
    whole_site: bool

    @property
    def label(self) -> str:
        """Name and version, as the site's stamp records them."""
        return f"{self.name} {self.version}"


RENDERERS = ("quarto", "pandoc")


def choose_renderer(plan: BuildPlan, asked: str | None) -> Renderer:
    """The renderer ASKED for (quarto, pandoc or auto; None: [tool.course] renderer); auto is Quarto when a
    Quarto >= 1.7 is found ($QUARTO, [tool.course] quarto, PATH), else pandoc."""
    from course.config import setting_error
    from course.tools.pandoc import pandoc_version
    from course.tools.quarto import find_quarto, quarto_available

    asked = asked or plan.config.renderer
    if asked not in ("auto", *RENDERERS):
        raise setting_error(plan.root, "renderer", f"expected auto, {' or '.join(RENDERERS)}, got {asked!r}")
    quarto = quarto_available(plan.config.quarto) if asked == "auto" else None
    if asked == "quarto" or quarto:
        quarto = quarto or find_quarto(plan.config.quarto)

        def render_quarto(plan, lessons, variant, out, web_assets, assignments, **_) -> list[Path]:
            from course.workflows.quarto_site import render_variant

            return render_variant(plan, variant, out, quarto)
        return Renderer("quarto", quarto.version, render_quarto, whole_site=True)
    return Renderer("pandoc", pandoc_version(), build_variant, whole_site=False)


def _stale(plan: BuildPlan, variant: str, fingerprints: dict[str, str], renderer: str) -> list[str]:
    """The lessons of one variant to rebuild: their inputs changed since its stamp, or their page is gone; all of
    them when another renderer (or another version of it) built the site."""
    site = plan.site_dir(variant)
    if read_stamp_renderer(site) != renderer:
        return list(fingerprints)
    changed = set(stale_lessons(read_stamp(site), fingerprints))
    pages = (site, site / plan.config.lessons_dir)  # the pandoc site's layout, Quarto's
    return [stem for stem in fingerprints if stem in changed or not any((d / f"{stem}.html").is_file() for d in pages)]


def draw_figures(plan: BuildPlan) -> None:
    """Redraw the figures lessons show when their inputs changed."""
    from course.workflows.draw_figures import ensure_figures

    ensure_figures(plan.root)


def build_variant(plan: BuildPlan, lessons: list[Lesson], variant: str, out: Path, web_assets: dict,
                  assignments: dict | None = None, *, rebuild: set[str] | None = None,
                  old: Path | None = None) -> list[Path]:
    """Write one variant's pages, notebooks (lesson and released assignment), images and shared files into OUT;
    a lesson not in REBUILD (default: all are) keeps its files from the OLD site, linked, not rewritten."""
    from course.site.check_markup import check_markup, leftover_in_html
    from course.site.make_index import index_markdown
    from course.site.make_navigation import pager_html, sidebar_html
    from course.site.render_page import render_page
    from course.site.resolve_resources import resolve_resources
    from course.site.select_variant import select_variant
    from course.site.write_notebooks import lesson_outputs, write_notebooks
    from course.site.write_page_markdown import write_page_markdown
    from course.lesson.notebook_names import assignment_notebook, notes_notebook
    from course.site.lite_page import (browser_notebook, browser_run, browser_runs, index_link, lite_notebooks,
                                       page_markdown)
    from course.site.lite_site import build_lite
    from course.site.departures_page import departures_by_lesson, link_markdown, pandoc_page
    from course.site.lesson_scripts import assets_markdown, copy_assets, page_assets, site_path

    assignments = assignments or {}
    departures = departures_by_lesson(lessons, plan.root, variant)
    written = []
    for lesson in lessons:
        view, images = resolve_resources(select_variant(lesson, variant), plan.root)
        for image in images:
            _copy(plan.root / image.project_path, out / image.project_path)
        if rebuild is not None and lesson.stem not in rebuild:
            for name in (f"{lesson.stem}.html", notes_notebook(lesson.stem), assignment_notebook(lesson.stem),
                         pandoc_page(lesson.stem), *(site_path(lesson, a) for a in page_assets(lesson))):
                _keep(old / name, out / name)
            continue
        written += copy_assets(lesson, out, variant)
        outputs = lesson_outputs(plan, view)
        released = {assignment_notebook(lesson.stem): assignments[lesson.stem]} if lesson.stem in assignments else {}
        written += write_notebooks(plan, lesson, view, outputs, out, released)
        run = browser_run(plan, lesson, out / browser_notebook(variant, lesson.stem))
        pointer = link_markdown(lesson, pandoc_page(lesson.stem)) if lesson.stem in departures else ""
        page = render_page(page_markdown(plan, variant, run) + pointer + assets_markdown(lesson)
                           + write_page_markdown(view, outputs), plan=plan,
                           variant=variant, title=lesson.title, lesson_dir=lesson.path.parent, number=lesson.number,
                           sidebar=sidebar_html(lessons, lesson.stem), pager=pager_html(lessons, lesson.stem))
        check_markup(leftover_in_html(page), source=lesson.path, what=f"{variant}/{lesson.stem}.html")
        written.append(write_atomic(out / f"{lesson.stem}.html", page))
        if lesson.stem in departures:
            written.append(write_departures_page(plan, lessons, lesson, departures[lesson.stem], out))
    offered = {lesson.stem: assignment_notebook(lesson.stem) for lesson in lessons
               if (out / assignment_notebook(lesson.stem)).is_file()}  # made now or kept from the old site
    runs = browser_runs(plan, lessons, variant, out)
    index = render_page(index_markdown(lessons, variant, offered, {s: index_link(r) for s, r in runs.items()},
                                       departures={stem: pandoc_page(stem) for stem in departures}),
                        plan=plan, variant=variant,
                        title=plan.config.course_title, lesson_dir=plan.lessons[0].parent, toc=False,
                        sidebar=sidebar_html(lessons, None))
    check_markup(leftover_in_html(index), source=plan.lessons[0], what=f"{variant}/index.html")
    written.append(write_atomic(out / "index.html", index))
    written.append(write_search_index(plan, lessons, out))
    for name in ("course.css", "mermaid-options.js", "course.js", "figure-viewer.js", "course-lite.js",
                 "course-search.js", "search-options.js"):
        _copy(plan.site_files / name, out / "site_libs" / name)
    for asset, path in web_assets.items():
        _copy(path, out / asset.site_path)
    if notebooks := lite_notebooks(runs, variant, out):
        build_lite(plan, variant, out, notebooks)
    return written


def write_departures_page(plan: BuildPlan, lessons: list[Lesson], lesson: Lesson, departures: list,
                          out: Path) -> Path:
    """The answer site's page of LESSON's departures from its original, beside the lesson's page."""
    from course.site.check_markup import check_markup, leftover_in_html
    from course.site.departures_page import page_title, pandoc_markdown, pandoc_page
    from course.site.make_navigation import sidebar_html
    from course.site.render_page import render_page

    page = render_page(pandoc_markdown(lesson, departures), plan=plan, variant="answer", title=page_title(lesson),
                       lesson_dir=lesson.path.parent, sidebar=sidebar_html(lessons, None))
    check_markup(leftover_in_html(page), source=lesson.path, what=f"answer/{pandoc_page(lesson.stem)}")
    return write_atomic(out / pandoc_page(lesson.stem), page)


def write_search_index(plan: BuildPlan, lessons: list[Lesson], out: Path) -> Path:
    """The search index of every lesson page in OUT (the rebuilt and the kept alike), for site_libs/."""
    from course.site.make_search_index import INDEX_SCRIPT, search_index_script
    from course.tools.web_assets import search_builder

    pages = [(out / f"{lesson.stem}.html", lesson.title) for lesson in lessons]
    script = search_index_script(pages, site_files=plan.site_files, builder=search_builder(plan.root))
    return write_atomic(out / INDEX_SCRIPT, script)


def _copy(src: Path, dst: Path) -> None:
    """Copy one file into the site, creating folders; a file kept (linked) there is replaced, never written through."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.unlink(missing_ok=True)
    shutil.copyfile(src, dst)


def _keep(old: Path, new: Path) -> None:
    """Carry a file of an unchanged lesson from the old site into the new one: a hard link, or a copy."""
    if not old.is_file():
        return
    new.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(old, new)
    except OSError:
        shutil.copy2(old, new)
