"""Run a student's notebook inside the grading sandbox (a piece of their answer code: course.sandbox.answer).

Each run gets a bubblewrap sandbox (see course.tools.bubblewrap) with rlimits set inside it, wall clocks kept
from outside (per submission, and in the shell engine per cell: a cell that outlives its limit by CELL_GRACE_S
because it would not be interrupted takes the sandbox down with it), and, when grading as root, a pids cgroup
(see course.sandbox.cgroup, course.sandbox.launch). The runner and the student's code both live inside; the
runner reports over its stdout pipe, one JSON frame per executed cell, which the student's code never holds.
Two engines run the cells: "shell" (the default) runs them in an IPython shell in a child of the runner,
without a kernel, which saves the kernel's start-up on every submission; "kernel" runs them in a Jupyter
kernel through nbclient, as nbgrader autograde does. Both give the same outputs (see course.sandbox.relay for
the shell engine's trust boundary). Everything that comes back is still the submission's data: frames are
size-capped and validated, outputs are re-capped, and cell sources and metadata always come from this
process's own copy of the notebook. Nothing here writes outside `workdir` (as root, also a short-lived
cgroup); the gradebook is the caller's business, written only by the grading process, never by anything that
ran student code.
"""

from __future__ import annotations

import copy
import os
import stat
import sys
import time
from pathlib import Path
from typing import Literal

import nbformat

from course.errors import CourseError
from course.fileio import write_atomic
from course.sandbox.frames import FRAME_SLACK
from course.sandbox.kernel_output import startup_line
from course.sandbox.launch import KERNEL_LOG_NAME, WORK_DIR, run_sandboxed
from course.sandbox.limits import Limits, MiB, mib
from course.sandbox.results import SandboxRun, assemble
from course.tools.bubblewrap import find_bwrap, probe_bwrap

MAX_SUBMISSION_BYTES = 32 * MiB
HOME_CACHES = (".ipython", ".cache", ".config", ".local", ".jupyter")
# How long past its limit a shell-engine cell may go on before the sandbox is killed from outside: the shell's
# own interrupt (SIGALRM) and the report of the cell normally take well under a second.
CELL_GRACE_S = 5
ENGINES = ("shell", "kernel")

Engine = Literal["shell", "kernel"]


class _Unreadable(Exception):
    """The submission file is not a notebook we can run."""


def _read_submission(path: Path) -> nbformat.NotebookNode:
    """Read the submitted notebook without following symlinks or reading more than MAX_SUBMISSION_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _Unreadable(f"{path.name}: cannot open the submission ({exc.strerror})") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Unreadable(f"{path.name}: the submission is not a regular file")
        data = handle.read(MAX_SUBMISSION_BYTES + 1)
    if len(data) > MAX_SUBMISSION_BYTES:
        raise _Unreadable(f"{path.name}: the submission is larger than {mib(MAX_SUBMISSION_BYTES)}")
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises many kinds for bad JSON or schema
        raise _Unreadable(f"{path.name}: not a valid Jupyter notebook ({str(exc).splitlines()[0][:200]})") from exc
    return nb


def _cleared(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of NB with every output and execution count removed (outputs a student saved count for nothing)."""
    clean = copy.deepcopy(nb)
    for cell in clean.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return clean


def _write_notebook(nb: nbformat.NotebookNode, target: Path) -> None:
    """Write NB to TARGET atomically (the sandbox reads it only once it is whole)."""
    write_atomic(target, nbformat.writes(nb))


def _prepare_workdir(workdir: Path, nb: nbformat.NotebookNode, name: str) -> Path:
    """Create the scratch dir (owner-only) and put the cleared notebook in it."""
    workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = workdir / name
    _write_notebook(nb, target)
    return target


def execute_notebook_sandboxed(
    notebook_path: Path,
    *,
    workdir: Path,
    limits: Limits,
    unsafe: bool = False,
    engine: Engine = "shell",
    skip_tag: str = "skip-execution",
) -> SandboxRun:
    """Run every code cell of a student's notebook in the sandbox and return what came out of it.

    NOTEBOOK_PATH is copied (outputs cleared) into WORKDIR, which the caller owns and should remove
    afterwards; the sandbox sees that copy and whatever else the caller put in WORKDIR read-only in a private,
    size-limited working directory, and the files the notebook writes there come back in the run's `files`.
    ENGINE is "shell" (an IPython shell without a kernel, faster to start) or "kernel" (a Jupyter kernel via
    nbclient). Cells tagged SKIP_TAG are not run (nbclient's skip_cells_with_tag).
    Raises ToolMissing (or SandboxUnavailable) when no sandbox can be had and UNSAFE is false.
    """
    if engine not in ENGINES:
        raise CourseError(f"unknown grading engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if not unsafe:
        probe_bwrap(find_bwrap(), sys.executable)
    started = time.monotonic()
    try:
        original = _read_submission(Path(notebook_path))
    except _Unreadable as exc:
        return SandboxRun(None, "invalid", str(exc), round(time.monotonic() - started, 3), {})
    nb = _cleared(original)
    target = _prepare_workdir(Path(workdir), nb, Path(notebook_path).name)
    frame_limit = limits.max_output_bytes + FRAME_SLACK
    # Without the sandbox the runner's home is the working directory: what IPython keeps there is not the notebook's.
    inputs = [p.name for p in Path(workdir).iterdir()] + ([KERNEL_LOG_NAME, *HOME_CACHES] if unsafe else [])
    config = {
        "mode": engine,
        "skip_tag": skip_tag,
        "keep_files": True,
        "inputs": inputs,
        "file_chunk_bytes": (frame_limit - 32768) * 3 // 4,  # room for the path, escaped
        "notebook": f"{WORK_DIR}/{target.name}" if not unsafe else str(target),
        "cell_timeout_s": limits.cell_timeout_s,
        "startup_timeout_s": limits.submission_timeout_s,
        "max_output_bytes": limits.max_output_bytes,
        "kernel_limits": {"RLIMIT_AS": limits.memory_bytes},
    }
    if engine == "kernel":  # the shell engine starts no kernel
        config["kernel_exec_lines"] = [startup_line(limits.max_output_bytes)]
    run = run_sandboxed(
        config,
        workdir=Path(workdir),
        limits=limits,
        unsafe=unsafe,
        runner_as=2 * limits.memory_bytes + 512 * MiB,
        wall_clock_s=limits.submission_timeout_s,
        frame_limit=frame_limit,
        total_limit=(len(nb.cells) + 8) * frame_limit + 2 * limits.scratch_bytes,
        stdin=None,
        # nbclient moves on by itself from a kernel that ignores its interrupt (and waits up to 4 s for a cell's
        # last outputs), so only the shell, where one cell holds up the rest, needs this watchdog.
        idle_limit_s=limits.cell_timeout_s + CELL_GRACE_S if engine == "shell" else None,
    )
    return assemble(nb, run, limits, skip_tag)
