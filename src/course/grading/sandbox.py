"""Run a student's notebook, or a piece of their answer code, inside the grading sandbox.

Each run gets a bubblewrap sandbox (see course.tools.bubblewrap) with rlimits set inside it, wall clocks kept
from outside (per submission, and in the shell engine per cell: a cell that outlives its limit by CELL_GRACE_S
because it would not be interrupted takes the sandbox down with it), and, when grading as root, a pids cgroup
(see sandbox_cgroup). The runner and the student's code both live inside; the runner reports over its stdout
pipe, one JSON frame per executed cell, which the student's code never holds. Two engines run the cells:
"shell" (the default) runs them in an IPython shell in a child of the runner, without a kernel, which saves the
kernel's start-up on every submission; "kernel" runs them in a Jupyter kernel through nbclient, as nbgrader
autograde does. Both give the same outputs (see sandbox_runner for the shell engine's trust boundary).
Everything that comes back is still the submission's data: frames are size-capped and validated, outputs are
re-capped, and cell sources and metadata always come from this process's own copy of the notebook. Nothing
here writes outside `workdir` (as root, also a short-lived cgroup); the gradebook is the caller's business,
written only by the grading process, never by anything that ran student code.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import os
import selectors
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, NamedTuple

import nbformat
from nbformat.validator import isvalid

from course.errors import CourseError
from course.fileio import write_atomic
from course.grading import sandbox_runner
from course.grading.sandbox_cgroup import join_argv, needs_process_cgroup, process_cap
from course.grading.sandbox_runner import FRAME_SLACK, TIMEOUT_ENAME, TRUNCATED_MARK, FrameReader, OutputBudget
from course.tools.bubblewrap import SandboxLayout, bwrap_argv, find_bwrap, probe_bwrap, python_install_paths

MiB = 2**20
GiB = 2**30
MAX_SUBMISSION_BYTES = 32 * MiB
WORK_DIR = "/submission"
KERNEL_LOG = "/tmp/course-kernel.log"
KERNEL_LOG_NAME = "course-kernel.log"  # in the working directory, when run without the sandbox
HOME_CACHES = (".ipython", ".cache", ".config", ".local", ".jupyter")
STDERR_KEPT = 16 * 1024
EXIT_GRACE_S = 0.5
# How long past its limit a shell-engine cell may go on before the sandbox is killed from outside: the shell's
# own interrupt (SIGALRM) and the report of the cell normally take well under a second.
CELL_GRACE_S = 5
RUNNER_SOURCE = Path(sandbox_runner.__file__).read_text(encoding="utf-8")
# Only the source: importing the shell module would import IPython into the grading process for nothing.
SHELL_SOURCE = Path(__file__).with_name("sandbox_shell.py").read_text(encoding="utf-8")
ENGINES = ("shell", "kernel")

Status = Literal["ok", "timeout", "crashed", "oom", "invalid", "error"]
Engine = Literal["shell", "kernel"]


def _limit(default: int, help: str) -> Any:
    """A Limits field with its description kept in the field metadata."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Limits:
    """What one submission may use in the sandbox."""

    cell_timeout_s: int = _limit(30, "wall-clock seconds one cell may run before it is interrupted")
    submission_timeout_s: int = _limit(120, "wall-clock seconds for the whole notebook, kernel start included")
    memory_bytes: int = _limit(2 * GiB, "memory of the submission: one cgroup limit for all its processes where a "
                                         "memory cgroup can be had (root), and RLIMIT_AS on each process")
    max_processes: int = _limit(64, "tasks (processes and threads, runner and kernel included) alive at once")
    max_file_bytes: int = _limit(64 * MiB, "largest file the submission may write (RLIMIT_FSIZE)")
    max_output_bytes: int = _limit(1 * MiB, "outputs kept per cell; past this a cell's output is cut with a note")
    scratch_bytes: int = _limit(256 * MiB, "size of each writable tmpfs: the working directory, /tmp, /dev/shm")

    def __post_init__(self) -> None:
        for f in fields(self):
            if not isinstance(getattr(self, f.name), int) or getattr(self, f.name) <= 0:
                raise CourseError(f"grading limit {f.name} must be a positive integer ({f.metadata['help']})")


@dataclass(frozen=True)
class Incident:
    """Something that happened to one cell, by its index in the notebook."""

    cell_index: int
    kind: str  # cell-timeout | memory | output-truncated | stopped | not-run
    message: str


