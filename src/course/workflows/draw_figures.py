"""The generated assets lessons show (figures, the lab's measurements), what each is made from, and remaking
only those whose inputs changed.

Each lesson declares its own in lessons/lessonNN/figures.py: a tuple FIGURES of FigureSpec, built with the
helpers here (load_solution, package_file, lab_sources). Each asset's inputs (the reference solution it plots,
the code that draws or measures it, the figures.py itself) are hashed; the hash of the last successful run is
kept in the course cache (figures.json), so a rebuild with nothing changed does nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType

from course.config import load_config
from course.errors import CourseError, Location, ToolMissing
from course.fileio import write_atomic

MANIFEST = "figures.json"


@dataclass(frozen=True)
class FigureSpec:
    """One generated figure: where it goes, how to draw it, and the project files its content depends on."""

    output: str  # project-relative path of the image
    draw: Callable[[Path, Path], Path]  # draw(out_path, project_root) -> out_path
    inputs: tuple[str, ...]  # files (project-relative, or absolute for package modules) the image depends on


def load_solution(project_root: Path, relative: str) -> ModuleType:
    """Load a reference solution from this project's file (not whatever `solutions` is on sys.path)."""
    return _load_module(Path(project_root) / relative, relative, "reference solution not found; the figures are "
                                                                  "computed from it")


def _load_module(path: Path, shown: str, missing: str) -> ModuleType:
    """Import one project file under a private name."""
    name = "_course_project_" + shown.replace("/", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except FileNotFoundError:
        raise CourseError(missing, Location(shown)) from None
    return module


def lab_sources() -> tuple[str, ...]:
    """Every source file of the lab package: its measurements change only when they do."""
    lab = Path(__file__).resolve().parents[1] / "lab"
    return tuple(str(p) for p in sorted(lab.rglob("*")) if p.suffix in (".py", ".json"))


def package_file(module: str) -> str:
    """A module's own file (e.g. course.figures.zero_memory): an input wherever the course package is installed."""
    return str(Path(importlib.util.find_spec(module).origin))


def measure_lab(out_path: Path, project_root: Path) -> Path:
    """The lab's measurements of ZeRO-0..3 on torch.distributed, shown in a lesson's 实测 section."""
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


def lesson_figures(project_root: Path) -> tuple[FigureSpec, ...]:
    """Every lesson's declared figures, each also depending on the figures.py that declares it."""
    from course.lesson.discover import discover_lessons

    project_root = Path(project_root)
    lessons_dir = project_root / load_config(project_root).lessons_dir
    specs: list[FigureSpec] = []
    for lesson in discover_lessons(lessons_dir) if lessons_dir.is_dir() else ():
        if lesson.figures is None:
            continue
        shown = str(lesson.figures.relative_to(project_root))
        declared = getattr(_load_module(lesson.figures, shown, "figures file not found"), "FIGURES", None)
        if not isinstance(declared, tuple) or not all(isinstance(f, FigureSpec) for f in declared):
            raise CourseError("expected FIGURES = (FigureSpec(...), ...) built with course.workflows.draw_figures",
                              Location(shown))
        specs += [replace(f, inputs=(*f.inputs, shown)) for f in declared]
    outputs = [f.output for f in specs]
    if len(set(outputs)) != len(outputs):
        twice = sorted({o for o in outputs if outputs.count(o) > 1})
        raise CourseError(f"two figures write {', '.join(twice)}; expected one figure per output file",
                          Location(lessons_dir.name))
    return tuple(specs)


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
    project_root: Path, *, cache_dir: Path | None = None, specs: tuple[FigureSpec, ...] | None = None
) -> list[Path]:
    """Draw each figure whose output is missing or whose inputs changed since its last draw; return those drawn."""
    project_root = Path(project_root)
    specs = lesson_figures(project_root) if specs is None else specs
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
