"""The generated assets lessons show (figures, the lab's measurements): discovering what each lesson declares,
and remaking only those whose inputs changed; and the lessons' diagrams drawn for feedback pages
(course.figures.diagrams), each once.

Each lesson declares its own in lessons/lessonNN/figures.py: a tuple FIGURES of FigureSpec (course.figures.declare;
the lab's measurements through course.lab.lesson_asset), drawn by code kept beside it in the lesson's data folder.
Each asset's inputs (the reference solution it plots, the code that draws or measures it, the figures.py itself)
are hashed; the hash of the last successful run is kept in the course cache (figures.json), so a rebuild with
nothing changed does nothing.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path

from course.config import load_config
from course.errors import CourseError, Location
from course.figures.declare import FigureSpec
from course.fileio import project_lock, write_atomic
from course.lesson.data_modules import load_data_module

MANIFEST = "figures.json"
PACKAGE = Path(__file__).resolve().parents[1]  # the course package whose code draws and measures


def _project_relative(project_root: Path, path: str | Path) -> str:
    """An input as hashed: project-relative where it lies in the project, so moving the checkout redraws nothing."""
    path = Path(path)
    if path.is_absolute() and path.is_relative_to(project_root):
        return path.relative_to(project_root).as_posix()
    return str(path)


def lesson_figures(project_root: Path) -> tuple[FigureSpec, ...]:
    """Every lesson's declared figures, each also depending on the figures.py that declares it."""
    from course.lesson.discover import discover_lessons

    project_root = Path(project_root).resolve()
    lessons_dir = project_root / load_config(project_root).lessons_dir
    specs: list[FigureSpec] = []
    for lesson in discover_lessons(lessons_dir) if lessons_dir.is_dir() else ():
        if lesson.figures is None:
            continue
        shown = str(lesson.figures.relative_to(project_root))
        declared = getattr(load_data_module(lesson.data_dir, "figures", shown), "FIGURES", None)
        if not isinstance(declared, tuple) or not all(isinstance(f, FigureSpec) for f in declared):
            raise CourseError(
                "expected FIGURES = (FigureSpec(...), ...) built with course.figures.declare", Location(shown)
            )
        specs += [replace(f, inputs=(*(_project_relative(project_root, i) for i in f.inputs), shown)) for f in declared]
    outputs = [f.output for f in specs]
    if len(set(outputs)) != len(outputs):
        twice = sorted({o for o in outputs if outputs.count(o) > 1})
        raise CourseError(
            f"two figures write {', '.join(twice)}; expected one figure per output file", Location(lessons_dir.name)
        )
    return tuple(specs)


def input_name(project_root: Path, relative: str) -> str:
    """An input's name in the hash: a file of the course package by its place in the package, so a copy of the
    project built by another checkout's course (as the tests do) or an installed course redraws nothing; any other
    file by its project-relative path."""
    path = (Path(project_root) / relative).resolve()
    return path.relative_to(PACKAGE.parent).as_posix() if path.is_relative_to(PACKAGE) else str(relative)


def inputs_digest(project_root: Path, spec: FigureSpec) -> str:
    """SHA-256 over each input's name and bytes, so any edit, rename or reordering changes it."""
    digest = hashlib.sha256()
    for relative in spec.inputs:
        try:
            data = (project_root / relative).read_bytes()
        except FileNotFoundError:
            raise CourseError(f"input of figure {spec.output} is missing", Location(relative)) from None
        for part in (input_name(project_root, relative).encode("utf-8"), data):
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
    drawn = []
    with project_lock(cache_dir, what="drawing figures"):
        manifest = _read_manifest(manifest_path)
        for spec in specs:
            digest = inputs_digest(project_root, spec)
            out_path = project_root / spec.output
            if out_path.exists() and manifest.get(spec.output) == digest:
                continue
            drawn.append(spec.draw(out_path, project_root))
            manifest[spec.output] = digest
            write_atomic(manifest_path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return drawn


def ensure_drawn(project_root: Path) -> None:
    """What a build draws before its pages: the lessons' figures, and their diagrams for feedback pages."""
    ensure_figures(project_root)
    ensure_diagrams(project_root)


def ensure_diagrams(project_root: Path) -> list[Path]:
    """Draw into the build cache each lesson diagram it lacks (feedback pages carry them drawn); return the files
    written. Without Chromium, Playwright or mermaid nothing is drawn: feedback then draws or inlines them itself."""
    from course.figures.diagrams import diagram_file, diagram_sources, diagram_store, draw, keep, mermaid_path
    from course.lesson.discover import discover_lessons

    project_root = Path(project_root)
    lessons_dir = project_root / load_config(project_root).lessons_dir
    lessons = discover_lessons(lessons_dir) if lessons_dir.is_dir() else ()
    sources = diagram_sources(lesson.qmd.read_text("utf-8") for lesson in lessons)
    if not sources:
        return []
    store = diagram_store(project_root)
    try:
        script = mermaid_path(project_root).read_bytes()
        missing = [s for s in sources if not diagram_file(store, script, s).is_file()]
        return keep(store, script, draw(missing, script)) if missing else []
    except Exception as exc:  # no mermaid or Chromium (ToolMissing), no Playwright, or Playwright's own Error
        print(
            f"the lessons' diagrams are not drawn for feedback pages, which will draw them themselves: {exc}",
            file=sys.stderr,
        )
        return []
