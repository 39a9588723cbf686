"""The generated assets lessons show (figures, the lab's measurements), what each is made from, and remaking
only those whose inputs changed.

Each asset's inputs (the reference solution it plots, the code that draws or measures it) are hashed; the hash of
the last successful run is kept in the course cache (figures.json), so a rebuild with nothing changed does nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from course.config import load_config
from course.errors import CourseError, Location, ToolMissing
from course.fileio import write_atomic
from course.figures.zero3_comm_flow import draw_zero3_comm_flow
from course.figures.zero_memory import draw_zero_memory

MANIFEST = "figures.json"
LESSON05_SOLUTION = "solutions/lesson05.py"


@dataclass(frozen=True)
class FigureSpec:
    """One generated figure: where it goes, how to draw it, and the project files its content depends on."""

    output: str  # project-relative path of the image
    draw: Callable[[Path, Path], Path]  # draw(out_path, project_root) -> out_path
    inputs: tuple[str, ...]  # files (project-relative, or absolute for package modules) the image depends on


def load_solution(project_root: Path, relative: str) -> ModuleType:
    """Load a reference solution from this project's file (not whatever `solutions` is on sys.path)."""
    path = project_root / relative
    name = "_course_figure_input_" + relative.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except FileNotFoundError:
        raise CourseError("reference solution not found; the figures are computed from it", Location(relative)) from None
    return module


def _draw_lesson05_memory(out_path: Path, project_root: Path) -> Path:
    """图 5-3 from this project's lesson 5 solution."""
    solution = load_solution(project_root, LESSON05_SOLUTION)
    if not callable(getattr(solution, "zero_memory_per_gpu", None)):
        raise CourseError(
            "defines no zero_memory_per_gpu(num_params, dp, stage, k=...), which 图 5-3 is computed from",
            Location(LESSON05_SOLUTION),
        )
    return draw_zero_memory(out_path, memory_fn=solution.zero_memory_per_gpu)


def _draw_lesson05_comm_flow(out_path: Path, project_root: Path) -> Path:
    """The ZeRO-3 per-layer communication diagram (depends on no project data)."""
    return draw_zero3_comm_flow(out_path)


def _measure_lab(out_path: Path, project_root: Path) -> Path:
    """The lab's measurements of ZeRO-0..3 on torch.distributed, shown in the lesson's 实测 section."""
    try:
        from course.lab.run_lab import run_lab
    except ImportError as exc:
        raise ToolMissing(f"the lesson's 实测 section needs the lab ({exc}); install it with "
                          "pip install -e '.[lab]' (torch==2.13.0; run `make`)") from None
    report = run_lab(out=out_path)
    failed = [c for c in report["checks"] if not c["ok"]]
    if failed:
        raise CourseError(f"the lab's measurements disagree with the formulas in {len(failed)} check(s); "
                          f"run `course lab` to see them", Location(out_path))
    return out_path


def _lab_sources() -> tuple[str, ...]:
    """Every source file of the lab package: its measurements change only when they do."""
    lab = Path(__file__).resolve().parents[1] / "lab"
    return tuple(str(p) for p in sorted(lab.rglob("*")) if p.suffix in (".py", ".json"))


def _package_file(name: str) -> str:
    """A figure module's own file: an input wherever the course package is installed."""
    return str(Path(__file__).with_name(name))


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec(
        output="assets/figs/train_zero_memory.png",
        draw=_draw_lesson05_memory,
        inputs=(LESSON05_SOLUTION, _package_file("zero_memory.py")),
    ),
    FigureSpec(
        output="assets/zero3_comm_flow.svg",
        draw=_draw_lesson05_comm_flow,
        inputs=(_package_file("zero3_comm_flow.py"),),
    ),
)
LAB_MEASUREMENTS = FigureSpec(output="assets/lab/zero_measured.json", draw=_measure_lab, inputs=_lab_sources())
GENERATED_ASSETS: tuple[FigureSpec, ...] = FIGURES + (LAB_MEASUREMENTS,)


def inputs_digest(project_root: Path, spec: FigureSpec) -> str:
    """SHA-256 over each input's path and bytes, so any edit, rename or reordering changes it."""
    digest = hashlib.sha256()
    for relative in spec.inputs:
        try:
            data = (project_root / relative).read_bytes()
        except FileNotFoundError:
            raise CourseError(f"input of figure {spec.output} is missing", Location(relative)) from None
        for part in (relative.encode("utf-8"), data):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return digest.hexdigest()


def _read_manifest(path: Path) -> dict[str, str]:
    """Hashes of the last successful draws; an absent or unreadable cache just means everything is redrawn."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return {key: value for key, value in data.items() if isinstance(value, str)} if isinstance(data, dict) else {}


def ensure_figures(
    project_root: Path, *, cache_dir: Path | None = None, specs: tuple[FigureSpec, ...] = GENERATED_ASSETS
) -> list[Path]:
    """Draw each figure whose output is missing or whose inputs changed since its last draw; return those drawn."""
    project_root = Path(project_root)
    cache_dir = Path(cache_dir) if cache_dir else project_root / load_config(project_root).cache_dir
    manifest_path = cache_dir / MANIFEST
    manifest = _read_manifest(manifest_path)
    drawn = []
    for spec in specs:
        digest = inputs_digest(project_root, spec)
        out_path = project_root / spec.output
        if out_path.exists() and manifest.get(spec.output) == digest:
            continue
        drawn.append(spec.draw(out_path, project_root))
        manifest[spec.output] = digest
        write_atomic(manifest_path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return drawn
