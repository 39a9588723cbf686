"""What `quarto render --profile student|answer` cannot make by itself, done by the course's own code as Quarto's
project scripts (`pre-render` and `post-render` in _quarto.yml, through scripts/quarto_hook.py).

Before the render: the figures the lessons show (drawn from code, as `course build` draws them); each lesson's
reading notebook and, on the student site, its assignment as stock nbgrader releases it, staged in the course's
cache (.course-cache/quarto/VARIANT/); from those notebooks, whether each lesson runs in the browser
(course.site.lite_page, as on the pandoc path), so that the front page's lesson list (`_lessons-index.md`, which
index.qmd includes) and each lesson page's "在浏览器中运行" block (`_lessons-browser.md`, which the course's filter
puts at the top of the page, the lesson's own page assets and, on the answer site, the link to its departures
page) say the same as `course build`'s pages; on the answer site, each lesson's departures page as a .qmd at the
project's root (course.site.departures_page). After it, into the output folder: the staged notebooks and the
lessons' page assets beside the lessons' pages; the course's scripts the filter loads on every page (PAGE_SCRIPTS,
into site_libs/: the pandoc pages' notes, diagrams and figure view) and the site's own MathJax; the checks `course build` makes of its pages (no markup left
over, nothing loaded from another host, no solution in the student site); then the JupyterLite site
(lite/, at the site's root) with the notebooks that run in the browser. `course build --renderer quarto` runs the
same render, so both ways give one site.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from fnmatch import fnmatch
from pathlib import Path

from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.site.departures_page import QUARTO_PATTERN
from course.site.plan import BuildPlan, make_plan

# Set by `course build --renderer quarto` for the render it runs: the build holds the project's lock and has drawn
# the figures already, so the pre-render step must not wait for that lock.
IN_COURSE_BUILD = "COURSE_BUILD_RENDERING"
INDEX_INCLUDE = "_lessons-index.md"  # written before each render; index.qmd includes it (not committed)
# What the course's filter loads on every Quarto page (src/course/site/, served from site_libs/), as the pandoc pages
# load them: the diagrams' look, the figures' full-size view, the in-browser block's and the index's notes
# (course-lite.js), and the search's note from file://.
PAGE_SCRIPTS = ("mermaid-options.js", "course-quarto.js", "figure-viewer.js", "course-lite.js")
BROWSER_INCLUDE = "_lessons-browser.md"  # each lesson page's in-browser block, by lesson (a div #STEM; not committed)
DEPARTURES_PAGES = QUARTO_PATTERN.replace(".qmd", ".html")  # answer-only pages (course.site.departures_page)
CELL_NOTE = "course-cell-note"  # in BROWSER_INCLUDE: the note above a cell shown but not run, as the pandoc page has it
# The one file Quarto's page template loads from a CDN whatever the settings (a polyfill for browsers older than
# MathJax 3 supports); the site serves MathJax itself, so the pages lose this line.
CDN_POLYFILL = re.compile(r'[ \t]*<script src="https://cdnjs\.cloudflare\.com/polyfill/[^"]*"></script>\n?')
REMOTE = re.compile(r'<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)="(?:https?:)?//[^"]*"', re.I)


def active_variant(plan: BuildPlan, profiles: str | None) -> str:
    """The variant a render makes: the course's variant among Quarto's active PROFILES (QUARTO_PROFILE), else
    the first of the profile group in _quarto.yml (answer), as Quarto itself picks it."""
    for name in re.split(r"[,\s]+", profiles or ""):
        if name in plan.config.variants:
            return name
    return "answer"


def pre_render(root: Path, variant: str) -> list[Path]:
    """Draw the lessons' figures, stage VARIANT's notebooks, and write the front page's lesson list and each lesson
    page's in-browser block (and the note above a cell that is shown but not run)."""
    from course.lesson.notebook_names import assignment_notebook
    from course.lesson.parse_qmd import parse_lesson
    from course.site.lite_page import browser_runs, index_link, page_markdown
    from course.site.departures_page import quarto_source
    from course.site.make_index import index_markdown
    from course.site.resolve_resources import resolve_resources
    from course.site.write_page_markdown import NOT_RUN_NOTE
    from course.workflows.draw_figures import ensure_figures
    from course.workflows.release_assignment import assignment_lessons

    plan = make_plan(root)
    if not os.environ.get(IN_COURSE_BUILD):
        ensure_figures(plan.root)
    lessons = [parse_lesson(p) for p in plan.lessons]
    for lesson in lessons:
        resolve_resources(lesson, plan.root)  # a missing image fails before Quarto runs a cell
    staged = stage_notebooks(plan, lessons, variant)
    runs = browser_runs(plan, lessons, variant, staged / plan.config.lessons_dir)
    to_site = "../" * len(Path(plan.config.lessons_dir).parts)  # from a lesson page up to the site's root
    departures = write_departures_pages(plan, lessons, variant)
    by_stem = {lesson.stem: lesson for lesson in lessons}
    blocks = "".join(f":::: {{#{stem}}}\n{page_markdown(plan, variant, run, to_site)}"
                     f"{page_extras(by_stem[stem], departures, to_site)}::::\n\n" for stem, run in runs.items())
    blocks += f":::: {{#{CELL_NOTE}}}\n::: {{.cell-note}}\n{NOT_RUN_NOTE}\n:::\n::::\n"
    offered = {}
    if variant == "student":
        offered = {stem: assignment_notebook(stem) for stem in assignment_lessons(plan, [x.stem for x in lessons])}
    index = index_markdown(lessons, variant, offered, {stem: index_link(run) for stem, run in runs.items()},
                           folder=f"{plan.config.lessons_dir}/", page=".qmd",
                           # "./": the filter would take a bare lessonNN-….qmd for a lesson's page, which is not there
                           departures={stem: f"./{quarto_source(stem)}" for stem in departures})
    return [write_atomic(plan.root / BROWSER_INCLUDE, blocks), write_atomic(plan.root / INDEX_INCLUDE, index),
            *departures.values()]


