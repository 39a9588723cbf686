"""nbgrader's own autograde app tests (installed with nbgrader), run with SandboxExecute in place of its Execute.

Every test of nbgrader's TestNbGraderAutograde runs unchanged; a Jupyter config found through JUPYTER_CONFIG_PATH
does nothing but swap nbgrader's Execute for the course's SandboxExecute in Autograde's steps, so what these
tests prove of Execute (timeouts, files the notebook writes, kernelspec checks, --no-execute, …) holds in the
grading sandbox. The two tests nbgrader itself skips stay skipped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from nbgrader.tests.apps.conftest import course_dir, db, temp_cwd  # noqa: F401 (fixtures the tests use)
from nbgrader.tests.apps.test_nbgrader_autograde import TestNbGraderAutograde as StockAutogradeTests

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.long(80), pytest.mark.waits]

SWAP_EXECUTE = """
from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute
from course.nbgrader_hooks.sandbox_execute import SandboxExecute

c = get_config()
steps = Autograde.class_traits()["autograde_preprocessors"].default()
c.Autograde.autograde_preprocessors = [SandboxExecute if step is Execute else step for step in steps]
"""


@pytest.fixture(autouse=True)
def sandbox_in_place_of_execute(tmp_path):
    """A Jupyter config dir whose nbgrader_config.py swaps Execute for SandboxExecute, on JUPYTER_CONFIG_PATH.

    nbgrader's run_nbgrader replaces os.environ with a plain copy after each command, so the real one is put
    back afterwards, as it was. nbgrader runs `alembic` from PATH: this Python's scripts come first.
    """
    config_dir = tmp_path / "jupyter-config"
    config_dir.mkdir()
    (config_dir / "nbgrader_config.py").write_text(SWAP_EXECUTE, encoding="utf-8")
    real = os.environ
    saved = dict(real)
    real["JUPYTER_CONFIG_PATH"] = str(config_dir)
    real["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{real.get('PATH', '')}"
    yield
    os.environ = real
    real.clear()
    real.update(saved)


@pytest.fixture(autouse=True, scope="module")
def alembic_asked_once():
    """Each test makes new gradebooks; the course's autograde saving gives them nbgrader's migration head without
    a subprocess each (the same head: tests/nbgrader_hooks/test_speedups.py)."""
    from course.nbgrader_hooks.speedups import ask_alembic_once

    ask_alembic_once()


class TestAutogradeWithSandboxExecute(StockAutogradeTests):
    """nbgrader's TestNbGraderAutograde, every test as nbgrader wrote it."""


def test_the_swap_is_in_effect(temp_cwd):  # noqa: F811
    """The config above reaches nbgrader as it loads its config files: Autograde runs SandboxExecute, not Execute."""
    from nbgrader.apps.autogradeapp import AutogradeApp
    from nbgrader.preprocessors import Execute

    from course.nbgrader_hooks.sandbox_execute import SandboxExecute

    app = AutogradeApp()
    app.load_config_file()
    steps = app.config.Autograde.autograde_preprocessors
    assert SandboxExecute in steps and Execute not in steps
