"""A scratch course project: the real project's tooling (config, Lua filter, web assets, nbgrader config, lite/)
and only the lessons a test brings."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from course.config import load_config

ROOT = Path(__file__).resolve().parents[1]


def scratch_project(root: Path, *trees: Path) -> Path:
    """ROOT/.. tooling plus each TREE's files (lessons/, solutions/, autograder/rubrics/ …) copied into ROOT."""
    for name in ("pyproject.toml", "package.json"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "_extensions", root / "_extensions")
    shutil.copytree(ROOT / "lite", root / "lite")  # the in-browser notebooks' config (course.site.lite_site)
    (root / "autograder").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "autograder" / "nbgrader_config.py", root / "autograder" / "nbgrader_config.py")
    os.symlink(ROOT / "node_modules", root / "node_modules")
    share_lite_bytecode(root / load_config(root).cache_dir)
    share_drawn_diagrams(root)
    for tree in trees:
        shutil.copytree(tree, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("README.md", "__pycache__"))
    return root


def share_drawn_diagrams(root: Path) -> None:
    """ROOT given this project's drawn diagrams (course.figures.diagrams: named by their content, so any project's
    build may read them), hard-linked: a build of lessons showing lesson 5's diagrams draws none of them again."""
    from course.figures.diagrams import diagram_store

    if diagram_store(ROOT).is_dir():
        shutil.copytree(diagram_store(ROOT), diagram_store(root), copy_function=os.link)


def share_lite_bytecode(cache_dir: Path) -> None:
    """CACHE_DIR (a build's cache) given this project's compiled in-browser runtime (the same for every build of the
    same runtime and wheels, keyed by them: course.tools.pyodide_python), hard-linked, when this project has made it:
    that build then links it as the real build does instead of compiling it again."""
    from course.site.lite_site import BYTECODE_CACHE, LITE

    made = ROOT / load_config(ROOT).cache_dir / LITE / BYTECODE_CACHE
    if made.is_dir():
        shutil.copytree(made, cache_dir / LITE / BYTECODE_CACHE, copy_function=os.link)