def page_extras(lesson, departures: dict[str, Path], to_site: str) -> str:
    """What the lesson page shows besides its text, as on the pandoc site: on the answer site the link to its
    departures page, and the lesson's own scripts and styles (course.site.lesson_scripts)."""
    from course.site.departures_page import link_markdown, quarto_source
    from course.site.lesson_scripts import assets_markdown

    pointer = link_markdown(lesson, to_site + quarto_source(lesson.stem)) if lesson.stem in departures else ""
    return pointer + assets_markdown(lesson)


def write_departures_pages(plan: BuildPlan, lessons: list, variant: str) -> dict[str, Path]:
    """On the answer site, each lesson's page of departures from its original, as a generated .qmd at the project's
    root; the student site renders none, so those of an earlier answer render are removed."""
    from course.site.departures_page import departures_by_lesson, quarto_page, quarto_source

    for old in plan.root.glob(QUARTO_PATTERN):
        old.unlink()
    found = departures_by_lesson(lessons, plan.root, variant)
    by_stem = {lesson.stem: lesson for lesson in lessons}
    return {stem: write_atomic(plan.root / quarto_source(stem),
                               quarto_page(by_stem[stem], entries, plan.config.lessons_dir))
            for stem, entries in found.items()}


def staging_dir(plan: BuildPlan, variant: str) -> Path:
    """Where the pre-render step leaves VARIANT's notebooks for the post-render step, laid out as in the site."""
    return plan.cache_dir / "quarto" / variant


def stage_notebooks(plan: BuildPlan, lessons: list, variant: str) -> Path:
    """Write each lesson's notebooks of VARIANT (reading notebook; student: the released assignment) afresh into
    the staging folder, beside where its page will lie."""
    from course.lesson.notebook_names import assignment_notebook
    from course.site.resolve_resources import resolve_resources
    from course.site.select_variant import select_variant
    from course.site.write_notebooks import lesson_outputs, write_notebooks
    from course.workflows.release_assignment import released_assignments

    staged = staging_dir(plan, variant)
    shutil.rmtree(staged, ignore_errors=True)
    assignments = released_assignments(plan, [x.stem for x in lessons]) if variant == "student" else {}
    for lesson in lessons:
        view, _ = resolve_resources(select_variant(lesson, variant), plan.root)
        folder = staged / lesson.path.parent.relative_to(plan.root)
        released = {assignment_notebook(lesson.stem): assignments[lesson.stem]} if lesson.stem in assignments else {}
        write_notebooks(plan, lesson, view, lesson_outputs(plan, view), folder, released)
    return staged


