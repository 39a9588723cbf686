"""A course whose students wrote answers: what graders meet in formgrader and students read in early feedback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.classes import course_with_class
from tests.conftest import ROOT

DEMO = ROOT / "demo" / "classes" / "lesson05"
ANSWERED_BY = ("zhangsan", "wangwu")  # all right; ZeRO-2 shards the parameters and Q1 says activations shard too


@pytest.fixture(scope="session")
def answered(released, tmp_path_factory) -> Path:
    """lesson05 with two demo students' notebooks (written answers) autograded, Q1–Q3 not graded yet.

    Laid out like the repository: lessons/ (the veto hints' vocabulary) and node_modules/ beside autograder/.
    """
    from course.workflows.grade import grade_assignment

    project = tmp_path_factory.mktemp("answered")
    root = course_with_class(released, project, {student: DEMO / student / "lesson05.ipynb" for student in ANSWERED_BY})
    shutil.copytree(released.parent / "lessons", project / "lessons")
    shutil.copy(ROOT / "package.json", project)
    (project / "node_modules").symlink_to(ROOT / "node_modules")
    for student in ANSWERED_BY:
        # what `nbgrader submit` and `collect` leave beside it, which `release_feedback` names the feedback by
        (root / "submitted" / student / "lesson05" / "timestamp.txt").write_text("2026-12-01 09:30:00.000000 UTC")
        (root / "submitted" / student / "lesson05" / "submission_secret.txt").write_text(f"secret-of-{student}")
    grade_assignment(root, "lesson05")
    return root
