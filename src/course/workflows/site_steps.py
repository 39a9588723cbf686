"""The course's steps around a variant's pages, declared once (STEPS) and run by both renderers: the pandoc
renderer (course.workflows.render_pandoc) runs them around its pages, and Quarto's project scripts
(course.workflows.quarto_hooks) run them as its pre-render and post-render steps.

Like JupyterLite's addons, each step is a small object with a name, the hash of its own inputs (its fingerprint,
stamped into the built site, so that a change to them alone reruns the steps without re-rendering a page) and a
hook on either side of the pages: before them, what a page shows besides its text (the lessons' notebooks, from
which the in-browser block and the index's links follow); after them, the files beside the pages (web assets, page
assets, the in-browser notebooks' lite/) and the checks of the pages written.

A run renders some lessons (SiteRun.rendered: all of them, or those a partial `quarto render` names); the steps
write those lessons' files and leave the others' as the site already holds them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Protocol

from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.lesson.model import Lesson
from course.lesson.variants import Variant
from course.site.plan import BuildPlan

BEFORE, AFTER = "before pages", "after pages"
# The one file Quarto's page template loads from a CDN whatever the settings (a polyfill for browsers older than
# MathJax 3 supports); the pages load no MathJax (their formulas come typeset), so they lose this line.
CDN_POLYFILL = re.compile(r'[ \t]*<script src="https://cdnjs\.cloudflare\.com/polyfill/[^"]*"></script>\n?')
REMOTE = re.compile(r'<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)="(?:https?:)?//[^"]*"', re.I)
NOT_PAGES = ("site_libs", "lite")  # folders of a site holding other tools' HTML, not the course's pages


@dataclass(frozen=True)
class PageLayout:
    """Where a renderer puts a variant's pages and how its pages name each other."""

    lessons_dir: str  # the lesson pages' folder in the site ('' : at its root)
    page_suffix: str  # how the index links a lesson's page: .html (the page), .qmd (the source Quarto resolves)
    departures_source: Callable[[str], str]  # a lesson's departures page as the site's root names it
    index_prefix: str  # before a departures link on the index ("./" keeps Quarto's filter from taking it for a lesson)
    scripts: tuple[str, ...]  # the course.site files its pages load from site_libs/
    index_source: str | None = None  # the index page's source in the project (None: made from the lessons)

    @property
    def to_site(self) -> str:
        """From a lesson page up to the site's root."""
        return "../" * len(Path(self.lessons_dir).parts)


@dataclass
class SiteRun:
    """One variant's site being made: what the steps read, and what they leave for the pages and each other."""

    plan: BuildPlan
    variant: Variant
    lessons: list[Lesson]  # every lesson (the index lists them all)
    rendered: frozenset[str]  # the lessons whose pages this run renders
    out: Path  # the site being written
    layout: PageLayout
    notebooks: Path  # where the notebooks are written before the pages, laid out as the site (OUT, or a cache)
    release: bool = True  # release the rendered lessons' assignments (stock nbgrader); False: OLD's are kept
    old: Path | None = None  # the previous site, whose files the lessons not rendered keep (hard links)
    outputs: dict[str, dict] = field(default_factory=dict)  # stem -> the executed cells' outputs
    page_blocks: dict[str, str] = field(default_factory=dict)  # stem -> what its page shows above its text
    departures: dict[str, list] = field(default_factory=dict)  # stem -> its departures (where the variant shows them)
    index_markdown: str = ""
    written: list[Path] = field(default_factory=list)

    def page_dir(self, root: Path) -> Path:
        """The folder of the lesson pages (and their notebooks) in a site laid out under ROOT."""
        return root / self.layout.lessons_dir

    @property
    def lessons_rendered(self) -> list[Lesson]:
        return [lesson for lesson in self.lessons if lesson.stem in self.rendered]


class SiteStep(Protocol):
    """A step of every site build: its name, the hash of its own inputs, and what it does before or after pages."""

    name: str
    phase: str  # BEFORE or AFTER the pages

    def fingerprint(self, plan: BuildPlan) -> str: ...

    def run(self, site: SiteRun) -> None: ...


