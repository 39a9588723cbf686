"""The lesson's mermaid diagrams drawn once, as SVG, into feedback pages instead of mermaid's 2.7 MB script in each.

Formgrader draws diagrams in the grader's browser with the course's mermaid inlined; a feedback page is one file a
student fetches, so inlining the script there costs every student's page 2.7 MB for the same few diagrams. A
generate_feedback run draws each distinct diagram once, with that same mermaid in headless Chromium (the course's
page-drawing tool), and puts the SVG where the diagram's source was. Where Chromium or Playwright is not installed,
nothing is drawn and the page inlines the script as before (the caller's fallback).
"""

from __future__ import annotations

import re
from pathlib import Path

MERMAID_BLOCK = re.compile(r"^[ \t]*(`{3,})[ \t]*\{?\.?mermaid\}?[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
SETTINGS = (
    '{ startOnLoad: false, securityLevel: "strict", theme: "default", '
    "flowchart: { useMaxWidth: true, wrappingWidth: 420 }, sequence: { useMaxWidth: true } }"
)  # as course.js
_drawn: dict[str, str] = {}  # diagram source → SVG, for the whole process: one generate_feedback run, one drawing


def diagram_sources(cells) -> list[str]:
    """The mermaid sources of the markdown cells, each once, in order."""
    return list(
        dict.fromkeys(m.group(2) for c in cells if c.cell_type == "markdown" for m in MERMAID_BLOCK.finditer(c.source))
    )


def draw(sources: list[str], mermaid_js: Path) -> dict[str, str]:
    """Each source's SVG, drawn by MERMAID_JS in headless Chromium with every request refused."""
    from course.tools.chromium import launch_chromium

    script = Path(mermaid_js).read_text("utf-8")
    with launch_chromium() as browser:
        page = browser.new_page()
        page.route("**/*", lambda route: route.abort())
        page.set_content('<!DOCTYPE html><html lang="zh-CN"><body></body></html>')
        page.add_script_tag(content=script)
        page.evaluate(f"() => mermaid.initialize({SETTINGS})")
        return {
            source: page.evaluate(
                "async ([id, text]) => (await mermaid.render(id, text)).svg", [f"course-diagram-{i}", source]
            ).replace("\n", " ")
            for i, source in enumerate(sources)
        }


def draw_into(cells, mermaid_js: Path) -> None:
    """Replace every mermaid block of CELLS with its drawn SVG (drawing what this process has not drawn yet)."""
    missing = [s for s in diagram_sources(cells) if s not in _drawn]
    if missing:
        _drawn.update(draw(missing, mermaid_js))
    for cell in cells:
        if cell.cell_type == "markdown":
            cell.source = MERMAID_BLOCK.sub(
                lambda m: f'<div class="mermaid-drawn">{_drawn[m.group(2)]}</div>', cell.source
            )
