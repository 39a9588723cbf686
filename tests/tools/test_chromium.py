"""course.tools.chromium: the headless shell is preferred where installed, `chromium` used where it is not, and
without either the error says what to install. (Empty scripts on a PATH of the test's own stand in for the
binaries: every page test runs on what chromium_path finds.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.errors import ToolMissing
from course.tools.chromium import chromium_path


def on_path(monkeypatch, folder: Path, *names: str) -> None:
    """PATH holds FOLDER alone, with an executable script for each of NAMES."""
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


def test_the_headless_shell_is_preferred_to_chromium(monkeypatch, tmp_path):
    on_path(monkeypatch, tmp_path / "bin", "chromium", "chromium-headless-shell")
    assert chromium_path() == str(tmp_path / "bin" / "chromium-headless-shell")


def test_chromium_is_used_where_the_headless_shell_is_not_installed(monkeypatch, tmp_path):
    on_path(monkeypatch, tmp_path / "bin", "chromium")
    assert chromium_path() == str(tmp_path / "bin" / "chromium")


def test_without_either_the_error_names_the_packages_to_install(monkeypatch, tmp_path):
    on_path(monkeypatch, tmp_path / "bin")
    with pytest.raises(ToolMissing, match=r"apt-get install chromium-headless-shell.*chromium.*make"):
        chromium_path()
