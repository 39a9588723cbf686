"""The Quarto renderer of `course build --renderer quarto`: one variant's site made by `quarto render --profile
VARIANT`, exactly as a Quarto user renders the project, written into the build's staging folder; its project
scripts (course.workflows.quarto_hooks) run the course's site steps around Quarto's pages.

Quarto renders the whole project at once (its sidebar, search and page links need every page), so every lesson
of the variant is rendered when any changed; the course's execution cache still spares unchanged notebooks.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from course.lesson.model import Lesson
from course.lesson.variants import Variant
from course.site.departures_page import quarto_source
from course.site.lite_site import LITE
from course.site.plan import BuildPlan
from course.tools.quarto import Quarto, run_quarto
from course.workflows.site_steps import PageLayout

# Set by `course build --renderer quarto` for the render it runs: the build holds the project's lock and has drawn
# the figures already, so the pre-render step must not wait for that lock.
IN_COURSE_BUILD = "COURSE_BUILD_RENDERING"
# What the course's filter loads on every Quarto page (src/course/site/, served from site_libs/), as the pandoc pages
# load them: the diagrams' look, the figures' full-size view, the in-browser block's and the index's notes
# (course-lite.js), and the search's note from file://.
QUARTO_SCRIPTS = ("mermaid-options.js", "course-quarto.js", "figure-viewer.js", "course-lite.js")
# The Quarto project's own files (only Quarto reads them; an edit rebuilds no pandoc page): its settings and
# profiles, the front page, the project scripts and styles, the filter declared as an extension.
QUARTO_FILES = ("_quarto.yml", "index.qmd", "scripts/quarto_hook.py", "scripts/quarto.css", "_extensions")


def quarto_layout(plan: BuildPlan) -> PageLayout:
    """Quarto's site: lesson pages under lessons/, linked by their sources, departures pages at the root."""
    return PageLayout(
        lessons_dir=plan.config.lessons_dir,
        page_suffix=".qmd",
        departures_source=quarto_source,
        index_prefix="./",
        scripts=QUARTO_SCRIPTS,
        index_source="index.qmd",
    )


@dataclass(frozen=True)
class QuartoRenderer:
    """Quarto 1.7+ rendering the course's Quarto project; its project scripts release the assignments themselves."""

    quarto: Quarto
    name: str = "quarto"
    releases_assignments: bool = True  # the pre-render step releases every rendered lesson's assignment

    @property
    def version(self) -> str:
        return self.quarto.version

    @property
    def label(self) -> str:
        """Name and version, as the site's stamp records them."""
        return f"{self.name} {self.version}"

    def inputs(self, plan: BuildPlan) -> list[str]:
        """The project files only Quarto reads: QUARTO_FILES and each variant's profile (_quarto-VARIANT.yml)."""
        return [*QUARTO_FILES, *(f"_quarto-{variant}.yml" for variant in plan.config.variants)]

    def page_path(self, plan: BuildPlan, stem: str) -> str:
        """A lesson's page in the site: under the lessons' folder, as in the project."""
        return f"{plan.config.lessons_dir}/{stem}.html"

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
        """Render VARIANT's whole site into OUT (a folder inside the project, as Quarto requires): Quarto renders
        every page whatever REBUILD holds, into a fresh OUT (OLD unused), and releases the assignments itself
        (RELEASE is always true for it: see releases_assignments)."""
        before = set(out.rglob("*"))
        run_quarto(
            self.quarto,
            ["render", "--profile", variant.name, "--output-dir", str(out.relative_to(plan.root))],
            cwd=plan.root,
            env={"QUARTO_PYTHON": sys.executable, IN_COURSE_BUILD: "1"},
            what=f"the {variant.name} site",
        )
        return sorted(
            p
            for p in out.rglob("*")
            if p.is_file() and p not in before and p.relative_to(out).parts[0] not in ("site_libs", LITE)
        )  # pages and notebooks, as pandoc's