def post_render(root: Path, variant: str, out: Path) -> list[Path]:
    """Add the staged notebooks, the in-browser block's script and MathJax to the site Quarto wrote into OUT, check
    its pages, and build lite/."""
    from course.lesson.parse_qmd import parse_lesson
    from course.site.lite_page import browser_runs, lite_notebooks
    from course.site.lesson_scripts import copy_assets
    from course.site.lite_site import LITE, build_lite
    from course.tools.web_assets import locate_web_assets

    plan = make_plan(root)
    out = (plan.root / out).resolve()
    lessons = [parse_lesson(p) for p in plan.lessons]
    staged = staging_dir(plan, variant)
    if not staged.is_dir():
        raise CourseError(f"{staged}: no notebooks staged; the pre-render step in _quarto.yml writes them")
    written = []
    for notebook in sorted(p for p in staged.rglob("*") if p.is_file()):
        written.append(out / notebook.relative_to(staged))
        written[-1].parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(notebook, written[-1])
    (out / "site_libs").mkdir(parents=True, exist_ok=True)
    for name in PAGE_SCRIPTS:
        shutil.copyfile(plan.site_files / name, out / "site_libs" / name)
    readable_search_index(out / "search.json")
    for asset, path in locate_web_assets(plan.root).items():
        target = out / asset.site_path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    for lesson in lessons:  # beside the lesson's page, as the page names them (checked on the student site)
        copy_assets(lesson, out / lesson.path.parent.relative_to(plan.root), variant)
    check_pages(plan, lessons, variant, out)
    shutil.rmtree(out / LITE, ignore_errors=True)  # a render over an older site: lite/ is built afresh
    folder = out / plan.config.lessons_dir
    if notebooks := lite_notebooks(browser_runs(plan, lessons, variant, folder), variant, folder):
        build_lite(plan, variant, out, notebooks)
    return written


def readable_search_index(path: Path) -> None:
    """Quarto's search index with each formula as it reads (N_d, not \\(N_d\\)) and no diagram's source, so its
    snippets show the text a reader sees, as the pandoc site's do."""
    import json

    from course.site.search_documents import readable_math, without_diagram_source

    if not path.is_file():
        return
    entries = json.loads(path.read_text("utf-8"))
    for entry in entries:
        for key in ("title", "section", "text"):
            if isinstance(entry.get(key), str):
                entry[key] = readable_math(without_diagram_source(entry[key]))
    write_atomic(path, json.dumps(entries, ensure_ascii=False, indent=1))


def check_pages(plan: BuildPlan, lessons: list, variant: str, out: Path) -> None:
    """The checks `course build` makes of its pages, on Quarto's: no leftover markup, nothing fetched from
    another host (the CDN polyfill is removed first), and on the student site no line of any solution."""
    from course.site.check_leaks import solution_leaks
    from course.site.check_markup import check_markup, leftover_in_html

    pages = {lesson.stem: out / lesson.path.parent.relative_to(plan.root) / f"{lesson.stem}.html" for lesson in lessons}
    for page in sorted(out.rglob("*.html")):
        text = page.read_text("utf-8")
        cleaned = CDN_POLYFILL.sub("", text)
        if cleaned != text:
            page.write_text(cleaned, "utf-8")
        what = f"{variant}/{page.relative_to(out)}"
        if remote := REMOTE.findall(cleaned):
            raise CourseError(f"{what} loads from another host ({remote[0]}); the site must work offline",
                              Location(page))
        source = next((x.path for x in lessons if pages[x.stem] == page), plan.root / "index.qmd")
        check_markup(leftover_in_html(cleaned), source=source, what=what)
        if variant == "student" and fnmatch(page.name, DEPARTURES_PAGES):
            raise CourseError(f"{what}: a page of departures from the original is for the answer site only",
                              Location(page))
        if variant == "student":
            for lesson in lessons:
                if leaked := solution_leaks(lesson, cleaned):
                    raise CourseError(f"{what} shows solution code of {lesson.stem}: {leaked[0]!r}",
                                      Location(lesson.path))


def main(argv: list[str]) -> int:
    """`scripts/quarto_hook.py pre-render|post-render`, as Quarto runs it in the project folder."""
    if len(argv) != 1 or argv[0] not in ("pre-render", "post-render"):
        print("usage: quarto_hook.py pre-render|post-render (run by `quarto render`, see _quarto.yml)", file=sys.stderr)
        return 2
    root = Path.cwd()
    try:
        variant = active_variant(make_plan(root), os.environ.get("QUARTO_PROFILE"))
        if argv[0] == "pre-render":
            pre_render(root, variant)
        else:
            post_render(root, variant, Path(os.environ.get("QUARTO_PROJECT_OUTPUT_DIR") or "_site"))
    except CourseError as exc:
        print(f"course ({argv[0]}): {exc}", file=sys.stderr)
        return 1
    return 0