@dataclass(frozen=True)
class SandboxRun:
    """The outcome of one sandboxed notebook run.

    status: ok (every code cell ran, some may show errors), timeout (the submission's wall clock ran out, or a
    cell would not stop at its limit), crashed (the kernel or the runner died), oom (same, out of memory),
    invalid (the submission is not a readable notebook), error (the sandbox itself failed before any student
    code ran: not the student's fault).
    executed: the notebook with outputs of the cells that ran (None for invalid/error).
    timings: seconds measured here: startup (sandbox and runner), kernel_start (the kernel, or the shell engine's
    IPython shell, until it can run cells), execute (the cells), total.
    engine: the engine that ran it; engine_reason: why that one (empty when it was simply asked for).
    memory_limit: which memory limit applied, in words (one cgroup for the whole submission, or per process).
    files: the files the notebook wrote in its working directory (relative path → bytes; within scratch_bytes).
    """

    executed: nbformat.NotebookNode | None
    status: Status
    reason: str
    seconds: float
    timings: dict[str, float]
    incidents: tuple[Incident, ...] = ()
    engine: str = "shell"
    engine_reason: str = ""
    memory_limit: str = ""
    files: dict[str, bytes] = field(default_factory=dict)


class PythonRun(NamedTuple):
    """Outcome of run_python_sandboxed: exit status (None when stopped at the time limit), OUTPUT, stderr."""

    returncode: int | None
    stdout_json: Any
    stderr: str


@dataclass
class _Collected:
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


def _mib(n: int) -> str:
    """A byte count as people read it."""
    return f"{n / MiB:g} MiB"


# ---------------------------------------------------------------- launching


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
def _sandbox(workdir: Path, limits: Limits, unsafe: bool) -> Iterator[tuple[Callable[[list[str]], list[str]], str, Any]]:
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
        return f"{_mib(limits.memory_bytes)} for the whole submission (cgroup {groups.memory[0]} memory limit, no swap)"
    return f"{_mib(limits.memory_bytes)} per process (RLIMIT_AS; no memory cgroup here)"


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


def _collect(proc: subprocess.Popen, *, wall_clock_s: float, frame_limit: int, total_limit: int,
             idle_limit_s: float | None = None) -> _Collected:
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
    return _Collected(
        frames=frames,
        stderr=stderr.decode("utf-8", "replace"),
        returncode=None if timed_out or stalled else proc.returncode,
        timed_out=timed_out,
        stalled=stalled,
        flooded=flooded,
        started_at=started,
        seconds=time.monotonic() - started,
    )


def _exit_status(returncode: int | None) -> int | None:
    """Exit status as bwrap reports it: 128+N for a death by signal N, also when run without bwrap."""
    if returncode is not None and returncode < 0:
        return 128 - returncode
    return returncode


def _run(mode_config: dict, *, workdir: Path, limits: Limits, unsafe: bool, runner_as: int, wall_clock_s: int,
         frame_limit: int, total_limit: int, stdin: bytes | None, idle_limit_s: float | None = None) -> _Collected:
    """Start the runner (sandboxed unless UNSAFE) with MODE_CONFIG and collect what it reports."""
    with _sandbox(workdir, limits, unsafe) as (wrap, root, groups):
        config = {
            **mode_config,
            "cwd": root,
            "limits": _rlimits(limits, runner_as),
            "kernel_log": KERNEL_LOG if not unsafe else str(workdir / KERNEL_LOG_NAME),
        }
        argv = wrap([sys.executable, "-I", "-c", RUNNER_SOURCE, json.dumps(config)])
        proc = _spawn(argv, workdir, stdin)
        run = _collect(proc, wall_clock_s=wall_clock_s, frame_limit=frame_limit, total_limit=total_limit,
                       idle_limit_s=idle_limit_s)
        run.memory_limit = memory_limit_applied(limits, groups)
        run.oom_killed = groups is not None and groups.out_of_memory()
        return run


# ---------------------------------------------------------------- the submission


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
        raise _Unreadable(f"{path.name}: the submission is larger than {_mib(MAX_SUBMISSION_BYTES)}")
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


# ---------------------------------------------------------------- assembling the result


def _valid_outputs(outputs: Any, budget: OutputBudget) -> list[dict] | None:
    """OUTPUTS if it is a list of schema-valid outputs, re-capped; None when it is not even that."""
    if not isinstance(outputs, list):
        return None
    kept = []
    for output in outputs:
        if not isinstance(output, dict) or not isvalid(output, ref="output", version=4, version_minor=5):
            return None
        kept.extend(budget.admit(output))
    return kept


