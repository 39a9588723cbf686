"""The suite fails when a test changed the mode of a folder of the machine, or left something in its temporary
folders (tests/machine_guard.py), and only then: checked on pytest sessions of their own whose watched folder, and
temporary folder (TMPDIR), are temporary ones."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.machine_guard import owned_entries

ROOT = Path(__file__).resolve().parents[1]
CONFTEST = """import os
from pathlib import Path

import pytest

from tests.machine_guard import machine_left_alone, pytest_sessionfinish, pytest_sessionstart  # noqa: F401


@pytest.fixture(scope="session")
def watched_folders():
    return [Path(os.environ["WATCHED"])]
"""
TESTS = """import os
import tempfile
from pathlib import Path


def test_reads_the_folder():
    assert Path(os.environ["WATCHED"]).is_dir()


def test_opens_the_folder_to_others():
    Path(os.environ["WATCHED"]).chmod(0o701)


def test_cleans_up_after_itself():
    with tempfile.TemporaryDirectory(prefix="kept-in-"):
        pass


def test_leaves_a_folder_behind():
    tempfile.mkdtemp(prefix="left-by-")
"""


def _session(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """A pytest session in TMP_PATH (its conftest watches TMP_PATH/watched, mode 700; its temporary folder is
    TMP_PATH/tmp) with ARGS."""
    watched, temporary = tmp_path / "watched", tmp_path / "tmp"
    watched.mkdir(mode=0o700)
    temporary.mkdir()
    (tmp_path / "pytest.ini").write_text("[pytest]\n", "utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST, "utf-8")
    (tmp_path / "test_folder.py").write_text(TESTS, "utf-8")
    env = {**os.environ, "WATCHED": str(watched), "PYTHONPATH": str(ROOT), "TMPDIR": str(temporary)}
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
    run = _session(tmp_path, "-k", "not leaves")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "3 passed, 1 deselected, 1 error" in run.stdout
    named = f"the tests changed the machine outside their temporary folders: {tmp_path / 'watched'}: 700 → 701"
    assert named in run.stdout


def test_a_session_that_leaves_it_alone_passes(tmp_path):
    run = _session(tmp_path, "-k", "reads or cleans")
    assert run.returncode == 0, run.stdout + run.stderr


def test_what_the_command_line_asks_pytest_to_write_there_is_not_left_behind(tmp_path):
    report = tmp_path / "tmp" / "reports" / "run.xml"
    run = _session(tmp_path, "-k", "reads or cleans", f"--junitxml={report}")
    assert run.returncode == 0 and report.is_file(), run.stdout + run.stderr


def test_a_session_that_leaves_a_temporary_folder_fails_naming_it(tmp_path):
    run = _session(tmp_path, "-k", "reads or leaves")
    assert run.returncode == 1, run.stdout + run.stderr
    (left,) = [p for p in (tmp_path / "tmp").iterdir() if p.name.startswith("left-by-")]
    assert f"the tests left files in the machine's temporary folders: {left}" in run.stdout


def test_an_entry_removed_while_the_folder_is_read_is_not_an_error(tmp_path, monkeypatch):
    """Another program's temporary file can go between the listing and the look at its owner: not left behind."""
    (tmp_path / "stays").mkdir()
    (tmp_path / "goes").mkdir()
    real_lstat = Path.lstat

    def lstat(path):
        if path.name == "goes":
            path.rmdir()  # removed right after it was listed
        return real_lstat(path)

    monkeypatch.setattr(Path, "lstat", lstat)
    assert owned_entries([tmp_path]) == {tmp_path / "stays"}
