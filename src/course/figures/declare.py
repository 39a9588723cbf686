"""What a lesson's lessons/lessonNN/figures.py declares: each generated asset, how it is drawn, what it is made from.

figures.py defines FIGURES, a tuple of FigureSpec, and keeps its drawing code in modules beside it, imported
relatively inside the draw functions (`from .chart import draw`: the folder is loaded as one private package,
see course.lesson.data_modules). `course build` hashes every declared input plus figures.py itself and redraws
an asset only when one of them changed, so list the solution it plots, the lesson's own drawing modules
(`Path(__file__).parent / "chart.py"`) and any course module whose code shapes the output (`package_file`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from course.lesson.data_modules import load_file


@dataclass(frozen=True)
class FigureSpec:
    """One generated asset: where it goes, how to draw it, and the files its content depends on."""

    output: str  # project-relative path of the image (or data file)
    draw: Callable[[Path, Path], Path]  # draw(out_path, project_root) -> out_path
    inputs: tuple[str | Path, ...]  # files the output depends on: project-relative, or absolute paths


def load_solution(project_root: Path, relative: str) -> ModuleType:
    """Load a reference solution from this project's file (not whatever `solutions` is on sys.path)."""
    return load_file(
        Path(project_root) / relative, relative, "reference solution not found; the figures are computed from it"
    )


def package_file(module: str) -> str:
    """A course module's own file (e.g. course.figures.render): an input wherever the course package is installed."""
    return str(Path(importlib.util.find_spec(module).origin))
