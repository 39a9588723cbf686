"""What `quarto render --profile student|answer` cannot make by itself, done by the course's own code as Quarto's
project scripts (`pre-render` and `post-render` in _quarto.yml, through scripts/quarto_hook.py): the site steps
of course.workflows.site_steps, the same list `course build`'s pandoc renderer runs around its pages.

Before the render: the figures the lessons show (drawn from code, as `course build` draws them), the steps before
the pages (each rendered lesson's notebooks, staged in the variant's build cache .course-cache/quarto/VARIANT/,
and what the pages show besides their text), written for Quarto as the variant's includes in that same folder: the
front page's lesson list (INDEX_INCLUDE, which index.qmd names) and each lesson page's "在浏览器中运行" block
(BROWSER_INCLUDE, which the course's filter puts at the top of the page), one folder per variant so that a student
and an answer render in one checkout never share a file; on the answer site, each lesson's departures page as a
.qmd at the project's root (course.site.departures_page). After it, into the output folder: Quarto's search index
made readable, then the steps after the pages (the staged notebooks and page assets beside the rendered pages,
site_libs/, the checks `course build` makes of its pages, lite/).

A render of some pages (`quarto render lessons/lesson05.qmd --profile student`) stages and copies only those
lessons' notebooks: the hooks read what Quarto renders from QUARTO_PROJECT_RENDER_ALL, QUARTO_PROJECT_INPUT_FILES
(before) and QUARTO_PROJECT_OUTPUT_FILES (after).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.lesson.model import Lesson
from course.lesson.variants import Variant, get_variant
from course.site.departures_page import QUARTO_PATTERN
from course.site.plan import BuildPlan, make_plan
from course.workflows.render_quarto import IN_COURSE_BUILD, quarto_layout
from course.workflows.site_steps import AFTER, BEFORE, SiteRun, run_steps

FIRST_PROFILE = "answer"  # the first of _quarto.yml's profile group: Quarto's profile when none is named
INDEX_INCLUDE = "_lessons-index.md"  # in the variant's build cache; index.qmd names it, the course's filter reads it
BROWSER_INCLUDE = "_lessons-browser.md"  # each lesson page's in-browser block, by lesson (a div #STEM)
INCLUDES_KEY = "course-includes"  # _quarto.yml's metadata: the folder of every variant's includes, for the filter
CELL_NOTE = "course-cell-note"  # in BROWSER_INCLUDE: the note above a cell shown but not run, as the pandoc page has it


def active_variant(plan: BuildPlan, profiles: str | None) -> Variant:
    """The variant a render makes: the course's variant among Quarto's active PROFILES (QUARTO_PROFILE), else
    the first of the profile group in _quarto.yml, as Quarto itself picks it."""
    for name in re.split(r"[,\s]+", profiles or ""):
        if name in plan.config.variants:
            return get_variant(name)
    return get_variant(FIRST_PROFILE)


def staging_dir(plan: BuildPlan, variant: Variant) -> Path:
    """The variant's build cache for Quarto: its includes, and its notebooks laid out as in the site, left by the
    pre-render step for the filter and the post-render step."""
    return plan.cache_dir / "quarto" / variant.name


def check_includes_folder(plan: BuildPlan) -> None:
    """The course's filter reads the includes from _quarto.yml's course-includes: it must name this build cache."""
    import yaml

    expected = (Path(plan.config.cache_dir) / "quarto").as_posix()
    settings = yaml.safe_load((plan.root / "_quarto.yml").read_text("utf-8")) or {}
    if settings.get(INCLUDES_KEY) != expected:
        raise CourseError(
            f"{INCLUDES_KEY}: expected {expected} (the build cache, [tool.course] cache_dir, then "
            f"quarto/), got {settings.get(INCLUDES_KEY)!r}; the course's filter reads each variant's "
            "includes from there",
            Location(plan.root / "_quarto.yml"),
        )


def rendered_before(lessons: list[Lesson], root: Path, environ: dict[str, str]) -> frozenset[str]:
    """The lessons a render makes pages of, as Quarto tells its pre-render scripts: all on a whole render
    (QUARTO_PROJECT_RENDER_ALL, or no list: run by hand), else those among QUARTO_PROJECT_INPUT_FILES."""
    return _among(lessons, root, environ, "QUARTO_PROJECT_INPUT_FILES", lambda lesson: lesson.path)


def rendered_after(
    lessons: list[Lesson], root: Path, out: Path, layout_dir: str, environ: dict[str, str]
) -> frozenset[str]:
    """The lessons a render made pages of, as Quarto tells its post-render scripts (QUARTO_PROJECT_OUTPUT_FILES)."""
    return _among(
        lessons, root, environ, "QUARTO_PROJECT_OUTPUT_FILES", lambda lesson: out / layout_dir / f"{lesson.stem}.html"
    )


def _among(lessons: list[Lesson], root: Path, environ: dict[str, str], key: str, path) -> frozenset[str]:
    """The lessons whose PATH is in the file list Quarto passes in KEY (newline-separated, relative to ROOT, or in
    the file QUARTO_USE_FILE_FOR_… names); every lesson on a whole render or without a list."""
    listing = environ.get(key)
    if (named := environ.get(key.replace("QUARTO_PROJECT_", "QUARTO_USE_FILE_FOR_PROJECT_"))) and Path(named).is_file():
        listing = Path(named).read_text("utf-8")
    if environ.get("QUARTO_PROJECT_RENDER_ALL") == "1" or listing is None:
        return frozenset(lesson.stem for lesson in lessons)
    files = {(root / line.strip()).resolve() for line in listing.splitlines() if line.strip()}
    return frozenset(lesson.stem for lesson in lessons if path(lesson).resolve() in files)


def site_run(plan: BuildPlan, lessons: list[Lesson], variant: Variant, rendered: frozenset[str], out: Path) -> SiteRun:
    """The site steps' view of this render: Quarto's layout, the notebooks staged in the variant's build cache."""
    return SiteRun(
        plan=plan,
        variant=variant,
        lessons=lessons,
        rendered=rendered,
        out=out,
        layout=quarto_layout(plan),
        notebooks=staging_dir(plan, variant),
    )


