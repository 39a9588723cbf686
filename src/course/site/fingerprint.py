"""Decide what a build has to do: a hash of everything each lesson's pages read, stamped into each built site.

A lesson's pages read its own files (its text, its data folder, its solutions module, its rubric), the assets its
text names, and what every page reads: the course package, the filter, the settings, a shared module, and every
lesson's front matter and file name (the index and the site's navigation show them). So an edit to one lesson's
text rebuilds that lesson only, and an edit to a title or to the engine rebuilds them all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from course.site.plan import BuildPlan
from course.tools.quarto import render_intermediate

STAMP = ".build-stamp"
PACKAGE = Path(__file__).resolve().parents[1]  # the course package, an input of every page
OWN_FILES = (
    "{lessons}/{stem}.qmd",
    "{lessons}/{stem}/",
    "solutions/{stem}.py",
    "solutions/{stem}/",
    "{autograder}/rubrics/{stem}.yml",
)


def source_fingerprint(plan: BuildPlan, variants: list[str]) -> str:
    """Hash of the build inputs (lessons, solutions, assets, filter, course package) and the variants."""
    h = hashlib.sha256(" ".join(variants).encode())
    for f in input_files(plan):
        h.update(f"{input_name(plan, f)}\0".encode() + f.read_bytes())
    return h.hexdigest()


def input_files(plan: BuildPlan, renderer_inputs: Iterable[str] = ()) -> Iterator[Path]:
    """Every file a build reads, in a stable order: the configured inputs and those of the renderer that makes the
    pages (RENDERER_INPUTS, e.g. Quarto's project files; generated assets left out), then the course package."""
    generated = generated_assets(plan)
    names = dict.fromkeys([*plan.config.build_inputs, *renderer_inputs])
    roots = [plan.root / p for p in names] + [PACKAGE]
    for root in roots:
        for f in files_under(root):
            if not written_among_inputs(f, generated):
                yield f


def generated_assets(plan: BuildPlan) -> list[Path]:
    """The project's generated assets ([tool.course] generated_assets): build outputs among its inputs."""
    return [plan.root / g for g in plan.config.generated_assets]


def written_among_inputs(path: Path, generated: list[Path]) -> bool:
    """Whether PATH, inside the build's input folders, is written there rather than read: one of the GENERATED
    assets (or in one), or what Quarto writes beside a lesson while it renders it."""
    return any(path == g or g in path.parents for g in generated) or render_intermediate(path)


def input_name(plan: BuildPlan, path: Path) -> str:
    """An input's name in the hash: a file of the course package by its place in the package, so a copy of the
    project built by another checkout's course (as the tests do) or an installed course rebuilds nothing; any other
    file by its project-relative path."""
    if path.is_relative_to(PACKAGE):
        return path.relative_to(PACKAGE.parent).as_posix()
    return path.relative_to(plan.root).as_posix() if path.is_relative_to(plan.root) else str(path)


def files_under(root: Path) -> Iterator[Path]:
    """Every file under ROOT (or ROOT itself, a file), in a stable order, bytecode caches left out."""
    files = sorted(root.rglob("*")) if root.is_dir() else [root]
    return (f for f in files if f.is_file() and "__pycache__" not in f.parts)


def lessons_reading(plan: BuildPlan, relative: str, texts: dict[str, str]) -> list[str]:
    """The lessons whose pages a project file (path relative to the root) can change: its own lesson by the
    layout, else the lessons whose text (TEXTS, by stem) names it when it is an asset, else every lesson."""
    for stem in texts:
        for pattern in OWN_FILES:
            own = pattern.format(lessons=plan.config.lessons_dir, autograder=plan.config.autograder_dir, stem=stem)
            if relative == own or (own.endswith("/") and relative.startswith(own)):
                return [stem]
    if relative.startswith(f"{plan.config.assets_dir}/"):
        naming = [stem for stem, text in texts.items() if relative in text]
        if naming:
            return naming
    return list(texts)


def lesson_fingerprints(plan: BuildPlan, renderer_inputs: Iterable[str] = ()) -> dict[str, str]:
    """Each lesson's hash over the files its pages read (see lessons_reading; RENDERER_INPUTS: the project files
    only the renderer reads) and every lesson's front matter."""
    texts = {p.stem: p.read_text("utf-8", errors="replace") for p in plan.lessons}
    shared = hashlib.sha256("".join(f"{stem}\0{front_matter(text)}\0" for stem, text in texts.items()).encode())
    own = {stem: hashlib.sha256() for stem in texts}
    for f in input_files(plan, renderer_inputs):
        relative = input_name(plan, f)
        data = f"{relative}\0{f.stat().st_size}\0".encode() + f.read_bytes()
        readers = lessons_reading(plan, relative, texts)
        for h in [shared] if len(readers) == len(texts) else [own[stem] for stem in readers]:
            h.update(data)
    return {
        stem: hashlib.sha256(f"{shared.hexdigest()}{h.hexdigest()}".encode()).hexdigest() for stem, h in own.items()
    }


def front_matter(text: str) -> str:
    """The YAML between a lesson's first two '---' lines (its title, number, prerequisites), or ''."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return ""
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), len(lines))
    return "\n".join(lines[1:end])


def stale_lessons(stamped: dict[str, str], fingerprints: dict[str, str]) -> list[str]:
    """The lessons to rebuild: those whose hash differs from the one stamped at the site's last build."""
    return [stem for stem, fp in fingerprints.items() if stamped.get(stem) != fp]


def read_stamp(site: Path) -> dict[str, str]:
    """The per-lesson hashes a site was built from; {} when it has none (or an older, whole-course stamp)."""
    try:
        data = json.loads((site / STAMP).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    lessons = data.get("lessons") if isinstance(data, dict) else None
    return {k: v for k, v in lessons.items() if isinstance(v, str)} if isinstance(lessons, dict) else {}


def read_stamp_renderer(site: Path) -> str | None:
    """What rendered a site's pages, as its stamp records it ("pandoc 3.6.3", "quarto 1.7.34"); None without one."""
    try:
        data = json.loads((site / STAMP).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("renderer") if isinstance(data, dict) else None


def read_steps(site: Path) -> dict[str, str]:
    """The hashes of the site-wide steps' inputs (e.g. lite: course.site.lite_site) a site was built from."""
    try:
        steps = json.loads((site / STAMP).read_text("utf-8")).get("steps")
    except (OSError, ValueError, AttributeError):
        return {}
    return {k: v for k, v in steps.items() if isinstance(v, str)} if isinstance(steps, dict) else {}


def stamp_text(fingerprints: dict[str, str], *, renderer: str, steps: dict[str, str] | None = None) -> str:
    """What a fully built site's stamp holds: each lesson's hash, each site-wide step's, and the renderer (name and
    version) that built it, so that switching renderer, or upgrading it, rebuilds every page."""
    return (
        json.dumps({"lessons": fingerprints, "renderer": renderer, "steps": steps or {}}, indent=1, sort_keys=True)
        + "\n"
    )
