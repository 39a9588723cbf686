"""The pandoc renderer of `course build`: each lesson page made by the course's own steps, one page at a time.

lesson.qmd → select_variant → resolve_resources → execute_cells (the notebooks step) → write_page_markdown →
render_page (pandoc with the course's filter, make_navigation's lesson list and previous/next links); then, on the
answer site, each lesson's departures page, the index and the search index of every page (make_search_index). The
site steps (course.workflows.site_steps) run around the pages. A lesson not rendered keeps its files from the old
site, linked, not rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from course.fileio import write_atomic
from course.lesson.model import Lesson
from course.lesson.variants import Variant
from course.site.departures_page import pandoc_page
from course.site.plan import BuildPlan
from course.workflows.site_steps import AFTER, BEFORE, PageLayout, SiteRun, copy, keep, run_steps

# What the pandoc pages load from site_libs/ (course.site): styles, diagrams, figures, in-browser notes, search.
PANDOC_SCRIPTS = (
    "course.css",
    "mermaid-options.js",
    "course.js",
    "figure-viewer.js",
    "course-lite.js",
    "course-search.js",
    "search-options.js",
)
PANDOC_LAYOUT = PageLayout(
    lessons_dir="", page_suffix=".html", departures_source=pandoc_page, index_prefix="", scripts=PANDOC_SCRIPTS
)


def pandoc_inputs(plan: BuildPlan) -> list[str]:
    """The project files the pandoc pages read beside [tool.course] build_inputs: the course's filter."""
    return [plan.lua_filter.relative_to(plan.root).as_posix()]


@dataclass(frozen=True)
class PandocRenderer:
    """pandoc (pypandoc's binary) with the course's filter and template: every page by the course's own steps."""

    version: str
    name: str = "pandoc"
    releases_assignments: bool = False  # the build says whether a render releases them (`course preview` waits)

    @property
    def label(self) -> str:
        """Name and version, as the site's stamp records them."""
        return f"{self.name} {self.version}"

    def inputs(self, plan: BuildPlan) -> list[str]:
        """The project files only this renderer reads."""
        return pandoc_inputs(plan)

    def page_path(self, plan: BuildPlan, stem: str) -> str:
        """A lesson's page in the site: at its root."""
        return f"{stem}.html"

    def render(
        self,
        plan: BuildPlan,
        lessons: list[Lesson],
        variant: Variant,
        out: Path,
        *,
        rebuild: frozenset[str],
        old: Path | None,
        release: bool,
    ) -> list[Path]:
        """Write VARIANT's site into OUT: the pages of the lessons in REBUILD, with the site steps around them; the
        other lessons keep their files from the OLD site. RELEASE: release the rebuilt lessons' assignments."""
        site = SiteRun(
            plan=plan,
            variant=variant,
            lessons=lessons,
            rendered=rebuild,
            out=out,
            layout=PANDOC_LAYOUT,
            notebooks=out,
            release=release,
            old=old,
        )
        run_steps(site, BEFORE)
        site.written += write_pages(site)
        run_steps(site, AFTER)
        return site.written


def write_pages(site: SiteRun) -> list[Path]:
    """The rendered lessons' pages (the others' kept), the departures pages, the index and the search index."""
    from course.site.make_navigation import pager_html, sidebar_html
    from course.site.render_page import render_page
    from course.site.resolve_resources import resolve_resources
    from course.site.select_variant import select_variant
    from course.site.write_page_markdown import write_page_markdown

    plan, lessons, out, variant = site.plan, site.lessons, site.out, site.variant.name
    written = []
    for lesson in lessons:
        view, images = resolve_resources(select_variant(lesson, variant), plan.root)
        for image in images:
            copy(plan.root / image.project_path, out / image.project_path)
        if lesson.stem not in site.rendered:
            for name in (f"{lesson.stem}.html", pandoc_page(lesson.stem)):
                if site.old is not None:
                    keep(site.old / name, out / name)
            continue
        page = render_page(
            site.page_blocks[lesson.stem] + write_page_markdown(view, site.outputs[lesson.stem]),
            plan=plan,
            variant=variant,
            title=lesson.title,
            lesson_dir=lesson.path.parent,
            number=lesson.number,
            sidebar=sidebar_html(lessons, lesson.stem),
            pager=pager_html(lessons, lesson.stem),
        )
        written.append(write_atomic(out / f"{lesson.stem}.html", page))
        if lesson.stem in site.departures:
            written.append(write_departures_page(site, lesson))
    index = render_page(
        site.index_markdown,
        plan=plan,
        variant=variant,
        title=plan.config.course_title,
        lesson_dir=plan.lessons[0].parent,
        toc=False,
        sidebar=sidebar_html(lessons, None),
    )
    written.append(write_atomic(out / "index.html", index))
    written.append(write_search_index(plan, lessons, out, kept=plan.cache_dir / "search" / variant))
    return written


def write_departures_page(site: SiteRun, lesson: Lesson) -> Path:
    """The page of LESSON's departures from its original, beside the lesson's page."""
    from course.site.departures_page import page_title, pandoc_markdown
    from course.site.make_navigation import sidebar_html
    from course.site.render_page import render_page

    page = render_page(
        pandoc_markdown(lesson, site.departures[lesson.stem]),
        plan=site.plan,
        variant=site.variant.name,
        title=page_title(lesson),
        lesson_dir=lesson.path.parent,
        sidebar=sidebar_html(site.lessons, None),
    )
    return write_atomic(site.out / pandoc_page(lesson.stem), page)


def write_search_index(plan: BuildPlan, lessons: list[Lesson], out: Path, *, kept: Path) -> Path:
    """The search index of every lesson page in OUT (the rebuilt and the kept alike), for site_libs/; the pages'
    sections kept in KEPT, a folder of the build cache."""
    from course.site.make_search_index import INDEX_SCRIPT, search_index_script
    from course.tools.web_assets import search_builder

    pages = [(out / f"{lesson.stem}.html", lesson.title) for lesson in lessons]
    script = search_index_script(pages, site_files=plan.site_files, builder=search_builder(plan.root), kept=kept)
    return write_atomic(out / INDEX_SCRIPT, script)
