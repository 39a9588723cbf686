"""Start N ranks as local processes, run one function on each inside a process group, collect the results.

CPU ranks are forked on Linux (cheap: torch is already imported); NCCL needs a fresh CUDA context per
process, and other systems fork badly, so those use spawn. A process that has initialised CUDA cannot
fork children that use it (they fail with "CUDA error: initialization error", even in torch.optim's
capture check), so this process never touches CUDA: the GPUs are counted in a child process, and CPU
ranks hide every GPU from themselves before torch can look. Every wait is bounded: the process group has
a timeout, so a rank stuck in a collective errors out, and the parent stops waiting for results at a
deadline and terminates the ranks it started. A rank's exception comes back as its traceback in a
CourseError. A group that cannot form at all (gloo's TCP mesh set-up can lose a race when several
groups form on one host at once) is started afresh a few times before giving up.
"""

from __future__ import annotations

import datetime
import multiprocessing
import os
import pickle
import queue
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from course.errors import CourseError

# After a rank fails, how long to wait for the others' errors before reporting all of them.
FAILURE_SETTLE_SECONDS = 2.0


@dataclass(frozen=True)
class Backend:
    """Which collective library and device the ranks use."""

    name: str  # "gloo" or "nccl"
    device_type: str  # "cpu" or "cuda"

    @property
    def start_method(self) -> str:
        """fork for CPU ranks on Linux (fast, safe there); spawn for CUDA, which breaks in a forked child, and
        elsewhere."""
        return "fork" if self.device_type == "cpu" and sys.platform.startswith("linux") else "spawn"


# Run in a child process: counting GPUs through the CUDA runtime initialises CUDA in the process that asks.
GPU_PROBE = "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"


