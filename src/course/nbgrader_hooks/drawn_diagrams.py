"""The lesson's mermaid diagrams, as SVG, in feedback pages instead of mermaid's 2.7 MB script in each.

Formgrader draws diagrams in the grader's browser with the course's mermaid inlined; a feedback page is one file a
student fetches, so inlining the script there costs every student's page 2.7 MB for the same few diagrams. The page
takes each diagram as `course build` drew it into the build cache (course.figures.diagrams); one the cache lacks (a
build from before, an edited release) is drawn here with that same mermaid in headless Chromium, once per process.
Where it cannot be drawn (no Chromium or Playwright), the page inlines the script as before (the caller's fallback).
"""

from __future__ import annotations

from pathlib import Path

from course.figures.diagrams import MERMAID_BLOCK, diagram_sources, draw, stored

_drawn: dict[str, str] = {}  # diagram source → SVG drawn in this process (one generate_feedback run)


def draw_into(cells, mermaid_js: Path, store: Path) -> None:
    """Replace every mermaid block of CELLS with its SVG: from STORE (the build cache's drawings) or drawn here."""
    sources = diagram_sources(c.source for c in cells if c.cell_type == "markdown")
    script = Path(mermaid_js).read_bytes()
    found = {s: _drawn[s] for s in sources if s in _drawn}
    found.update(stored(store, script, [s for s in sources if s not in found]))
    missing = [s for s in sources if s not in found]
    if missing:
        _drawn.update(draw(missing, script))
        found.update({s: _drawn[s] for s in missing})
    for cell in cells:
        if cell.cell_type == "markdown":
            cell.source = MERMAID_BLOCK.sub(
                lambda m: f'<div class="mermaid-drawn">{found[m.group(2)]}</div>', cell.source
            )