def _nothing(plan: BuildPlan) -> str:
    """The fingerprint of a step whose only inputs are the lessons (their own hashes cover it)."""
    return ""


@dataclass(frozen=True)
class Step:
    """A SiteStep made of one function and its fingerprint."""

    name: str
    phase: str
    action: Callable[[SiteRun], None]
    inputs: Callable[[BuildPlan], str] = _nothing

    def fingerprint(self, plan: BuildPlan) -> str:
        return self.inputs(plan)

    def run(self, site: SiteRun) -> None:
        self.action(site)


def write_notebooks(site: SiteRun) -> None:
    """Each rendered lesson's reading notebook and, where the variant offers it, its released assignment, into the
    notebook folder; the other lessons keep the old site's (when there is one)."""
    from course.lesson.notebook_names import assignment_notebook, notes_notebook
    from course.site.resolve_resources import resolve_resources
    from course.site.select_variant import select_variant
    from course.site.write_notebooks import lesson_outputs
    from course.site.write_notebooks import write_notebooks as write
    from course.workflows.release_assignment import released_assignments

    folder = site.page_dir(site.notebooks)
    stems = [lesson.stem for lesson in site.lessons_rendered]
    if site.notebooks != site.out:  # a cache: a lesson's files of an earlier run (an assignment since dropped) go
        for name in (f for stem in stems for f in (notes_notebook(stem), assignment_notebook(stem))):
            (folder / name).unlink(missing_ok=True)
    assignments = released_assignments(site.plan, stems) if site.variant.offers_assignment and site.release else {}
    for lesson in site.lessons:
        if lesson.stem not in site.rendered:
            for name in (notes_notebook(lesson.stem), assignment_notebook(lesson.stem)):
                if site.old is not None:
                    keep(site.page_dir(site.old) / name, folder / name)
            continue
        view, _ = resolve_resources(select_variant(lesson, site.variant.name), site.plan.root)
        site.outputs[lesson.stem] = outputs = lesson_outputs(site.plan, view)
        released = {assignment_notebook(lesson.stem): assignments[lesson.stem]} if lesson.stem in assignments else {}
        site.written += write(site.plan, lesson, view, outputs, folder, released)


def page_blocks(site: SiteRun) -> None:
    """What each lesson page shows above its text (whether and how its notebook runs in the browser, the link to its
    departures page, its own scripts), and the index: its lesson list with the notebooks and browser links."""
    from course.lesson.notebook_names import assignment_notebook
    from course.site.departures_page import departures_by_lesson, link_markdown
    from course.site.lesson_scripts import assets_markdown
    from course.site.lite_page import browser_runs, index_link, page_markdown
    from course.site.make_index import index_markdown

    layout, folder = site.layout, site.page_dir(site.notebooks)
    runs = browser_runs(site.plan, site.lessons, site.variant.name, folder)
    site.departures = departures_by_lesson(site.lessons, site.plan.root, site.variant.name)
    for lesson in site.lessons:
        pointer = (
            link_markdown(lesson, layout.to_site + layout.departures_source(lesson.stem))
            if lesson.stem in site.departures
            else ""
        )
        site.page_blocks[lesson.stem] = (
            page_markdown(site.plan, site.variant.name, runs[lesson.stem], layout.to_site)
            + pointer
            + assets_markdown(lesson)
        )
    offered = {
        lesson.stem: assignment_notebook(lesson.stem)
        for lesson in site.lessons
        if (folder / assignment_notebook(lesson.stem)).is_file()
    }  # written now or kept
    folder_link = f"{layout.lessons_dir}/" if layout.lessons_dir else ""
    site.index_markdown = index_markdown(
        site.lessons,
        site.variant.name,
        offered,
        {stem: index_link(run) for stem, run in runs.items()},
        folder=folder_link,
        page=layout.page_suffix,
        departures={stem: layout.index_prefix + layout.departures_source(stem) for stem in site.departures},
    )


