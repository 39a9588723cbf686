"""The committed samples and the demo class are what their generators make from today's release."""

from __future__ import annotations

import shutil

import pytest

from course.workflows.demo_cycle import write_submissions
from tests.assignment.make_submissions import FIXTURES, OUT, ROOT, fixture_text

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", list(FIXTURES))
def test_sample_is_current(release_nb, name):
    assert (OUT / f"{name}.ipynb").read_text("utf-8") == fixture_text(name, release_nb), (
        "run: .venv/bin/python -m tests.assignment.make_submissions"
    )


def test_demo_class_is_current(released, tmp_path):
    course = tmp_path / "autograder"
    shutil.copytree(released, course)
    shutil.copytree(ROOT / "demo" / "classes", course / "classes")  # the demo course's classes, in this root
    students = sorted(p.name for p in (course / "classes" / "lesson05").iterdir() if p.is_dir())
    assert students == ["lisi", "wangwu", "zhangsan", "zhaoliu"]
    stale = write_submissions(course, "lesson05")  # rewrites only notebooks made from another release
    assert [p.parent.name for p in stale] == [], (
        "run: .venv/bin/python -m course.workflows.demo_cycle lesson05 --write-submissions"
    )
