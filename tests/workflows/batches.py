"""A `course grade` batch killed half-way, as the resumption tests need it on every gradebook."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.machine_guard import own_temporary_folder


def kill_mid_batch(root: Path, assignment: str, students: int, seconds: float = 120) -> int:
    """Start `course grade --jobs 1` in ROOT, SIGKILL it once 2 students are committed; how many were committed.
    Its scratch gradebooks, which it cannot remove, are left in a temporary folder beside ROOT."""
    state = Path(root) / ".course-grade" / assignment / "graded"
    proc = subprocess.Popen(
        [sys.executable, "-m", "course", "grade", assignment, "--autograder", str(root), "--jobs", "1"],
        start_new_session=True,
        env=own_temporary_folder(Path(root).parent),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(list(state.glob("*.json"))) < 2 and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(list(state.glob("*.json")))
    assert 2 <= finished < students, "the kill should land mid-batch"
    return finished