def notebooks_into_site(site: SiteRun) -> None:
    """The notebooks written before the pages, beside the rendered lessons' pages (nothing to do when they were
    written into the site itself)."""
    from course.lesson.notebook_names import assignment_notebook, notes_notebook

    source, target = site.page_dir(site.notebooks), site.page_dir(site.out)
    if source == target:
        return
    for lesson in site.lessons_rendered:
        for name in (notes_notebook(lesson.stem), assignment_notebook(lesson.stem)):
            (target / name).unlink(missing_ok=True)
            if (source / name).is_file():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / name, target / name)
                site.written.append(target / name)


def web_assets_fingerprint(plan: BuildPlan) -> str:
    """The web assets the site serves (mermaid, MiniSearch's client): which files, of which size."""
    from course.tools.web_assets import locate_web_assets

    h = hashlib.sha256()
    for asset, path in sorted(locate_web_assets(plan.root).items(), key=lambda item: item[0].site_path):
        h.update(f"{asset.site_path}\0{path.stat().st_size}\0".encode())
    return h.hexdigest()


def site_files(site: SiteRun) -> None:
    """Into site_libs/: the course's scripts and styles the pages load, and the web assets they load (mermaid,
    MiniSearch), so that no page fetches anything from another host."""
    from course.tools.web_assets import locate_web_assets

    for name in site.layout.scripts:
        copy(site.plan.site_files / name, site.out / "site_libs" / name)
    for asset, path in locate_web_assets(site.plan.root).items():
        if asset.site_path:
            copy(path, site.out / asset.site_path)


def page_assets(site: SiteRun) -> None:
    """Each rendered lesson's own scripts and styles beside its page (refused on a variant without solutions when
    one shows a solution line); the other lessons keep the old site's."""
    from course.site.lesson_scripts import copy_assets, site_path
    from course.site.lesson_scripts import page_assets as assets

    for lesson in site.lessons:
        if lesson.stem in site.rendered:
            site.written += copy_assets(lesson, site.page_dir(site.out), site.variant.name)
        elif site.old is not None:
            for asset in assets(lesson):
                where = site_path(lesson, asset)
                keep(site.page_dir(site.old) / where, site.page_dir(site.out) / where)


def site_pages(site: SiteRun) -> dict[Path, Path]:
    """The course's pages in the site (not other tools' HTML), each with the source a problem in it is told of."""
    from course.site.departures_page import pandoc_page

    sources = {site.page_dir(site.out) / f"{lesson.stem}.html": lesson.path for lesson in site.lessons}
    sources |= {site.out / pandoc_page(lesson.stem): lesson.path for lesson in site.lessons}
    index = site.plan.root / site.layout.index_source if site.layout.index_source else site.lessons[0].path
    return {
        page: sources.get(page, index)
        for page in sorted(site.out.rglob("*.html"))
        if page.relative_to(site.out).parts[0] not in NOT_PAGES
    }


def typeset_formulas(site: SiteRun) -> None:
    """Every formula of the pages written typeset by MathJax at build time (course.site.typeset_math): the pages
    load no MathJax; pages kept from the old site hold no TeX left to typeset."""
    from course.site.typeset_math import typeset_pages
    from course.tools.web_assets import math_typesetter

    pages = site_pages(site)
    kept = site.plan.cache_dir / "formulas" / site.variant.name
    typeset_pages(
        list(pages),
        site_files=site.plan.site_files,
        mathjax=math_typesetter(site.plan.root),
        sources=pages,
        kept={page: kept / page.relative_to(site.out).with_suffix(".json") for page in pages},
    )


