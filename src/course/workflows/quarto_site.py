"""`course build --renderer quarto`: one variant's site made by `quarto render --profile VARIANT`, exactly as a
Quarto user renders the project (its pre-render and post-render steps, course.workflows.quarto_hooks, add the
notebooks, the in-browser notebooks' lite/, MathJax and the checks), written into the build's staging folder.

Quarto renders the whole project at once (its sidebar, search and page links need every page), so every lesson
of the variant is rendered when any changed; the course's execution cache still spares unchanged notebooks.
"""

from __future__ import annotations

import sys
from pathlib import Path

from course.site.lite_site import LITE
from course.site.plan import BuildPlan
from course.tools.quarto import Quarto, run_quarto
from course.workflows.quarto_hooks import IN_COURSE_BUILD


def render_variant(plan: BuildPlan, variant: str, out: Path, quarto: Quarto) -> list[Path]:
    """Render VARIANT's site with QUARTO into OUT (a folder inside the project, as Quarto requires)."""
    before = set(out.rglob("*"))
    run_quarto(quarto, ["render", "--profile", variant, "--output-dir", str(out.relative_to(plan.root))],
               cwd=plan.root, env={"QUARTO_PYTHON": sys.executable, IN_COURSE_BUILD: "1"}, what=f"the {variant} site")
    return sorted(p for p in out.rglob("*") if p.is_file() and p not in before
                  and p.relative_to(out).parts[0] not in ("site_libs", LITE))  # the pages and notebooks, as pandoc's
