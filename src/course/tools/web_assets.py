"""MathJax, mermaid and MiniSearch for offline pages: npm registry packages installed by the set-up. mermaid and
MiniSearch are copied into each site; MathJax typesets the sites' formulas in node at `course build` (and is
inlined into formgrader's pages), as MiniSearch also builds the search index there."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from course.errors import ToolMissing


@dataclass(frozen=True)
class WebAsset:
    """One browser library: the npm package and the single file the pages load."""

    package: str
    file: str
    site_path: str  # where each site serves it ('': in no site)


WEB_ASSETS = (
    WebAsset("mathjax", "es5/tex-svg-full.js", ""),  # formgrader's pages; the sites' formulas come typeset
    WebAsset("mermaid", "dist/mermaid.min.js", "site_libs/mermaid/mermaid.min.js"),
    WebAsset("minisearch", "dist/umd/index.js", "site_libs/minisearch/minisearch.js"),
)
SEARCH_BUILDER = WebAsset("minisearch", "dist/cjs/index.cjs", "")  # the same library for node; not in any site
TYPESETTER = WebAsset("mathjax", "es5/node-main.js", "")  # MathJax for node, which typesets the sites' formulas


def locate_web_assets(project_root: Path) -> dict[WebAsset, Path]:
    """Where each library the pages load lies under node_modules."""
    return _locate(project_root, WEB_ASSETS)


def search_builder(project_root: Path) -> Path:
    """MiniSearch's build for node, which `course build` makes the search index with."""
    return _locate(project_root, (SEARCH_BUILDER,))[SEARCH_BUILDER]


def math_typesetter(project_root: Path) -> Path:
    """The mathjax package's folder, whose node build `course build` typesets the pages' formulas with."""
    return _locate(project_root, (TYPESETTER,))[TYPESETTER].parents[1]


def _locate(project_root: Path, assets: tuple[WebAsset, ...]) -> dict[WebAsset, Path]:
    """Where each of ASSETS lies under node_modules; names the missing ones and how to get them."""
    found, missing = {}, []
    wanted = json.loads((project_root / "package.json").read_text("utf-8"))["dependencies"]
    for asset in assets:
        path = project_root / "node_modules" / asset.package / asset.file
        if path.is_file():
            found[asset] = path
        else:
            missing.append(f"{asset.package}@{wanted.get(asset.package, '?')}")
    if missing:
        raise ToolMissing(
            f"browser libraries missing: {', '.join(missing)}; install them with "
            "`npm install --no-package-lock` in the project root (or run `make`)"
        )
    return found
