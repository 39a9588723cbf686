"""A scratch course project: the real project's tooling (config, Lua filter, web assets, nbgrader config, lite/)
and only the lessons a test brings."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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
    for tree in trees:
        shutil.copytree(tree, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("README.md", "__pycache__"))
    return root
