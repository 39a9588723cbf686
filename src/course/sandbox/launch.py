"""Start the runner in a fresh bubblewrap sandbox (rlimits, cgroups, a clean environment) and collect its frames.

The runner and the student's code both live inside; the runner reports over its stdout pipe, which the
student's code never holds. Wall clocks are kept from here, outside: a runner past its time, silent too long
between frames or flooding the pipe is killed with its whole process group (in the sandbox, its pid
namespace). The runner reaches the sandbox as source text, through course.sandbox.loader.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.sandbox.cgroup import join_argv, needs_process_cgroup, process_cap
from course.sandbox.frames import FrameReader
from course.sandbox.limits import Limits, mib
from course.tools.bubblewrap import SandboxLayout, bwrap_argv, find_bwrap, probe_bwrap, python_install_paths

WORK_DIR = "/submission"
KERNEL_LOG = "/tmp/course-kernel.log"
KERNEL_LOG_NAME = "course-kernel.log"  # in the working directory, when run without the sandbox
STDERR_KEPT = 16 * 1024
EXIT_GRACE_S = 0.5
# The modules the runner is made of, sent to the loader as sources (importing them here would import IPython
# into the grading process for nothing).
RUNNER_MODULES = ("frames", "confinement", "kernel", "shell", "relay", "runner")
LOADER_SOURCE = Path(__file__).with_name("loader.py").read_text(encoding="utf-8")
RUNNER_SOURCES = json.dumps(
    {name: Path(__file__).with_name(f"{name}.py").read_text(encoding="utf-8") for name in RUNNER_MODULES}
)


@dataclass
class Collected:
    """What came out of one sandboxed process: its frames (with arrival times) and the end of its stderr."""

    frames: list[tuple[float, dict]]
    stderr: str
    returncode: int | None
    timed_out: bool
    stalled: bool
    flooded: bool
    started_at: float
    seconds: float
    memory_limit: str = ""
    oom_killed: bool = False


def _runner_env(home: str) -> dict[str, str]:
    """The only environment variables the runner, the kernel and the student's code see."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        # What ipykernel picks when nothing is set (and nbgrader sets nothing): figures become image/png outputs.
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYTHONDONTWRITEBYTECODE": "1",
        # What nbgrader's autograde sets around its Execute step; notebooks use it to skip slow cells when graded.
        "NBGRADER_EXECUTION": "autograde",
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        # Fewer malloc arenas and math threads keep the kernel well inside RLIMIT_AS and the task cap.
        "MALLOC_ARENA_MAX": "2",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        # torch.distributed (gloo) in lesson exercises: the sandbox's only interface is the loopback.
        "GLOO_SOCKET_IFNAME": "lo",
    }


def _rlimits(limits: Limits, address_space: int) -> dict[str, int]:
    """The rlimits the runner sets on itself before anything of the submission runs."""
    return {
        "RLIMIT_AS": address_space,
        "RLIMIT_NPROC": limits.max_processes,
        "RLIMIT_FSIZE": limits.max_file_bytes,
        "RLIMIT_CORE": 0,
    }


@contextlib.contextmanager
def _sandbox(
    workdir: Path, limits: Limits, unsafe: bool
) -> Iterator[tuple[Callable[[list[str]], list[str]], str, Any]]:
    """Yield (wrap, root, groups): wrap turns the runner's argv into the sandboxed one; root is the cwd it gets;
    groups are its cgroups (None when it runs without)."""
    if unsafe:
        yield (lambda argv: argv), str(workdir), None
        return
    bwrap = find_bwrap()
    probe_bwrap(bwrap, sys.executable)
    layout = SandboxLayout(
        readonly=python_install_paths(),
        work_dir=WORK_DIR,
        work_files=tuple(sorted(workdir.iterdir())),
        tmpfs_bytes=limits.scratch_bytes,
        env=_runner_env("/tmp"),
    )
    if not needs_process_cgroup():
        yield (lambda argv: bwrap_argv(bwrap, layout, argv)), WORK_DIR, None
        return
    # +1: bwrap's own monitor process outside
    with process_cap(limits.max_processes + 1, limits.memory_bytes) as groups:
        yield (lambda argv: join_argv(groups, bwrap_argv(bwrap, layout, argv))), WORK_DIR, groups


