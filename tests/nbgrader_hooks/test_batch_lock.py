"""One grading run per course: the lock names its holder, refuses others, is re-entrant and never outlives its
process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from course.nbgrader_hooks.batch_lock import BatchBusy, batch_lock

HOLD = (
    "import sys, time\nfrom pathlib import Path\nfrom course.nbgrader_hooks.batch_lock import batch_lock\n"
    "with batch_lock(Path(sys.argv[1]), sys.argv[2]):\n    print('held', flush=True)\n    time.sleep(60)\n"
)
# A holder that forks a worker, as `course grade` forks its pool inside the lock; the worker outlives a SIGKILLed
# holder (another process group), and leaves through the block's exit as a forked child may. The worker itself says
# its pid: by then its fork handlers have run (a pid the holder printed could come before, on a loaded machine).
HOLD_WITH_WORKER = (
    "import os, sys, time\nfrom pathlib import Path\nfrom course.nbgrader_hooks.batch_lock import batch_lock\n"
    "with batch_lock(Path(sys.argv[1]), 'course grade lesson05'):\n"
    "    if os.fork() == 0:\n        os.setpgid(0, 0)\n        print(os.getpid(), flush=True)\n"
    "        time.sleep(float(sys.argv[2]))\n"
    "    else:\n        time.sleep(60)\n"
    "(Path(sys.argv[1]) / 'worker-left').write_text('yes')\n"
)


@pytest.fixture
def holder(tmp_path):
    """Another process holding the course's lock as `nbgrader autograde lesson05`; killed (SIGKILL) at the end."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path), "nbgrader autograde lesson05"], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_a_lock_held_elsewhere_is_refused_naming_the_holder_and_what_to_do(tmp_path, holder):
    with pytest.raises(BatchBusy) as refused, batch_lock(tmp_path, "course grade lesson05"):
        pytest.fail("entered a lock another process holds")
    message = str(refused.value)
    assert f"pid {holder.pid}" in message and "`nbgrader autograde lesson05`" in message
    assert "wait for that run to finish" in message and "batch.lock" in message


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path, holder):
    holder.kill()
    holder.wait()
    with batch_lock(tmp_path, "course grade lesson05") as path:
        assert path.read_text().startswith(f"pid {os.getpid()}, `course grade lesson05`")


def test_a_killed_holders_forked_worker_keeps_no_lock_and_leaves_the_file_alone(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD_WITH_WORKER, str(tmp_path), "2"], stdout=subprocess.PIPE)
    worker = int(holder.stdout.readline())
    try:
        holder.kill()
        holder.wait()
        os.kill(worker, 0)  # the worker still runs
        with batch_lock(tmp_path, "course grade lesson05") as path:  # taken over at once, not refused
            assert path.read_text().startswith(f"pid {os.getpid()}, `course grade lesson05`")
            deadline = time.monotonic() + 30
            while not (tmp_path / "worker-left").exists():  # the worker leaves the block and ends
                assert time.monotonic() < deadline, "the forked worker never left"
                time.sleep(0.05)
            assert path.read_text().startswith(f"pid {os.getpid()}")  # its exit truncated nothing
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGKILL)


def test_the_holder_may_take_it_again_and_keeps_it_until_the_outer_run_ends(tmp_path):
    probe = (
        "import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n    sys.exit(3)\n"
    )

    def free(path) -> bool:
        return subprocess.run([sys.executable, "-c", probe, str(path)]).returncode == 0

    with batch_lock(tmp_path, "course grade lesson05") as outer:
        with batch_lock(tmp_path, "nbgrader autograde lesson05") as inner:
            assert inner == outer and "course grade" in inner.read_text()
        assert not free(outer) and "course grade" in outer.read_text()
    assert free(outer) and outer.read_text() == ""


def test_the_lock_is_released_on_error(tmp_path):
    with pytest.raises(RuntimeError), batch_lock(tmp_path, "course grade lesson05"):
        raise RuntimeError("boom")
    with batch_lock(tmp_path, "course grade lesson05") as path:
        assert f"pid {os.getpid()}" in path.read_text()
