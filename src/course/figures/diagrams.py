"""The lessons' mermaid diagrams drawn as SVG, kept by content in the build cache for feedback pages.

The sites draw their diagrams in the reader's browser (mermaid in site_libs/). A feedback page is one file a student
opens, so it carries its diagrams drawn (course.nbgrader_hooks.drawn_diagrams) instead of mermaid's 2.7 MB script.
Drawing takes a headless Chromium (about 1.5 CPU-s to start and stop), so `course build` draws each lesson's diagrams
once into the build cache (<cache_dir>/diagrams/, one SVG per diagram, named by the hash of mermaid's script, its
settings and the diagram's source: a new mermaid or an edited diagram is a new name) and feedback reads them there.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from course.fileio import write_atomic

STORE = "diagrams"  # the folder of drawn diagrams in the build cache
MERMAID_BLOCK = re.compile(r"^[ \t]*(`{3,})[ \t]*\{?\.?mermaid\}?[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
SETTINGS = (
    '{ startOnLoad: false, securityLevel: "strict", theme: "default", '
    "flowchart: { useMaxWidth: true, wrappingWidth: 420 }, sequence: { useMaxWidth: true } }"
)  # as course.js


def diagram_sources(texts: Iterable[str]) -> list[str]:
    """The mermaid sources of the markdown TEXTS, each once, in order."""
    return list(dict.fromkeys(m.group(2) for text in texts for m in MERMAID_BLOCK.finditer(text)))


def diagram_store(project_root: Path) -> Path:
    """The project's folder of drawn diagrams, in its build cache ([tool.course] cache_dir)."""
    from course.config import load_config

    return Path(project_root) / load_config(Path(project_root)).cache_dir / STORE


def mermaid_path(project_root: Path) -> Path:
    """The course's mermaid script as the sites load it (node_modules, installed by `make`); ToolMissing says how to
    get it."""
    from course.tools.web_assets import locate_web_assets

    return next(path for asset, path in locate_web_assets(project_root).items() if asset.package == "mermaid")


def diagram_key(script: bytes, source: str) -> str:
    """The hash naming SOURCE drawn by the mermaid SCRIPT with SETTINGS."""
    digest = _hashed_script(script).copy()
    for part in (SETTINGS.encode("utf-8"), source.encode("utf-8")):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


@lru_cache(maxsize=2)
def _hashed_script(script: bytes):
    """The key's hash with the 2.7 MB SCRIPT fed in once, not again for each diagram and each look-up."""
    digest = hashlib.sha256()
    digest.update(len(script).to_bytes(8, "big"))
    digest.update(script)
    return digest


def diagram_file(store: Path, script: bytes, source: str) -> Path:
    """Where STORE keeps SOURCE drawn by the mermaid SCRIPT."""
    return Path(store) / f"{diagram_key(script, source)}.svg"


def stored(store: Path, script: bytes, sources: Iterable[str]) -> dict[str, str]:
    """The SVG of each of SOURCES that STORE holds drawn by SCRIPT (the others left out)."""
    found = {}
    for source in sources:
        path = diagram_file(store, script, source)
        if path.is_file():
            found[source] = path.read_text("utf-8")
    return found


def keep(store: Path, script: bytes, drawn: dict[str, str]) -> list[Path]:
    """Write each drawn SVG into STORE (whole files: a reader sees none or all of one)."""
    return [write_atomic(diagram_file(store, script, source), svg) for source, svg in drawn.items()]


def draw(sources: list[str], script: bytes) -> dict[str, str]:
    """Each source's SVG, drawn by the mermaid SCRIPT in headless Chromium with every request refused. Each SVG's id
    (which its own styles are scoped by) comes from its key, so diagrams drawn apart never share one on a page."""
    from course.tools.chromium import launch_chromium

    with launch_chromium() as browser:
        page = browser.new_page()
        page.route("**/*", lambda route: route.abort())
        page.set_content('<!DOCTYPE html><html lang="zh-CN"><body></body></html>')
        page.add_script_tag(content=script.decode("utf-8"))
        page.evaluate(f"() => mermaid.initialize({SETTINGS})")
        return {
            source: page.evaluate(
                "async ([id, text]) => (await mermaid.render(id, text)).svg",
                [f"course-diagram-{diagram_key(script, source)[:12]}", source],
            ).replace("\n", " ")
            for source in sources
        }
