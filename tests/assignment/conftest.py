"""Scratch nbgrader courses for lesson05: released once per session, graded once with every sample submission."""

from __future__ import annotations

import shutil

import pytest

from tests.assignment.make_submissions import EXPECTED, FIXTURES, OUT
from tests.conftest import submit


@pytest.fixture(scope="session")
def release_nb(released):
    """The released lesson05 notebook."""
    import nbformat

    return nbformat.read(released / "release" / "lesson05" / "lesson05.ipynb", as_version=4)


@pytest.fixture(scope="session")
def graded(released, tmp_path_factory):
    """Every committed sample submitted as its own student and graded once by `course grade` (the GradeRun)."""
    from course.workflows.grade import grade_assignment

    root = tmp_path_factory.mktemp("graded") / "autograder"
    shutil.copytree(released, root)
    for name in FIXTURES:
        submit(root, name, OUT / f"{name}.ipynb", EXPECTED[name].get("file", "lesson05.ipynb"))
    return grade_assignment(root, "lesson05")
