"""What several test files read and none changes, made once per test run: under pytest-xdist by the first worker that
asks for it, under a file lock in the folder all workers' temporary folders share; the others wait, then read it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def once_per_run(tmp_path_factory, name: str, make: Callable[[Path], object]) -> Path:
    """The folder NAME, filled by MAKE(folder) in the first process of this run to ask (a folder left half made by a
    process that failed is made again). Never change what is in it: copy it first."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # xdist: the workers' common folder
    folder, done = shared / name, shared / f"{name}.done"
    with FileLock(str(shared / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder
