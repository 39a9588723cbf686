"""git, for `course publish`: plumbing commands only, so the working tree, index and HEAD stay untouched."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from course.errors import CourseError, ToolMissing


def git_path() -> str:
    """The git binary, or a ToolMissing that says how to install it."""
    path = shutil.which("git")
    if not path:
        raise ToolMissing("git not found; install it with `apt-get install git`")
    return path


def run_git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    """Run one git command in REPO and return its stripped stdout."""
    proc = subprocess.run(
        [git_path(), *args], cwd=repo, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    if check and proc.returncode != 0:
        raise CourseError(f"git {' '.join(args[:2])} failed in {repo}: {proc.stderr.strip()}")
    return proc.stdout.strip()
