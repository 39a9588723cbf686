"""The student site offers each lesson's nbgrader assignment: the release notebook exactly as stock nbgrader makes it.

`nbgrader generate_assignment` runs in a throwaway copy of the course root (its own gradebook), so building
the site never touches the instructors' gradebook or release/ folder. A lesson has an assignment when
`course build` wrote its nbgrader source notebook (autograder/source/<lesson>/<lesson>.ipynb).
"""

from __future__ import annotations

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


def released_assignments(plan: BuildPlan, stems: list[str]) -> dict[str, object]:
    """The released notebook (nbformat node) of every lesson in STEMS that has an assignment."""
    course_root = plan.root / plan.config.autograder_dir
    return {stem: release_copy(course_root, stem) for stem in assignment_lessons(plan, stems)}


def assignment_lessons(plan: BuildPlan, stems: list[str]) -> list[str]:
    """The lessons in STEMS that have an assignment: `course build` wrote their nbgrader source notebook."""
    from course.assignment.make_source import source_notebook

    course_root = plan.root / plan.config.autograder_dir
    return [stem for stem in stems if source_notebook(course_root, stem).exists()]


def release_copy(course_root: Path, stem: str):
    """Run stock `nbgrader generate_assignment` on a copy of the source folder; return the released notebook."""
    import nbformat

    from course.assignment.make_source import source_notebook
    from course.workflows.grade import release

    source = source_notebook(course_root, stem)
    with tempfile.TemporaryDirectory(prefix="course-release-") as tmp:
        root = Path(tmp)
        (root / CONFIG_FILE).write_text(CONFIG, "utf-8")
        shutil.copytree(source.parent, source_notebook(root, stem).parent)
        return nbformat.read(release(root, stem), as_version=4)
