"""The suite fails when a test changed the mode of a folder of the machine (tests/machine_guard.py), and only then:
checked on a pytest session of its own whose watched folder is a temporary one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFTEST = """import os
from pathlib import Path

import pytest

from tests.machine_guard import machine_left_alone  # noqa: F401


@pytest.fixture(scope="session")
def watched_folders():
    return [Path(os.environ["WATCHED"])]
"""
TESTS = """import os
from pathlib import Path


def test_reads_the_folder():
    assert Path(os.environ["WATCHED"]).is_dir()


def test_opens_the_folder_to_others():
    Path(os.environ["WATCHED"]).chmod(0o701)
"""


def _session(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """A pytest session in TMP_PATH (its conftest watches TMP_PATH/watched, mode 700) with ARGS."""
    watched = tmp_path / "watched"
    watched.mkdir(mode=0o700)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST, "utf-8")
    (tmp_path / "test_folder.py").write_text(TESTS, "utf-8")
    env = {**os.environ, "WATCHED": str(watched), "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_session_that_changes_a_watched_folder_fails_naming_it(tmp_path):
    run = _session(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "2 passed, 1 error" in run.stdout
    named = f"the tests changed the machine outside their temporary folders: {tmp_path / 'watched'}: 700 → 701"
    assert named in run.stdout


def test_a_session_that_leaves_it_alone_passes(tmp_path):
    run = _session(tmp_path, "-k", "reads")
    assert run.returncode == 0, run.stdout + run.stderr
