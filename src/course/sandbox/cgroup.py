"""A pids cgroup per sandbox, for grading as root, and a memory cgroup for the submission as a whole.

RLIMIT_NPROC does not bind processes whose host uid is 0 (the kernel exempts root's user_struct even inside a
user namespace), and bwrap run by root maps the sandbox user onto host uid 0. So when `course grade` runs as
root, each sandbox gets its own pids cgroup whose pids.max caps every task in it, threads included. An
ordinary user needs none of this: there RLIMIT_NPROC counts only the sandbox's own tasks.

RLIMIT_AS binds each process on its own, so a submission that forks N children may use N times the limit.
Where a memory controller can be had (as root: cgroup v2 `memory.max`, or v1 `memory.limit_in_bytes`), the
sandbox also gets one memory cgroup, with swap off, that caps all its processes together.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from course.tools.bubblewrap import UNSAFE_HINT, SandboxUnavailable

# The kernel's view of this process: its mounts and its cgroup per hierarchy (read where a cgroup is made).
MOUNTINFO = Path("/proc/self/mountinfo")
OWN_CGROUPS = Path("/proc/self/cgroup")

# Joins each cgroup whose cgroup.procs file is named before "--", then becomes the real command after it.
_JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def needs_process_cgroup() -> bool:
    """True when rlimits cannot cap the process count (running as root)."""
    return os.geteuid() == 0


def _cgroup_mounts(controller: str) -> list[tuple[str, Path]]:
    """(kind, mount point) for each cgroup v2 mount and each v1 mount of CONTROLLER."""
    mounts = []
    for line in MOUNTINFO.read_text().splitlines():
        fields, _, rest = line.partition(" - ")
        fstype, _source, options = (rest.split() + ["", "", ""])[:3]
        mount_point = Path(fields.split()[4])
        if fstype == "cgroup2":
            mounts.append(("v2", mount_point))
        elif fstype == "cgroup" and controller in options.split(","):
            mounts.append(("v1", mount_point))
    return mounts


def _own_cgroup(kind: str, controller: str) -> str:
    """This process's cgroup path in the v1 hierarchy of CONTROLLER or in the v2 one."""
    for line in OWN_CGROUPS.read_text().splitlines():
        _id, controllers, path = line.split(":", 2)
        if (kind == "v1" and controller in controllers.split(",")) or (kind == "v2" and _id == "0"):
            return path
    return "/"


def _parent_dirs(controller: str) -> Iterator[tuple[str, Path]]:
    """(kind, directory) where a child cgroup with CONTROLLER can be created."""
    for kind, mount_point in _cgroup_mounts(controller):
        parent = mount_point / _own_cgroup(kind, controller).lstrip("/")
        if not parent.is_dir():
            parent = mount_point
        if kind == "v2":
            controls = parent / "cgroup.subtree_control"
            if not controls.is_file() or controller not in controls.read_text().split():
                continue
        yield kind, parent


def _make(controller: str, settings: dict[str, dict[str, str]], problems: list[str]) -> tuple[str, Path] | None:
    """A fresh cgroup with CONTROLLER and SETTINGS (per kind: file → value), or None (PROBLEMS says why)."""
    for kind, parent in _parent_dirs(controller):
        group = parent / f"course-sandbox-{uuid.uuid4().hex[:12]}"
        try:
            group.mkdir()
            for name, value in settings[kind].items():
                if name.endswith("?"):  # optional: a kernel without swap accounting has no such file
                    if (group / name[:-1]).exists():
                        (group / name[:-1]).write_text(value)
                else:
                    (group / name).write_text(value)
            return kind, group
        except OSError as exc:
            problems.append(f"{parent}: {exc.strerror}")
            _remove(group)
    return None


def _create(max_tasks: int) -> Path:
    """Make a fresh cgroup capped at MAX_TASKS tasks; raise SandboxUnavailable when none can be made."""
    problems: list[str] = []
    made = _make("pids", {"v1": {"pids.max": f"{max_tasks}\n"}, "v2": {"pids.max": f"{max_tasks}\n"}}, problems)
    if made is not None:
        return made[1]
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


def memory_group(memory_bytes: int) -> tuple[str, Path] | None:
    """A cgroup capping all its processes together at MEMORY_BYTES, swap off; None where none can be made."""
    if not needs_process_cgroup():
        return None
    limit = f"{memory_bytes}\n"
    return _make(
        "memory",
        {
            "v2": {"memory.max": limit, "memory.swap.max?": "0\n"},
            "v1": {"memory.limit_in_bytes": limit, "memory.memsw.limit_in_bytes?": limit},
        },
        [],
    )


def oom_killed(kind: str, group: Path) -> bool:
    """Whether the kernel killed a process of GROUP for going over its memory limit."""
    name, key = ("memory.events", "oom_kill") if kind == "v2" else ("memory.oom_control", "oom_kill")
    try:
        counters = dict(line.split() for line in (group / name).read_text().splitlines() if len(line.split()) == 2)
    except OSError:
        return False
    return counters.get(key, "0") != "0"


@dataclass
class Groups:
    """The cgroups one sandbox runs in: the pids cap and, where one could be made, the memory cap."""

    pids: Path
    memory: tuple[str, Path] | None

    def out_of_memory(self) -> bool:
        """Whether the memory cgroup's limit killed something."""
        return self.memory is not None and oom_killed(*self.memory)


@contextlib.contextmanager
def process_cap(max_tasks: int, memory_bytes: int) -> Iterator[Groups]:
    """Cgroups capped at MAX_TASKS tasks and (where possible) MEMORY_BYTES for the duration of one sandbox."""
    groups = Groups(_create(max_tasks), None)
    try:
        groups.memory = memory_group(memory_bytes)
        yield groups
    finally:
        _remove(groups.pids)
        if groups.memory is not None:
            _remove(groups.memory[1])


def join_argv(groups: Groups, argv: Sequence[str]) -> list[str]:
    """ARGV prefixed so that it starts inside GROUPS, before it can fork anything."""
    procs = [str(groups.pids / "cgroup.procs")] + ([str(groups.memory[1] / "cgroup.procs")] if groups.memory else [])
    return ["/bin/sh", "-c", _JOIN_SCRIPT, "join-cgroups", *procs, "--", *argv]
