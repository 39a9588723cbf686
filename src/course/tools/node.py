"""Node.js, which builds the site's search index at `course build` with the same library the pages search with."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from course.errors import CourseError, ToolMissing


def node_path() -> Path:
    """The node binary on PATH."""
    found = shutil.which("node")
    if not found:
        raise ToolMissing(
            "node not found; the site's search index is built with Node.js: "
            "`apt-get install nodejs npm` (or run `make`, which installs it when root)"
        )
    return Path(found)


def run_node(script: Path, args: list[str], stdin: str, *, what: str, timeout: float = 120) -> str:
    """Run SCRIPT with ARGS on STDIN and return its stdout; a failure names WHAT was being made."""
    proc = subprocess.run(
        [str(node_path()), str(script), *args], input=stdin.encode("utf-8"), capture_output=True, timeout=timeout
    )
    if proc.returncode != 0:
        raise CourseError(f"node failed making {what}: {proc.stderr.decode('utf-8', 'replace').strip()[-2000:]}")
    return proc.stdout.decode("utf-8")
