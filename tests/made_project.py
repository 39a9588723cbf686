"""`make` (its `all` target: build both sites, run the demo cycle) in a fresh copy of the project, made once per test
run: tests/test_make_again.py goes on from a copy of it, and the demo cycle's test reads what its demo printed and
wrote, so the suite runs the demo on a fresh clone once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.once_per_run import once_per_run
from tests.project_copy import copy_project

BIN = Path(sys.executable).parent


def run(project: Path, *command: str, env: dict | None = None) -> str:
    """Run a command in PROJECT as a user would (the venv's tools first on PATH); its output."""
    env = {**os.environ, **(env or {}), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def make(project: Path, env: dict | None = None) -> str:
    """`make` (its `all` target) with this checkout's environment standing in for the setup step."""
    return run(project, "make", "all", "READY=", "LEAN=", f"BIN={BIN}", env=env)


def made_project(tmp_path_factory) -> tuple[Path, str]:
    """A fresh copy of the project after its first `make`, and what that `make` printed; no hub or user nbgrader
    config is read (JUPYTER_CONFIG_PATH names an empty folder). Never change it: copy it with copy_built. Ask for the
    `built_site` fixture first: the copy then starts from the checkout's build caches, as a clone built before does,
    instead of building every lesson cold beside the checkout's own first build (both ran at once on a fresh clone
    whose first files put them on two workers)."""

    def first_make(folder: Path) -> None:
        (folder / "no-hub-config").mkdir()
        said = make(copy_project(folder / "project"), {"JUPYTER_CONFIG_PATH": str(folder / "no-hub-config")})
        (folder / "make.out").write_text(said, "utf-8")

    folder = once_per_run(tmp_path_factory, "made-project", first_make)
    return folder / "project", (folder / "make.out").read_text("utf-8")