def _fill_cells(nb: nbformat.NotebookNode, frames: Sequence[dict], max_output_bytes: int) -> set[int]:
    """Copy outputs from valid cell frames into NB's code cells; return the indices that ran."""
    ran: set[int] = set()
    for frame in frames:
        index = frame.get("index")
        if frame.get("event") != "cell" or not isinstance(index, int) or index in ran:
            continue
        if not 0 <= index < len(nb.cells) or nb.cells[index].cell_type != "code":
            continue
        outputs = _valid_outputs(frame.get("outputs"), OutputBudget(max_output_bytes))
        count = frame.get("execution_count")
        if outputs is None or not (count is None or (isinstance(count, int) and count >= 0)):
            continue
        nb.cells[index].outputs = [nbformat.from_dict(o) for o in outputs]
        nb.cells[index].execution_count = count
        ran.add(index)
    return ran


def _cell_incidents(nb: nbformat.NotebookNode, ran: set[int], limits: Limits) -> list[Incident]:
    """Time-limit stops, memory errors and truncated output, read from the cells that ran."""
    incidents = []
    for index in sorted(ran):
        for output in nb.cells[index].outputs:
            if output.output_type == "error" and output.ename == TIMEOUT_ENAME:
                incidents.append(Incident(index, "cell-timeout", output.evalue))
            elif output.output_type == "error" and output.ename == "MemoryError":
                message = f"the cell ran out of memory (limit {_mib(limits.memory_bytes)})"
                incidents.append(Incident(index, "memory", message))
            elif output.output_type == "stream" and TRUNCATED_MARK in output.text:
                incidents.append(Incident(index, "output-truncated", output.text.strip()))
    return incidents


def _code_cells(nb: nbformat.NotebookNode, skip_tag: str) -> list[int]:
    """Indices of the code cells the runner executes (non-empty source, not tagged SKIP_TAG)."""
    return [i for i, c in enumerate(nb.cells) if sandbox_runner.runs(c, skip_tag)]


def _written_files(frames: Sequence[dict], max_bytes: int) -> dict[str, bytes]:
    """The files the runner sent back, put together from their chunks; bad names and anything past MAX_BYTES dropped."""
    files: dict[str, bytearray] = {}
    total = 0
    for frame in frames:
        path, offset, data = frame.get("path"), frame.get("offset"), frame.get("data")
        if frame.get("event") != "file" or not isinstance(path, str) or not isinstance(data, str):
            continue
        parts = Path(path).parts
        if not parts or Path(path).is_absolute() or ".." in parts or path != str(Path(*parts)):
            continue
        try:
            chunk = base64.b64decode(data, validate=True)
        except ValueError:
            continue
        if offset != len(files.get(path, b"")) or total + len(chunk) > max_bytes:
            continue
        files.setdefault(path, bytearray()).extend(chunk)
        total += len(chunk)
    return {path: bytes(data) for path, data in files.items()}


def _cell_label(nb: nbformat.NotebookNode, index: int | None) -> str:
    """How a reason names a cell: its nbgrader grade_id, else its cell id, else its position."""
    if index is None:
        return "the notebook"
    cell = nb.cells[index]
    name = cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id")
    return f"cell {name}" if name else f"cell #{index}"


