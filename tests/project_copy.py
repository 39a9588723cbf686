"""A copy of this project to change in a test (lessons added, edited) without touching the working tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Generated files copied along so the copy's build re-executes and redraws only what the test's changes bring.
GENERATED = [".course-cache", "assets/figs", "assets/lab", "assets/zero3_comm_flow.svg"]


def copy_project(dst: Path) -> Path:
    """The working tree as git sees it (tracked and new files, nothing ignored), plus the generated caches."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode("utf-8").split("\0")
    for relative in filter(None, listed):
        if (ROOT / relative).is_file():
            (dst / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / relative, dst / relative)
    for relative in GENERATED:
        if (ROOT / relative).is_dir():
            shutil.copytree(ROOT / relative, dst / relative)
        elif (ROOT / relative).is_file():
            shutil.copy2(ROOT / relative, dst / relative)
    os.symlink(ROOT / "node_modules", dst / "node_modules")
    return dst