def check_pages(site: SiteRun) -> None:
    """The checks of every page of the site: no markup left over, nothing loaded from another host (Quarto's CDN
    polyfill is removed first), and where the variant hides them no departures page and no line of any solution."""
    from course.site.check_leaks import solution_leaks
    from course.site.check_markup import check_markup, leftover_in_html
    from course.site.departures_page import pandoc_page

    for page, source in site_pages(site).items():
        relative = page.relative_to(site.out)
        text = page.read_text("utf-8")
        cleaned = CDN_POLYFILL.sub("", text)
        if cleaned != text:
            write_atomic(page, cleaned)
        what = f"{site.variant.name}/{relative.as_posix()}"
        if remote := REMOTE.findall(cleaned):
            raise CourseError(
                f"{what} loads from another host ({remote[0]}); the site must work offline", Location(page)
            )
        check_markup(leftover_in_html(cleaned), source=source, what=what)
        if not site.variant.shows_departures and fnmatch(page.name, pandoc_page("lesson[0-9][0-9]")):
            raise CourseError(
                f"{what}: a page of departures from the original is for the answer site only", Location(page)
            )
        if not site.variant.shows_solutions:
            for lesson in site.lessons:
                if leaked := solution_leaks(lesson, cleaned):
                    raise CourseError(
                        f"{what} shows solution code of {lesson.stem}: {leaked[0]!r}", Location(lesson.path)
                    )


def lite_fingerprint(plan: BuildPlan) -> str:
    """lite/'s own inputs besides the notebooks (course.site.lite_site)."""
    from course.site.lite_site import lite_fingerprint as inputs

    return inputs(plan)


def browser_notebooks(site: SiteRun) -> None:
    """lite/ at the site's root, holding the notebook of every lesson that runs in the browser (JupyterLite, built
    again only when its inputs or a notebook changed: course.site.lite_site); then every page's in-browser block
    says how much a first open of that lite/ downloads (kept pages too: they are replaced, never written through)."""
    from course.site.lite_page import browser_runs, download_megabytes, lite_notebooks, with_download_size
    from course.site.lite_site import LITE, build_lite

    folder = site.page_dir(site.out)
    shutil.rmtree(site.out / LITE, ignore_errors=True)  # a render over an older site: linked in afresh
    runs = browser_runs(site.plan, site.lessons, site.variant.name, folder)
    if not (notebooks := lite_notebooks(runs, site.variant.name, folder)):
        return
    build_lite(site.plan, site.variant.name, site.out, notebooks)
    megabytes = download_megabytes(site.out / LITE)
    for page in site_pages(site):
        text = page.read_text("utf-8")
        if (sized := with_download_size(text, megabytes)) != text:
            write_atomic(page, sized)


# The steps of every site build, in order; both renderers run this list and no other.
STEPS: tuple[SiteStep, ...] = (
    Step("notebooks", BEFORE, write_notebooks),
    Step("page blocks", BEFORE, page_blocks),
    Step("notebooks into the site", AFTER, notebooks_into_site),
    Step("site files", AFTER, site_files, web_assets_fingerprint),
    Step("page assets", AFTER, page_assets),
    Step("formulas", AFTER, typeset_formulas),
    Step("page checks", AFTER, check_pages),
    Step("lite", AFTER, browser_notebooks, lite_fingerprint),
)


def run_steps(site: SiteRun, phase: str) -> None:
    """Run the steps of PHASE (BEFORE or AFTER the pages) on SITE, in their order."""
    for step in STEPS:
        if step.phase == phase:
            step.run(site)


def steps_fingerprint(plan: BuildPlan) -> dict[str, str]:
    """Each step's fingerprint (those with inputs of their own), as a site's stamp records them."""
    return {step.name: fp for step in STEPS if (fp := step.fingerprint(plan))}


def copy(src: Path, dst: Path) -> None:
    """Copy one file into the site, creating folders; a file kept (linked) there is replaced, never written through."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.unlink(missing_ok=True)
    shutil.copyfile(src, dst)


def keep(old: Path, new: Path) -> None:
    """Carry a file of a lesson not rendered from the old site into the new one: a hard link, or a copy."""
    if not old.is_file():
        return
    new.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(old, new)
    except OSError:
        shutil.copy2(old, new)
