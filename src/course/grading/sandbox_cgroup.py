"""A pids cgroup per sandbox, for grading as root.

RLIMIT_NPROC does not bind processes whose host uid is 0 (the kernel exempts root's user_struct even inside a
user namespace), and bwrap run by root maps the sandbox user onto host uid 0. So when `course grade` runs as
root, each sandbox gets its own pids cgroup whose pids.max caps every task in it, threads included. An
ordinary user needs none of this: there RLIMIT_NPROC counts only the sandbox's own tasks.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

from course.tools.bubblewrap import UNSAFE_HINT, SandboxUnavailable

# Joins the cgroup named by $0 (its cgroup.procs file), then becomes the real command.
_JOIN_SCRIPT = 'echo $$ > "$0" && exec "$@"'


def needs_process_cgroup() -> bool:
    """True when rlimits cannot cap the process count (running as root)."""
    return os.geteuid() == 0


def _cgroup_mounts() -> list[tuple[str, Path]]:
    """(kind, mount point) for each cgroup v2 mount and each v1 mount of the pids controller."""
    mounts = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, rest = line.partition(" - ")
        fstype, _source, options = (rest.split() + ["", "", ""])[:3]
        mount_point = Path(fields.split()[4])
        if fstype == "cgroup2":
            mounts.append(("v2", mount_point))
        elif fstype == "cgroup" and "pids" in options.split(","):
            mounts.append(("v1", mount_point))
    return mounts


def _own_cgroup(kind: str) -> str:
    """This process's cgroup path in the v1 pids hierarchy or in the v2 one."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, controllers, path = line.split(":", 2)
        if (kind == "v1" and "pids" in controllers.split(",")) or (kind == "v2" and _id == "0"):
            return path
    return "/"


def _parent_dirs() -> Iterator[Path]:
    """Cgroup directories where a child with a pids controller can be created."""
    for kind, mount_point in _cgroup_mounts():
        parent = mount_point / _own_cgroup(kind).lstrip("/")
        if not parent.is_dir():
            parent = mount_point
        if kind == "v2":
            controls = parent / "cgroup.subtree_control"
            if not controls.is_file() or "pids" not in controls.read_text().split():
                continue
        yield parent


def _create(max_tasks: int) -> Path:
    """Make a fresh cgroup capped at MAX_TASKS tasks; raise SandboxUnavailable when none can be made."""
    problems = []
    for parent in _parent_dirs():
        group = parent / f"course-sandbox-{uuid.uuid4().hex[:12]}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(f"{max_tasks}\n")
            return group
        except OSError as exc:
            problems.append(f"{parent}: {exc.strerror}")
            _remove(group)
    raise SandboxUnavailable(
        "grading runs as root, where rlimits cannot cap a fork bomb, and no pids cgroup could be created "
        f"({'; '.join(problems) or 'no writable pids controller in /sys/fs/cgroup'}); "
        f"run `course grade` as an ordinary user, {UNSAFE_HINT}"
    )


def _remove(group: Path) -> None:
    """Remove the cgroup once its tasks are gone (they die with the sandbox; allow a moment)."""
    for _ in range(50):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


@contextlib.contextmanager
def process_cap(max_tasks: int) -> Iterator[Path]:
    """A cgroup capped at MAX_TASKS for the duration of one sandbox; yields its directory."""
    group = _create(max_tasks)
    try:
        yield group
    finally:
        _remove(group)


def join_argv(group: Path, argv: Sequence[str]) -> list[str]:
    """ARGV prefixed so that it starts inside GROUP, before it can fork anything."""
    return ["/bin/sh", "-c", _JOIN_SCRIPT, str(group / "cgroup.procs"), *argv]