def pre_render(root: Path, variant: Variant, environ: dict[str, str]) -> list[Path]:
    """Draw the lessons' figures, run the steps before the pages for the lessons Quarto renders, and write what
    they made as the variant's includes (and, on the answer site, the departures pages' sources)."""
    from course.lesson.parse_qmd import parse_lesson
    from course.site.resolve_resources import resolve_resources
    from course.site.write_page_markdown import NOT_RUN_NOTE
    from course.workflows.draw_figures import ensure_drawn

    plan = make_plan(root)
    check_includes_folder(plan)
    if not environ.get(IN_COURSE_BUILD):
        ensure_drawn(plan.root)
    lessons = [parse_lesson(p) for p in plan.lessons]
    for lesson in lessons:
        resolve_resources(lesson, plan.root)  # a missing image fails before Quarto runs a cell
    rendered = rendered_before(lessons, plan.root, environ)
    staged = staging_dir(plan, variant)
    if rendered == {lesson.stem for lesson in lessons}:
        shutil.rmtree(staged, ignore_errors=True)  # a whole render stages afresh
    out = plan.root / (environ.get("QUARTO_PROJECT_OUTPUT_DIR") or plan.site_dir(variant.name))
    site = site_run(plan, lessons, variant, rendered, out)
    run_steps(site, BEFORE)
    blocks = "".join(f":::: {{#{stem}}}\n{block}::::\n\n" for stem, block in site.page_blocks.items())
    blocks += f":::: {{#{CELL_NOTE}}}\n::: {{.cell-note}}\n{NOT_RUN_NOTE}\n:::\n::::\n"
    return [
        write_atomic(staged / BROWSER_INCLUDE, blocks),
        write_atomic(staged / INDEX_INCLUDE, site.index_markdown),
        *write_departures_pages(plan, lessons, site.departures).values(),
    ]


def write_departures_pages(plan: BuildPlan, lessons: list[Lesson], departures: dict[str, list]) -> dict[str, Path]:
    """Each lesson's page of DEPARTURES from its original (where the variant shows them), as a generated .qmd at the
    project's root; those of an earlier render of another variant are removed."""
    from course.site.departures_page import quarto_page, quarto_source

    for old in plan.root.glob(QUARTO_PATTERN):
        old.unlink()
    by_stem = {lesson.stem: lesson for lesson in lessons}
    return {
        stem: write_atomic(
            plan.root / quarto_source(stem), quarto_page(by_stem[stem], entries, plan.config.lessons_dir)
        )
        for stem, entries in departures.items()
    }


def post_render(root: Path, variant: Variant, out: Path, environ: dict[str, str]) -> list[Path]:
    """Make Quarto's search index readable, then run the steps after the pages on the site Quarto wrote into OUT."""
    from course.lesson.parse_qmd import parse_lesson

    plan = make_plan(root)
    out = (plan.root / out).resolve()
    lessons = [parse_lesson(p) for p in plan.lessons]
    if not staging_dir(plan, variant).is_dir():
        raise CourseError(f"{staging_dir(plan, variant)}: nothing staged; the pre-render step in _quarto.yml writes it")
    readable_search_index(out / "search.json")
    rendered = rendered_after(lessons, plan.root, out, plan.config.lessons_dir, environ)
    site = site_run(plan, lessons, variant, rendered, out)
    run_steps(site, AFTER)
    return site.written


def readable_search_index(path: Path) -> None:
    """Quarto's search index with each formula as it reads (N_d, not \\(N_d\\)), no diagram's source and no
    in-browser block's download words (said with their number on the page only after the index is written), so its
    snippets show the text a reader sees, as the pandoc site's do."""
    import json

    from course.site.lite_page import DOWNLOAD_UNKNOWN
    from course.site.search_documents import readable_math, without_diagram_source

    if not path.is_file():
        return
    entries = json.loads(path.read_text("utf-8"))
    for entry in entries:
        for key in ("title", "section", "text"):
            if isinstance(entry.get(key), str):
                entry[key] = readable_math(without_diagram_source(entry[key])).replace(DOWNLOAD_UNKNOWN, "")
    write_atomic(path, json.dumps(entries, ensure_ascii=False, indent=1))


def main(argv: list[str]) -> int:
    """`scripts/quarto_hook.py pre-render|post-render`, as Quarto runs it in the project folder."""
    if len(argv) != 1 or argv[0] not in ("pre-render", "post-render"):
        print("usage: quarto_hook.py pre-render|post-render (run by `quarto render`, see _quarto.yml)", file=sys.stderr)
        return 2
    root, environ = Path.cwd(), dict(os.environ)
    try:
        variant = active_variant(make_plan(root), environ.get("QUARTO_PROFILE"))
        if argv[0] == "pre-render":
            pre_render(root, variant, environ)
        else:
            post_render(root, variant, Path(environ.get("QUARTO_PROJECT_OUTPUT_DIR") or "_site"), environ)
    except CourseError as exc:
        print(f"course ({argv[0]}): {exc}", file=sys.stderr)
        return 1
    return 0
