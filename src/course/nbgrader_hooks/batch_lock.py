"""One grading run per course root at a time, whichever command starts it.

`course grade`, stock `nbgrader autograde` and formgrader's autograde button all write the same gradebook and
grade report; the course's nbgrader config makes every autograde hold this lock for its whole run
(course.nbgrader_hooks.autograde_run), and `course grade` holds it for its whole batch. The lock is an flock on
.course-grade/batch.lock, whose text names the holder (pid, command, start time). Only the holder itself keeps the
lock's file open: a process it forks (course grade's workers) closes its copy at once, so a SIGKILLed run's lock is
free the moment that run is gone, even while its workers are still dying or grading on as orphans (they write
nothing: the holder applies every row).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

from course.errors import CourseError, Location
from course.nbgrader_hooks.outcome import STATE_DIR

LOCK_FILE = "batch.lock"
HELD: set[int] = set()  # the lock files this process opened (their descriptors); a forked child closes them


def _close_in_child() -> None:
    """In a forked child, close the lock files it inherited: a flock lives while any copy is open."""
    for fd in HELD:
        os.close(fd)  # closing a copy releases nothing of the holder's lock (flock's LOCK_UN would)
    HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


class BatchBusy(CourseError):
    """Another process is grading this course; the message names it and says what to do."""


def holder_pid(text: str) -> int | None:
    """The pid a lock file's text names, if any."""
    found = re.match(r"pid (\d+)", text)
    return int(found.group(1)) if found else None


@contextlib.contextmanager
def batch_lock(course_root: Path, command: str) -> Iterator[Path]:
    """Hold the course's batch lock while running COMMAND; raise BatchBusy, naming the holder, when it is taken.

    The lock is an flock, so it goes with its process on any exit, SIGKILL included: a file left by a process
    that is gone is stale and simply taken over. Taking it again in the process that holds it (an autograde run
    in-process by a program that holds the lock) is a no-op, so a batch never refuses its own steps.
    """
    path = Path(course_root) / STATE_DIR / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    HELD.add(fd)
    opener = os.getpid()  # a child forked inside the block closed its copy at the fork (_close_in_child)
    try:
        if not _try_flock(fd):
            holder = os.pread(fd, 500, 0).decode("utf-8", "replace").strip()
            if holder_pid(holder) != os.getpid():
                raise BatchBusy(
                    f"another grading run holds this course's lock ({holder or 'unknown pid'}); "
                    "nothing was graded by this one: wait for that run to finish, or stop that "
                    "process, then run this command again",
                    Location(path),
                )
            yield path  # this process holds it already, for the batch this run is part of
            return
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, `{command}`, started {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)
        try:
            yield path
        finally:
            if os.getpid() == opener:
                os.ftruncate(fd, 0)
    finally:
        if os.getpid() == opener:
            HELD.discard(fd)
            os.close(fd)  # releases the flock


def _try_flock(fd: int) -> bool:
    """Take an exclusive flock on FD without waiting; False when another open file holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
