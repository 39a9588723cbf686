"""The lesson-set guard (tests/lesson_set_guard.py) fails exactly the tests that see the project's lessons without a
marker saying so: probe tests that list lessons/, glob it, run a process in the project, take a fixture that listed
it, or read a value a helper module listed at import fail; marked ones and ones reading lesson 5 by name pass, and so
does one whose function-scoped fixture listed the lessons only when an earlier, marked test set it up."""

from __future__ import annotations

import re
from pathlib import Path

from tests.lesson_set_guard import SEES_LESSONS, importers, project_modules
from tests.probe_run import run_probes

CONFTEST = """
from tests.lesson_set_guard import lessons_seen_only_when_marked  # noqa: F401


def pytest_configure(config):
    config.addinivalue_line("markers", "sees_lessons: sees the lessons")
"""
HELPER = """
from tests.lesson_set_guard import ROOT

STEMS = sorted(path.stem for path in (ROOT / "lessons").glob("*.qmd"))


def is_a_lesson(stem):
    return stem in STEMS
"""
PROBES = """
import shutil
import subprocess

import pytest

from probe_helper import STEMS, is_a_lesson
from tests.lesson_set_guard import ROOT


@pytest.fixture(scope="session")
def lesson_files():
    return sorted(p.name for p in (ROOT / "lessons").iterdir())


def test_lists_lessons_unmarked():
    assert any(name.endswith(".qmd") for name in __import__("os").listdir(ROOT / "lessons"))


def test_globs_lessons_unmarked():
    assert list((ROOT / "lessons").glob("lesson*.qmd"))


def test_runs_a_process_in_the_project_unmarked():
    subprocess.run(["true"], cwd=ROOT, check=True)


def test_takes_a_fixture_that_listed_lessons_unmarked(lesson_files):
    assert lesson_files


def test_takes_the_same_fixture_set_up_already_unmarked(lesson_files):
    assert lesson_files


def test_reads_a_value_listed_at_import_unmarked():
    assert "lesson05" in STEMS


def test_calls_a_function_reading_it_unmarked():
    assert is_a_lesson("lesson05")


@pytest.mark.parametrize("stem", STEMS)
def test_parametrized_over_it_unmarked(stem):
    assert stem


LISTED_ONCE = []


# a function-scoped fixture whose first setup in the process lists lessons/ (as the first start of a server shared by
# the run may) and whose later setups read nothing
@pytest.fixture
def ready_after_a_first_listing():
    if not LISTED_ONCE:
        LISTED_ONCE.extend((ROOT / "lessons").iterdir())
    return "ready"


@pytest.mark.sees_lessons
def test_sets_up_a_fixture_that_lists_the_first_time_marked(ready_after_a_first_listing):
    assert ready_after_a_first_listing


def test_sets_up_the_same_fixture_again_reading_nothing(ready_after_a_first_listing):
    assert ready_after_a_first_listing


@pytest.mark.sees_lessons
def test_lists_lessons_marked(lesson_files):
    assert sorted(p.name for p in (ROOT / "lessons").iterdir()) == lesson_files


def test_reads_lesson_5_by_name(tmp_path):
    text = (ROOT / "lessons" / "lesson05.qmd").read_text("utf-8")
    (tmp_path / "copy.qmd").write_text(text, "utf-8")
    shutil.copytree(ROOT / "lessons" / "lesson05", tmp_path / "lesson05")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.qmd", "lesson05"]
    subprocess.run(["true"], cwd=tmp_path, check=True)
"""
CAUGHT = [
    "test_lists_lessons_unmarked",
    "test_globs_lessons_unmarked",
    "test_runs_a_process_in_the_project_unmarked",
    "test_takes_a_fixture_that_listed_lessons_unmarked",
    "test_takes_the_same_fixture_set_up_already_unmarked",
    "test_reads_a_value_listed_at_import_unmarked",
    "test_calls_a_function_reading_it_unmarked",
    "test_parametrized_over_it_unmarked[lesson05]",
]


def test_the_guard_fails_each_unmarked_test_that_sees_the_lessons_and_no_other(tmp_path):
    files = {"conftest.py": CONFTEST, "probe_helper.py": HELPER, "test_probes.py": PROBES}
    run = run_probes(tmp_path / "probes", files, "-p", "no:xdist", "-rE")
    errors = re.findall(r"^ERROR \S+::(\S+)", run.stdout, re.MULTILINE)
    assert sorted(errors) == sorted(CAUGHT), run.stdout[-4000:] + run.stderr[-2000:]
    assert "12 passed, 8 errors" in run.stdout, run.stdout[-2000:]
    assert "listed " in run.stdout and "read probe_helper.STEMS" in run.stdout and "ran ['true'] in" in run.stdout


def test_each_test_named_in_sees_lessons_exists():
    """A test renamed or moved leaves no stale name behind (its new name would fail the guard until listed)."""
    root = Path(__file__).resolve().parents[1]
    missing = [
        name
        for name in sorted(SEES_LESSONS)
        if f"def {name.split('::')[-1]}(" not in (root / name.split("::")[0]).read_text("utf-8")
    ]
    assert not missing, missing


def test_the_modules_reading_an_import_time_listing_are_those_importing_it_directly_or_through_others(tmp_path):
    """tests/test_adding_a_lesson.py collects them on the copy with a lesson added: their import could fail there."""
    files = {
        "tests/listing.py": "LESSONS = []\n",
        "tests/helpers/__init__.py": "",
        "tests/helpers/middle.py": "from tests.listing import LESSONS\n",
        "tests/helpers/test_relative.py": "from . import middle\n",
        "tests/test_inside_a_function.py": "def test_one():\n    from tests.helpers.middle import LESSONS\n",
        "tests/test_package.py": "import tests.helpers.middle\n",
        "tests/test_unrelated.py": "from tests.helpers import other\nimport listing\n",
        "tests/helpers/other.py": "import os\n",
        "src/pkg/__init__.py": "from .mod import X\n",
        "src/pkg/mod.py": "X = 1\n",
        "tests/test_src.py": "from pkg import X\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    modules = project_modules(tmp_path)
    assert modules["tests.helpers"] == tmp_path / "tests/helpers/__init__.py" and "pkg.mod" in modules
    reading = importers({tmp_path / "tests/listing.py"}, modules)
    expected = ["listing", "helpers/middle", "helpers/test_relative", "test_inside_a_function", "test_package"]
    assert reading == {tmp_path / "tests" / f"{name}.py" for name in expected}
    assert importers({tmp_path / "src/pkg/mod.py"}, modules) == {
        tmp_path / name for name in ("src/pkg/mod.py", "src/pkg/__init__.py", "tests/test_src.py")
    }
