"""What one submission may use in the grading sandbox (GradingSandbox's settings), in bytes people can read."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from course.errors import CourseError

MiB = 2**20
GiB = 2**30


def _limit(default: int, help: str) -> Any:
    """A Limits field with its description kept in the field metadata."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Limits:
    """What one submission may use in the sandbox."""

    cell_timeout_s: int = _limit(30, "wall-clock seconds one cell may run before it is interrupted")
    submission_timeout_s: int = _limit(120, "wall-clock seconds for the whole notebook, kernel start included")
    memory_bytes: int = _limit(
        2 * GiB,
        "memory of the submission: one cgroup limit for all its processes where a "
        "memory cgroup can be had (root), and RLIMIT_AS on each process",
    )
    max_processes: int = _limit(64, "tasks (processes and threads, runner and kernel included) alive at once")
    max_file_bytes: int = _limit(64 * MiB, "largest file the submission may write (RLIMIT_FSIZE)")
    max_output_bytes: int = _limit(1 * MiB, "outputs kept per cell; past this a cell's output is cut with a note")
    scratch_bytes: int = _limit(256 * MiB, "size of each writable tmpfs: the working directory, /tmp, /dev/shm")

    def __post_init__(self) -> None:
        for f in fields(self):
            if not isinstance(getattr(self, f.name), int) or getattr(self, f.name) <= 0:
                raise CourseError(f"grading limit {f.name} must be a positive integer ({f.metadata['help']})")


def mib(n: int) -> str:
    """A byte count as people read it."""
    return f"{n / MiB:g} MiB"