def gpu_count() -> int:
    """GPUs the ranks could use, counted without initialising CUDA in this process (none on a CPU-only torch)."""
    import torch

    if not torch.backends.cuda.is_built():
        return 0
    probe = subprocess.run([sys.executable, "-c", GPU_PROBE], capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        raise CourseError(f"counting GPUs in a child process failed (exit {probe.returncode}):\n{probe.stderr[-2000:]}")
    return int(probe.stdout.split()[-1])


def choose_backend(world: int, gpus: int | None = None) -> Backend:
    """NCCL on GPUs when there is one per rank, gloo on CPU otherwise."""
    gpus = gpu_count() if gpus is None else gpus
    return Backend("nccl", "cuda") if gpus >= world else Backend("gloo", "cpu")


def hide_gpus() -> None:
    """Make CUDA see no device in this CPU rank, before anything initialises it (torch.optim asks on every step)."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ""


def join_group(backend: Backend, *, init_method: str, rank: int, world: int, local_rank: int, pg_timeout: float):
    """Pin this process to one thread (and its GPU, or no GPU at all), then join the default process group; return the
    device."""
    import torch
    import torch.distributed as dist

    if backend.device_type == "cpu":
        hide_gpus()
    torch.set_num_threads(1)
    device = torch.device(backend.device_type, local_rank) if backend.device_type == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(
        backend.name,
        init_method=init_method,
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=pg_timeout),
    )
    return device


def _join_group(rank: int, world: int, backend: Backend, store_path: str, pg_timeout: float):
    """Join the group of ranks this module started, meeting at a file store in a temporary folder."""
    options = {"init_method": f"file://{store_path}", "rank": rank, "world": world, "local_rank": rank}
    return join_group(backend, **options, pg_timeout=pg_timeout)


def _rank_entry(fn, rank: int, world: int, backend: Backend, store_path: str, pg_timeout: float, results, payload):
    """Body of one rank process: join the group, run fn, report its result or traceback, leave the group."""
    import torch.distributed as dist

    try:
        device = _join_group(rank, world, backend, store_path, pg_timeout)
    except BaseException:  # noqa: BLE001 - the parent decides whether to start the group again
        results.put(("setup-error", rank, traceback.format_exc()))
        return
    try:
        # Pickled here by value: the queue would pass tensors as shared-memory handles that die with this process.
        results.put(("ok", rank, pickle.dumps(fn(device=device, **payload))))
    except BaseException:  # noqa: BLE001 - any failure must reach the parent instead of hanging it
        results.put(("error", rank, traceback.format_exc()))
    finally:
        dist.destroy_process_group()


class GroupDidNotForm(CourseError):
    """A rank could not join the process group (gloo's TCP mesh set-up can lose a race when several form at once)."""


def run_ranks(
    fn: Callable[..., object],
    *,
    world: int,
    payload: dict,
    timeout: float = 120.0,
    pg_timeout: float = 60.0,
    backend: Backend | None = None,
    attempts: int = 3,
) -> list[object]:
    """Run fn(device=..., **payload) on `world` ranks; return their results in rank order.

    A group whose ranks fail to connect is started afresh, up to `attempts` times in all.
    """
    if world < 2:
        raise CourseError(f"the lab needs at least 2 ranks to shard anything, got {world}")
    backend = backend or choose_backend(world)
    options = {"world": world, "payload": payload, "timeout": timeout, "pg_timeout": pg_timeout, "backend": backend}
    for _ in range(attempts - 1):
        try:
            return _run_once(fn, **options)
        except GroupDidNotForm:
            continue
    return _run_once(fn, **options)


def _run_once(fn, *, world: int, payload: dict, timeout: float, pg_timeout: float, backend: Backend) -> list[object]:
    """Start the ranks once, collect their results, and make sure none outlives the call."""
    ctx = multiprocessing.get_context(backend.start_method)
    results = ctx.Queue()
    with tempfile.TemporaryDirectory(prefix="course-lab-") as tmp:
        store = os.path.join(tmp, "rendezvous")
        procs = [
            ctx.Process(
                target=_rank_entry,
                args=(fn, rank, world, backend, store, pg_timeout, results, payload),
                name=f"course-lab-rank{rank}",
                daemon=True,
            )
            for rank in range(world)
        ]
        for proc in procs:
            proc.start()
        try:
            by_rank = _collect(results, procs, world, timeout)
        except BaseException:
            _stop(procs, grace=0)
            raise
        _stop(procs, grace=pg_timeout)
    return [by_rank[r] for r in range(world)]


def _collect(results, procs, world: int, timeout: float) -> dict[int, object]:
    """Wait for one report per rank until the deadline; a failure or a silent exit raises."""
    deadline = time.monotonic() + timeout
    by_rank: dict[int, object] = {}
    while len(by_rank) < world:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            missing = sorted(set(range(world)) - set(by_rank))
            raise CourseError(f"lab ranks {missing} did not report within {timeout:.0f} s")
        try:
            status, rank, value = results.get(timeout=min(remaining, 1.0))
        except queue.Empty:
            dead = [p.name for i, p in enumerate(procs) if i not in by_rank and p.exitcode not in (None, 0)]
            if dead:
                raise CourseError(f"lab rank process(es) {dead} exited without reporting a result") from None
            continue
        if status == "setup-error":
            raise GroupDidNotForm(f"lab rank {rank} of {world} could not join the process group:\n{value}")
        if status == "error":
            _raise_failures(results, world - len(by_rank), {rank: value}, world)
        by_rank[rank] = pickle.loads(value)
    return by_rank


def _raise_failures(results, pending: int, failures: dict[int, str], world: int) -> None:
    """Gather the other pending ranks' errors for a moment (the first to arrive is often only a consequence), then
    raise."""
    settle = time.monotonic() + FAILURE_SETTLE_SECONDS
    while time.monotonic() < settle and len(failures) < pending:
        try:
            status, rank, value = results.get(timeout=max(settle - time.monotonic(), 0.01))
        except queue.Empty:
            break
        if status == "error":
            failures[rank] = value
    ranks = ", ".join(str(r) for r in sorted(failures))
    details = "\n".join(f"--- rank {r} ---\n{failures[r]}" for r in sorted(failures))
    raise CourseError(f"lab rank(s) {ranks} of {world} failed:\n{details}")


def _stop(procs, *, grace: float) -> None:
    """Give the ranks started here `grace` seconds to exit, then terminate the ones still running."""
    deadline = time.monotonic() + grace
    for proc in procs:
        proc.join(timeout=max(deadline - time.monotonic(), 0))
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=5)
