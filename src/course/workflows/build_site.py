"""`course build`: each lesson → student and answer variants → executed notebook and page, as ordered steps.

The nbgrader source notebooks (course.assignment.make_source) are written first, so the student site can offer each
lesson's assignment as stock nbgrader releases it (release_assignment). Then a Renderer makes each variant's site
in a staging folder, which replaces the old one only when every step succeeded: pandoc, page by page
(course.workflows.render_pandoc), or Quarto, one `quarto render --profile VARIANT` of the whole variant
(course.workflows.render_quarto). Both run the same site steps around the pages (course.workflows.site_steps: the
notebooks, what a page shows besides its text, site_libs/, the page assets, the checks, lite/); the stamp records
which renderer built a site and each step's own fingerprint.

Only the lessons whose inputs changed since a site's last build are rebuilt (course.site.fingerprint: the build
inputs and the renderer's own, so an edit to _quarto.yml rebuilds no pandoc page); the others' files are hard-linked
from the old site into the new one, so they are not rewritten. The index, the search index and the shared files are
always remade from every lesson.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from course.fileio import project_lock, replace_dir_atomically, write_atomic
from course.lesson.model import Lesson
from course.lesson.variants import Variant, get_variant
from course.site.fingerprint import (
    STAMP,
    lesson_fingerprints,
    read_stamp,
    read_stamp_renderer,
    read_steps,
    stale_lessons,
    stamp_text,
)
from course.site.plan import BuildPlan, make_plan
from course.workflows.site_steps import keep, steps_fingerprint

UNRELEASED = "unreleased"  # a stamp's entry for a lesson whose assignment a build left unreleased: stale on purpose

# The steps below import nbformat, nbclient and jsonschema (about a second); a build with nothing to do skips them.


class Renderer(Protocol):
    """What turns a variant's lessons into pages, with the course's site steps around them."""

    name: str
    releases_assignments: bool  # its render releases the assignments itself (else the build says whether to)

    @property
    def version(self) -> str: ...

    @property
    def label(self) -> str:
        """Name and version, as the site's stamp records them."""

    def inputs(self, plan: BuildPlan) -> list[str]:
        """The project files (relative paths) only this renderer reads, beside [tool.course] build_inputs."""

    def page_path(self, plan: BuildPlan, stem: str) -> str:
        """Where a lesson's page lies in the site, relative to it."""

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
        """Write VARIANT's site into OUT, re-rendering the lessons in REBUILD (the others may keep the OLD site's
        files); RELEASE: release their assignments. The files written, a kept lesson's not among them."""


@dataclass
class BuildResult:
    """What a build wrote, for the CLI summary and for later steps (nbgrader source)."""

    plan: BuildPlan
    lessons: list[Lesson] = field(default_factory=list)  # every lesson, parsed (the index lists them all)
    pages: list[Path] = field(default_factory=list)  # the files written; a kept lesson's are not among them
    up_to_date: bool = False
    rebuilt: dict[str, list[str]] = field(default_factory=dict)  # variant -> the lessons rebuilt in it
    unreleased: list[str] = field(default_factory=list)  # rebuilt without releasing their assignment (release=False)


def build_course(
    root: Path, *, variants: list[str] | None = None, release: bool = True, renderer: str | None = None
) -> BuildResult:
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
    fingerprints = lesson_fingerprints(plan, renderer.inputs(plan))
    steps = steps_fingerprint(plan)  # the site steps' own inputs (a lite/ edit rebuilds no page)
    stale = {
        v: stems
        for v in variants
        if (stems := _stale(plan, v, fingerprints, renderer)) or read_steps(plan.site_dir(v)) != steps
    }
    if not stale:
        from course.assignment.make_source import write_assignment_sources
        from course.workflows.draw_figures import ensure_diagrams

        write_assignment_sources(plan, None)  # only when autograder/source/ is missing or stale
        ensure_diagrams(plan.root)  # only those the build cache lacks (a checkout built before it kept them)
        return BuildResult(plan=plan, up_to_date=True)
    from course.lesson.parse_qmd import parse_lesson
    from course.site.resolve_resources import resolve_resources

    draw_figures(plan)
    parsed = [parse_lesson(p) for p in plan.lessons]
    for lesson in parsed:
        resolve_resources(lesson, plan.root)  # a missing image fails before anything runs
    result = BuildResult(plan=plan, lessons=parsed, rebuilt=stale)
    from course.assignment.make_source import write_assignment_sources
    from course.lesson.notebook_names import assignment_notebook
    from course.workflows.release_assignment import assignment_lessons

    changed = {stem for stems in stale.values() for stem in stems}
    write_assignment_sources(plan, [lesson for lesson in parsed if lesson.stem in changed])
    write_assignment_sources(plan, None)  # the others' too, when autograder/source/ lacks them
    release = release or renderer.releases_assignments
    with ExitStack() as stack:
        for name, stems in stale.items():
            variant, site = get_variant(name), plan.site_dir(name)
            staging = stack.enter_context(replace_dir_atomically(site))
            unreleased = [] if release or not variant.offers_assignment else assignment_lessons(plan, stems)
            result.unreleased += unreleased
            for stem in unreleased:
                page_dir = Path(renderer.page_path(plan, stem)).parent
                keep(site / page_dir / assignment_notebook(stem), staging / page_dir / assignment_notebook(stem))
            written = renderer.render(
                plan, parsed, variant, staging, rebuild=frozenset(stems), old=site, release=release
            )
            result.pages += [site / p.relative_to(staging) for p in written]
            write_atomic(
                staging / STAMP,
                stamp_text(
                    {**fingerprints, **dict.fromkeys(unreleased, UNRELEASED)}, renderer=renderer.label, steps=steps
                ),
            )
    return result


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
        from course.workflows.render_quarto import QuartoRenderer

        return QuartoRenderer(quarto or find_quarto(plan.config.quarto))
    from course.workflows.render_pandoc import PandocRenderer

    return PandocRenderer(pandoc_version())


def _stale(plan: BuildPlan, variant: str, fingerprints: dict[str, str], renderer: Renderer) -> list[str]:
    """The lessons of one variant to rebuild: their inputs changed since its stamp, or their page is gone; all of
    them when another renderer (or another version of it) built the site."""
    site = plan.site_dir(variant)
    if read_stamp_renderer(site) != renderer.label:
        return list(fingerprints)
    changed = set(stale_lessons(read_stamp(site), fingerprints))
    return [stem for stem in fingerprints if stem in changed or not (site / renderer.page_path(plan, stem)).is_file()]


def draw_figures(plan: BuildPlan) -> None:
    """Redraw the figures lessons show when their inputs changed, and draw their diagrams for feedback pages."""
    from course.workflows.draw_figures import ensure_drawn

    ensure_drawn(plan.root)