def _memory_evidence(text: str) -> bool:
    """True when a dying process's last words say it ran out of memory."""
    return any(s in text for s in ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory"))


def _outcome(run: _Collected, events: dict[str, dict], where: str, limits: Limits) -> tuple[Status, str]:
    """Status and reason of a notebook run from how the runner ended; WHERE names the cell it stopped in."""
    if "finished" in events:
        return "ok", "every code cell ran"
    if "started" not in events:
        detail = events.get("runner-error", {}).get("detail") or run.stderr
        if run.timed_out:
            return "error", f"the kernel did not start within {limits.submission_timeout_s} s"
        return "error", f"the sandbox failed before the notebook ran: {str(detail).strip()[-500:]}"
    if run.timed_out:
        limit = limits.submission_timeout_s
        return "timeout", f"the notebook ran past the {limit} s limit per submission (stopped in {where})"
    if run.stalled:
        limit = limits.cell_timeout_s
        return "timeout", f"{where} ran past the {limit} s limit per cell and could not be interrupted"
    if run.flooded:
        return "crashed", f"the sandbox sent more data than allowed (stopped in {where})"
    if run.oom_killed:
        return "oom", f"the submission ran out of memory in {where} (limit {run.memory_limit})"
    if "kernel-died" in events:
        died = events["kernel-died"]
        if _memory_evidence(str(died.get("log_tail", ""))):
            return "oom", f"the kernel ran out of memory in {where} (limit {_mib(limits.memory_bytes)})"
        code = died.get("exit_code")
        status = _exit_status(code) if isinstance(code, int) else "?"
        return "crashed", f"the kernel stopped while running {where} (exit status {status})"
    if "runner-error" in events:
        detail = str(events["runner-error"].get("detail", "")).strip() or "?"
        if _memory_evidence(detail):
            return "oom", f"the grading runner ran out of memory in {where}"
        return "crashed", f"the grading runner failed in {where}: {detail.splitlines()[-1][:300]}"
    if _memory_evidence(run.stderr):
        return "oom", f"the grading runner ran out of memory in {where}"
    return "crashed", (
        f"the grading runner was stopped while {where} ran (exit status {_exit_status(run.returncode)}): "
        "the submission's code killed or starved the process that runs it"
    )


def _timings(run: _Collected, events: dict[str, float]) -> dict[str, float]:
    """Seconds spent starting the sandbox, starting the kernel and executing cells, measured here."""
    start = run.started_at
    hello = events.get("hello")
    started = events.get("started")
    end = events.get("finished", start + run.seconds)
    timings = {"total": round(run.seconds, 3)}
    if hello is not None:
        timings["startup"] = round(hello - start, 3)
    if hello is not None and started is not None:
        timings["kernel_start"] = round(started - hello, 3)
    if started is not None:
        timings["execute"] = round(end - started, 3)
    return timings


def _assemble(nb: nbformat.NotebookNode, run: _Collected, limits: Limits, skip_tag: str) -> SandboxRun:
    """Build the SandboxRun from the cleared notebook and the frames the runner sent."""
    frames = [f for _, f in run.frames]
    first_event = {}
    arrival: dict[str, float] = {}
    for at, frame in run.frames:
        first_event.setdefault(frame["event"], frame)
        arrival.setdefault(frame["event"], at)
    ran = _fill_cells(nb, frames, limits.max_output_bytes)
    code = _code_cells(nb, skip_tag)
    pending = [i for i in code if i not in ran]
    died = first_event.get("kernel-died", {}).get("index")
    stopped_at = died if isinstance(died, int) and died in code else (pending[0] if pending else None)
    status, reason = _outcome(run, first_event, _cell_label(nb, stopped_at), limits)
    incidents = _cell_incidents(nb, ran, limits)
    if status != "ok":
        if stopped_at is not None:
            incidents.append(Incident(stopped_at, "stopped", reason))
        incidents += [Incident(i, "not-run", f"not run: {reason}") for i in pending if i != stopped_at]
    executed = nb if status != "error" else None
    if executed is not None:
        nbformat.validate(executed)
    return SandboxRun(executed, status, reason, round(run.seconds, 3), _timings(run, arrival), tuple(incidents),
                      memory_limit=run.memory_limit, files=_written_files(frames, limits.scratch_bytes))


# ---------------------------------------------------------------- public API


def execute_notebook_sandboxed(
    notebook_path: Path, *, workdir: Path, limits: Limits, unsafe: bool = False, engine: Engine = "shell",
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
        **({"shell_source": SHELL_SOURCE} if engine == "shell" else {}),
    }
    run = _run(
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
    return _assemble(nb, run, limits, skip_tag)


def run_python_sandboxed(
    code: str, *, workdir: Path, limits: Limits, input_json: Any, unsafe: bool = False
) -> PythonRun:
    """Exec CODE in a fresh sandboxed Python with INPUT bound to INPUT_JSON; return the JSON of its OUTPUT.

    CODE must leave a JSON-serialisable value in the global OUTPUT; what it prints goes to stderr. The run
    stops at limits.cell_timeout_s (returncode None then). Files in WORKDIR are visible read-only.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    request = json.dumps({"code": code, "input": input_json}).encode("utf-8")
    frame_limit = limits.max_output_bytes + FRAME_SLACK
    run = _run(
        {"mode": "python", "max_input_bytes": len(request)},
        workdir=workdir,
        limits=limits,
        unsafe=unsafe,
        runner_as=limits.memory_bytes,
        wall_clock_s=limits.cell_timeout_s,
        frame_limit=frame_limit,
        total_limit=2 * frame_limit,
        stdin=request,
    )
    result = next((f for _, f in run.frames if f["event"] == "result"), None)
    failure = next((f for _, f in run.frames if f["event"] == "runner-error"), None)
    notes = []
    if failure is not None:
        notes.append(str(failure.get("detail", "")))
    if run.timed_out:
        notes.append(f"[course sandbox] stopped after {limits.cell_timeout_s} s (the time limit)")
    elif result is None and failure is None:
        notes.append(
            f"[course sandbox] no OUTPUT came back (exit status {_exit_status(run.returncode)}; "
            f"an OUTPUT larger than {_mib(frame_limit)} is dropped)"
        )
    stderr = "\n".join([run.stderr[-limits.max_output_bytes:], *notes]).strip()
    return PythonRun(_exit_status(run.returncode), result.get("output") if result else None, stderr)
