"""Which cgroup the sandbox gets and what it writes there, on simulated v1 and v2 hierarchies.

This machine binds the memory controller to cgroup v1, so the v2 path (memory.max, memory.events) cannot run
for real here: these tests give the module a mount table and a cgroup tree in a temporary folder instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.sandbox import cgroup
from course.sandbox.cgroup import memory_group, oom_killed

MiB = 2**20


@pytest.fixture
def hierarchies(tmp_path, monkeypatch):
    """A v2 mount at unified/ (this process in /grading) and a v1 memory mount at memory/ (in /course)."""

    def make(v2_subtree: str) -> tuple[Path, Path]:
        unified, memory = tmp_path / "unified", tmp_path / "memory"
        (unified / "grading").mkdir(parents=True)
        (unified / "grading" / "cgroup.subtree_control").write_text(v2_subtree)
        (memory / "course").mkdir(parents=True)
        mounts = tmp_path / "mountinfo"
        mounts.write_text(
            f"30 25 0:26 / {unified} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
            f"31 25 0:27 / {memory} rw,nosuid - cgroup cgroup rw,memory\n"
        )
        own = tmp_path / "cgroup"
        own.write_text("4:memory:/course\n0::/grading\n")
        monkeypatch.setattr(cgroup, "MOUNTINFO", mounts)
        monkeypatch.setattr(cgroup, "OWN_CGROUPS", own)
        monkeypatch.setattr(cgroup, "needs_process_cgroup", lambda: True)
        return unified / "grading", memory / "course"

    return make


def test_v2_with_the_memory_controller_gets_memory_max(hierarchies):
    v2_parent, _ = hierarchies("cpu memory pids\n")
    kind, group = memory_group(300 * MiB)
    assert (kind, group.parent) == ("v2", v2_parent)
    assert (group / "memory.max").read_text() == f"{300 * MiB}\n"
    assert not (group / "memory.limit_in_bytes").exists()


def test_v2_without_the_memory_controller_falls_back_to_v1(hierarchies):
    _, v1_parent = hierarchies("cpu pids\n")
    kind, group = memory_group(300 * MiB)
    assert (kind, group.parent) == ("v1", v1_parent)
    assert (group / "memory.limit_in_bytes").read_text() == f"{300 * MiB}\n"


def test_an_ordinary_user_gets_no_memory_cgroup(hierarchies, monkeypatch):
    hierarchies("memory\n")
    monkeypatch.setattr(cgroup, "needs_process_cgroup", lambda: False)
    assert memory_group(300 * MiB) is None


@pytest.mark.parametrize(
    ("kind", "file", "text", "killed"),
    [
        ("v2", "memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n", True),
        ("v2", "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n", False),
        ("v1", "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n", True),
        ("v1", "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", False),
    ],
)
def test_oom_kills_are_read_from_each_kind_s_counters(tmp_path, kind, file, text, killed):
    (tmp_path / file).write_text(text)
    assert oom_killed(kind, tmp_path) is killed
