"""The student site offers each lesson's nbgrader assignment: the release notebook exactly as stock nbgrader makes it.

`nbgrader generate_assignment` runs in a throwaway copy of the course root (its own gradebook), so building
the site never touches the instructors' gradebook or release/ folder. A lesson has an assignment when
`course build` wrote its nbgrader source notebook (autograder/source/<lesson>/<lesson>.ipynb). The release is kept
in the build cache (RELEASES) under the hash of everything it is made from, so a build or a Quarto render that
changed none of it reuses the notebook nbgrader made instead of running nbgrader again.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from course.site.plan import BuildPlan

CONFIG_FILE = "nbgrader_config.py"
# The course's nbgrader settings (as in autograder/nbgrader_config.py), rooted at the throwaway copy.
CONFIG = (
    "from pathlib import Path\nfrom course.nbgrader_hooks.config import configure\n"
    "configure(get_config(), Path(__file__).resolve().parent)\n"
)


RELEASES = "releases"  # the build cache's folder of released notebooks, one per lesson: <stem>-<key>.ipynb


def released_assignments(plan: BuildPlan, stems: list[str]) -> dict[str, object]:
    """The released notebook (nbformat node) of every lesson in STEMS that has an assignment."""
    course_root, engine = plan.root / plan.config.autograder_dir, engine_key()  # the engine hashed once per build
    return {
        stem: cached_release(plan.cache_dir / RELEASES, course_root, stem, engine)
        for stem in assignment_lessons(plan, stems)
    }


def assignment_lessons(plan: BuildPlan, stems: list[str]) -> list[str]:
    """The lessons in STEMS that have an assignment: `course build` wrote their nbgrader source notebook."""
    from course.assignment.make_source import source_notebook

    course_root = plan.root / plan.config.autograder_dir
    return [stem for stem in stems if source_notebook(course_root, stem).exists()]


def cached_release(cache: Path, course_root: Path, stem: str, engine: str | None = None):
    """STEM's released notebook: the one in CACHE made from the same inputs (release_key; ENGINE as engine_key gives
    it), else a new release (release_copy), which then replaces the lesson's older one there."""
    import nbformat

    from course.fileio import write_atomic

    kept = cache / f"{stem}-{release_key(course_root, stem, engine)}.ipynb"
    if kept.is_file():
        return nbformat.read(kept, as_version=4)
    released = release_copy(course_root, stem)
    for old in cache.glob(f"{stem}-*.ipynb"):
        old.unlink(missing_ok=True)  # another render in this checkout may have removed it first
    write_atomic(kept, released)
    return nbformat.reads(released.decode("utf-8"), as_version=4)


def release_key(course_root: Path, stem: str, engine: str | None = None) -> str:
    """Hash of what STEM's release is made from: its source folder and the engine (engine_key)."""
    from course.assignment.make_source import source_notebook

    return _digest(engine or engine_key(), source_notebook(course_root, stem).parent)[:32]


def engine_key() -> str:
    """Hash of what makes every release: the course's nbgrader config and code (the course package) and nbgrader's
    version."""
    from importlib.metadata import version

    return _digest(f"{CONFIG}\0nbgrader {version('nbgrader')}", Path(__file__).resolve().parents[1])


def _digest(seed: str, root: Path) -> str:
    """SHA-256 of SEED and every file under ROOT (its path there and its bytes)."""
    from course.site.fingerprint import files_under

    h = hashlib.sha256(seed.encode())
    for path in files_under(root):
        h.update(f"\0{path.relative_to(root).as_posix()}\0".encode() + path.read_bytes())
    return h.hexdigest()


def release_copy(course_root: Path, stem: str) -> bytes:
    """Run stock `nbgrader generate_assignment` on a copy of the source folder; return the released notebook."""
    from course.assignment.make_source import source_notebook
    from course.workflows.grade import release

    source = source_notebook(course_root, stem)
    with tempfile.TemporaryDirectory(prefix="course-release-") as tmp:
        root = Path(tmp)
        (root / CONFIG_FILE).write_text(CONFIG, "utf-8")
        shutil.copytree(source.parent, source_notebook(root, stem).parent)
        return release(root, stem).read_bytes()
