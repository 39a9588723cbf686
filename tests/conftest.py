"""Shared fixtures: the project root, one build of the real course, a released lesson05 nbgrader course and that
course graded once with every committed sample submission."""

from __future__ import annotations

import os
import pickle
import shutil
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

import course
from course.nbgrader_hooks.speedups import ask_alembic_once
from tests.classes import submit
from tests.once_per_run import once_per_run

# As the course's own nbgrader commands do: no test reads an IRI, and a new gradebook made in a test process is stamped
# with the migrations' head read once in it, not by an `alembic heads` subprocess (~2 CPU-s) per gradebook.
course.skip_unused_iri_checker()
ask_alembic_once()
ROOT = Path(__file__).resolve().parents[1]
# The suite's builds render with pandoc whatever Quarto the machine has (auto would pick one on PATH): a test that
# renders with Quarto names it (tests/workflows/test_quarto_render.py, from COURSE_TEST_QUARTO).
os.environ["QUARTO"] = str(ROOT / "no-quarto-unless-a-test-names-one")


@pytest.fixture(scope="session")
def project_root() -> Path:
    """The repository being tested."""
    return ROOT


@pytest.fixture(scope="session")
def built_site(project_root: Path) -> Path:
    """_site/ after `course build` of the real lessons (a no-op when already up to date)."""
    from course.workflows.build_site import build_course

    build_course(project_root)
    return project_root / "_site"


@pytest.fixture(scope="session")
def released(tmp_path_factory) -> Path:
    """A course root with lesson05's source notebook generated and released by stock nbgrader: made once per run
    (tests/once_per_run.py); never change it, copy it."""
    from tests.assignment.make_submissions import release_into

    return once_per_run(tmp_path_factory, "released", lambda folder: release_into(folder / "autograder")) / "autograder"


@pytest.fixture(scope="session")
def release_nb(released):
    """The released lesson05 notebook."""
    import nbformat

    return nbformat.read(released / "release" / "lesson05" / "lesson05.ipynb", as_version=4)


@pytest.fixture(scope="session")
def graded(released, tmp_path_factory):
    """Every committed sample submitted as its own student and graded once per run by `course grade` (the GradeRun,
    read back from where the run that graded it left it); never change its course, copy it."""
    folder = once_per_run(tmp_path_factory, "graded", lambda folder: grade_samples(released, folder))
    with open(folder / "run.pickle", "rb") as f:
        run = pickle.load(f)
    return replace(run, stats=replace(run.stats, reasons=MappingProxyType(run.stats.reasons)))


def grade_samples(released: Path, folder: Path) -> None:
    """FOLDER/autograder: a copy of RELEASED with every committed sample handed in and graded; FOLDER/run.pickle: the
    GradeRun (its reasons as a dict: a mapping proxy does not pickle)."""
    from course.workflows.grade import grade_assignment
    from tests.assignment.make_submissions import EXPECTED, FIXTURES, OUT

    root = folder / "autograder"
    shutil.copytree(released, root)
    for name in FIXTURES:
        submit(root, name, OUT / f"{name}.ipynb", EXPECTED[name].get("file", "lesson05.ipynb"))
    run = grade_assignment(root, "lesson05")
    with open(folder / "run.pickle", "wb") as f:
        pickle.dump(replace(run, stats=replace(run.stats, reasons=dict(run.stats.reasons))), f)


from tests.collection_order import long_files_first  # noqa: E402
from tests.gradebooks import gradebook_db, postgres_server  # noqa: E402,F401 (the gradebook on SQLite and PostgreSQL)
from tests.lesson_set_guard import lessons_seen_only_when_marked, pytest_itemcollected  # noqa: E402,F401 (a test that sees the lessons says so)
from tests.machine_guard import (  # noqa: E402,F401 (no test changes the machine)
    machine_left_alone,
    pytest_sessionfinish,
    pytest_sessionstart,
    torch_cache_kept_in_the_tests_folder,
    watched_folders,
)
from tests.shared_browser import browser, chromium, playwright_loop_only_in_browser_modules  # noqa: E402,F401 (one Chromium per process, a context per test)


def pytest_xdist_make_scheduler(config, log):
    """`make test`'s file scheduling (--dist loadfile): one worker of them runs the files that mostly wait
    (tests/lanes.py); any other --dist keeps pytest-xdist's own."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.workermanage import parse_tx_spec_config

    from tests.lanes import WaitingLane

    return WaitingLane(config, log, busy=max(len(parse_tx_spec_config(config)) - 1, 1))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Long files first (tests/collection_order.py); runs before -m/-k deselect, so it records the whole suite."""
    long_files_first(config, items)
