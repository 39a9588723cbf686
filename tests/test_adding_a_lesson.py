"""Adding a lesson never turns the suite red: on a copy of this project with a lesson of the test's own added, every
lesson-generic test passes for that lesson, and so does every other test that sees the set of lessons (any of which
may assume, as one once did, that lesson 5 is the only lesson, or that every module beside a lesson is lesson 5's
own): those marked `every_lesson`, which read all lessons together, and those marked `sees_lessons`. Which tests see
the lessons is no guess: tests/lesson_set_guard.py fails, in every run, a test of the fast tier that lists the
lessons, reads what the build made of them all or runs a process in the project without one of these markers, so
the tests left out here read nothing that a lesson added changes.

The added lesson is `course new`'s shape (one exercise returning a list, a figure drawn from code and written as
`![图 9-1：…](…)`, one question worth 2 points, no veto hints), unlike tests/lesson_content/second_lesson (two
exercises, a tuple and a dict, two questions, its own veto vocabulary). Its text also says, as a statement of its
own, a sentence that is one of lesson 5's answers: each page is compared with its own lesson's answers only.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.lesson_set_guard import MARKERS, files_to_rerun, marked_tests
from tests.project_copy import ADDED, copy_built, with_added_lesson

pytestmark = [pytest.mark.slow, pytest.mark.long(110)]

ROOT = Path(__file__).resolve().parents[1]
# In the copy, one pytest run: the lesson-generic tests for the added lesson and every test that sees the lessons.
IN_THE_COPY = ["-m", " or ".join(MARKERS), "-k", f"{ADDED} or not lesson_generic"]
# tests that must be among them: one reading all lessons together, one that once assumed lesson 5 was the only one
WITNESSES = ("tests.site.test_links.", "test_another_lessons_notebook_named_as_this_lesson_is_the_wrong_assignment")


def pytest_in(project: Path, *args: str) -> subprocess.CompletedProcess:
    """This Python's pytest run inside PROJECT, importing PROJECT's own `course` (its tests see PROJECT as the
    repository), with a temporary folder of its own: its check that it left nothing in the temporary folders
    (tests/machine_guard.py) sees only its own tests' files, not those this run's other workers are using. A short
    path under /tmp (PostgreSQL's socket paths are limited), open to the hub tests' accounts as /tmp is."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(project / "src"),
    }
    env.pop("PYTEST_ADDOPTS", None)
    with tempfile.TemporaryDirectory(prefix="course-copy-tests-") as temporary:
        Path(temporary).chmod(0o755)
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
            cwd=project,
            env={**env, "TMPDIR": temporary},
            capture_output=True,
            text=True,
            timeout=1500,
        )


def junit_name(nodeid: str) -> str:
    """The test's name in a JUnit XML report, its class name (module, class) and name joined by dots."""
    path, bracket, parameters = nodeid.partition("[")
    module, *names = path.split("::")
    return ".".join([module.removesuffix(".py").replace("/", "."), *names]) + bracket + parameters


def test_a_lesson_added_to_a_copy_passes_every_lesson_generic_test_and_lesson_5s_own(
    built_site, tmp_path_factory, tmp_path, request
):
    """The project with the lesson added and built (tests/project_copy.py, shared with the other tests that add it),
    copied: the copy's own build is then a no-op. When this run collected the whole suite, the copy's run collects
    only the files that can hold a test it selects (tests/lesson_set_guard.files_to_rerun), else every file."""
    project = copy_built(with_added_lesson(tmp_path_factory), tmp_path / "project")
    files = files_to_rerun(request.config)
    report = tmp_path / "report.xml"
    targets = [str(path.relative_to(ROOT)) for path in files] if files is not None else ["tests"]
    run = pytest_in(project, "-x", *IN_THE_COPY, f"--junitxml={report}", "--durations=5", *targets)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    cases = {f"{case.get('classname')}.{case.get('name')}": case for case in ElementTree.parse(report).iter("testcase")}
    passed = [name for name, case in cases.items() if not len(case)]  # a case with no child element passed
    if files is not None:  # and every test marked here ran there, lesson-generic ones for the added lesson only
        marked = [item for item in marked_tests(request.config) if not item.get_closest_marker("lesson_generic")]
        missing = [item.nodeid for item in marked if junit_name(item.nodeid) not in cases]
        assert not missing, missing
    generic = [name for name in passed if f"[{ADDED}" in name or f"-{ADDED}" in name]
    assert len(generic) >= 10, run.stdout[-2000:]  # the added lesson's cases ran
    others = [name for name in passed if name not in generic]
    assert all(any(witness in name for name in others) for witness in WITNESSES), others  # and the others with them
