"""Stock `nbgrader autograde` on an assignment not released yet stops with one line and writes nothing: no gradebook
(nbgrader would create it and a student in it), no autograded/ folder, no batch lock."""

from __future__ import annotations

import shutil

import pytest

from tests.assignment.make_submissions import OUT
from tests.classes import submit

MESSAGE = (
    "lesson05 is not released yet: run `nbgrader generate_assignment lesson05` first (nothing was graded or written)"
)


def written(root) -> set[str]:
    """Every path in the course root, relative to it."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("left", ["source only", "release without the gradebook"])
def test_stock_autograde_before_the_release_writes_nothing(released, tmp_path, left):
    from course.workflows.grade import run_nbgrader

    root = shutil.copytree(released, tmp_path / "autograder")
    for made in ("gradebook.db", "release-history", *(("release",) if left == "source only" else ())):
        shutil.rmtree(root / made) if (root / made).is_dir() else (root / made).unlink()
    submit(root, "2026001", OUT / "reference.ipynb")
    before = written(root)
    run = run_nbgrader(root, "autograde", "lesson05", check=False)
    assert run.returncode != 0
    assert "[AutogradeApp | ERROR] " in run.stderr and MESSAGE in run.stderr and "Traceback" not in run.stderr
    assert written(root) == before  # no gradebook.db, autograded/, .course-grade/batch.lock