def memory_limit_applied(limits: Limits, groups) -> str:
    """Which memory limit a run had, in words for its row."""
    if groups is not None and groups.memory is not None:
        return f"{mib(limits.memory_bytes)} for the whole submission (cgroup {groups.memory[0]} memory limit, no swap)"
    return f"{mib(limits.memory_bytes)} per process (RLIMIT_AS; no memory cgroup here)"


def _spawn(argv: list[str], workdir: Path, stdin: bytes | None) -> subprocess.Popen:
    """Start the (wrapped) runner in its own session so that the whole group can be killed."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
        env=_runner_env(str(workdir)),
        start_new_session=True,
    )
    if stdin is not None:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(stdin)
        proc.stdin.close()
    return proc


def _kill(proc: subprocess.Popen) -> None:
    """Kill the runner's process group; in the sandbox this takes the whole pid namespace with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _collect(
    proc: subprocess.Popen,
    *,
    wall_clock_s: float,
    frame_limit: int,
    total_limit: int,
    idle_limit_s: float | None = None,
) -> Collected:
    """Read frames and stderr until the runner is gone, killing it at the wall clock or on a flood.

    Once the runner has sent "started", a silence of more than IDLE_LIMIT_S between frames (one cell that
    will not stop) kills it too.
    """
    started = time.monotonic()
    reader = FrameReader(frame_limit)
    frames: list[tuple[float, dict]] = []
    stderr = bytearray()
    total = 0
    timed_out = stalled = flooded = False
    exited_at: float | None = None
    last_frame_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ, "out")
        selector.register(proc.stderr, selectors.EVENT_READ, "err")
        while selector.get_map():
            now = time.monotonic()
            if now - started > wall_clock_s:
                timed_out = True
                break
            if idle_limit_s is not None and last_frame_at is not None and now - last_frame_at > idle_limit_s:
                stalled = True
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE_S:
                break  # something still holds the pipes open after the runner ended
            for key, _ in selector.select(timeout=0.2):
                chunk = os.read(key.fileobj.fileno(), 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.data == "err":
                    stderr += chunk
                    del stderr[:-STDERR_KEPT]
                else:
                    total += len(chunk)
                    flooded = total > total_limit
                    arrived = [(time.monotonic(), f) for f in reader.feed(chunk) if f is not None]
                    frames += arrived
                    if arrived and (last_frame_at is not None or any(f["event"] == "started" for _, f in arrived)):
                        last_frame_at = arrived[-1][0]
            if flooded:
                break
    if proc.poll() is None or timed_out or stalled or flooded:
        _kill(proc)
    proc.stdout.close()
    proc.stderr.close()
    return Collected(
        frames=frames,
        stderr=stderr.decode("utf-8", "replace"),
        returncode=None if timed_out or stalled else proc.returncode,
        timed_out=timed_out,
        stalled=stalled,
        flooded=flooded,
        started_at=started,
        seconds=time.monotonic() - started,
    )


def exit_status(returncode: int | None) -> int | None:
    """Exit status as bwrap reports it: 128+N for a death by signal N, also when run without bwrap."""
    if returncode is not None and returncode < 0:
        return 128 - returncode
    return returncode


def run_sandboxed(
    mode_config: dict,
    *,
    workdir: Path,
    limits: Limits,
    unsafe: bool,
    runner_as: int,
    wall_clock_s: int,
    frame_limit: int,
    total_limit: int,
    stdin: bytes | None,
    idle_limit_s: float | None = None,
) -> Collected:
    """Start the runner (sandboxed unless UNSAFE) with MODE_CONFIG and collect what it reports."""
    with _sandbox(workdir, limits, unsafe) as (wrap, root, groups):
        config = {
            **mode_config,
            "cwd": root,
            "limits": _rlimits(limits, runner_as),
            "kernel_log": KERNEL_LOG if not unsafe else str(workdir / KERNEL_LOG_NAME),
        }
        argv = wrap([sys.executable, "-I", "-c", LOADER_SOURCE, RUNNER_SOURCES, json.dumps(config)])
        proc = _spawn(argv, workdir, stdin)
        run = _collect(
            proc, wall_clock_s=wall_clock_s, frame_limit=frame_limit, total_limit=total_limit, idle_limit_s=idle_limit_s
        )
        run.memory_limit = memory_limit_applied(limits, groups)
        run.oom_killed = groups is not None and groups.out_of_memory()
        return run
