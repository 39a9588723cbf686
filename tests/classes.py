"""A class in a course root, as the grading tests set one up: a copy of the released lesson05 course and each
student's notebook where `nbgrader collect` puts it."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path


def submit(root: Path, student: str, notebook: Path, name: str = "lesson05.ipynb") -> Path:
    """Put a notebook where `nbgrader collect` would: submitted/<student>/lesson05/<name>."""
    folder = root / "submitted" / student / "lesson05"
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(notebook, folder / name))


def course_with_class(released: Path, where: Path, notebooks: Mapping[str, Path], config: str = "") -> Path:
    """WHERE/autograder: a copy of the RELEASED course root with NOTEBOOKS (student → notebook) handed in and CONFIG
    (nbgrader settings) appended to its nbgrader_config.py."""
    root = where / "autograder"
    shutil.copytree(released, root)
    for student, notebook in notebooks.items():
        submit(root, student, notebook)
    if config:
        with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
            f.write("\n" + config + "\n")
    return root
