"""The lab's measurements as an asset a lesson declares in its figures.py, remade when the lab's code changes.

    from course.lab.lesson_asset import lab_measurements
    FIGURES = (..., lab_measurements("assets/lab/zero_measured.json"))

The lesson's 实测 section then reads that file (course.lab.lesson_view). Declaring it costs nothing: torch is
imported only when the measurement runs.
"""

from __future__ import annotations

from pathlib import Path

from course.errors import CourseError, Location, ToolMissing
from course.figures.declare import FigureSpec


def lab_sources() -> tuple[str, ...]:
    """Every source file of the lab package: its measurements change only when they do."""
    lab = Path(__file__).resolve().parent
    return tuple(str(p) for p in sorted(lab.rglob("*")) if p.suffix in (".py", ".json"))


def measure_lab(out_path: Path, project_root: Path) -> Path:
    """The lab's measurements of ZeRO-0..3 on torch.distributed; any check that disagrees with a formula fails."""
    try:
        from course.lab.run_lab import run_lab
    except ImportError as exc:
        raise ToolMissing(
            f"the lesson's 实测 section needs the lab ({exc}); install it with "
            "pip install -e '.[lab]' (torch==2.13.0; run `make`)"
        ) from None
    report = run_lab(out=out_path)
    failed = [c for c in report["checks"] if not c["ok"]]
    if failed:
        raise CourseError(
            f"the lab's measurements disagree with the formulas in {len(failed)} check(s); "
            f"run `course lab` to see them",
            Location(out_path),
        )
    return out_path


def lab_measurements(output: str) -> FigureSpec:
    """The lab's report file at OUTPUT (project-relative), measured again whenever a lab source changes."""
    return FigureSpec(output, measure_lab, lab_sources())
