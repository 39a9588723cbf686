"""One rank of the lab started by torchrun, for clusters: env:// rendezvous, NCCL on GPUs, gloo on CPU.

    torchrun --standalone --nproc-per-node=N -m course lab --torchrun [--out FILE]

measures what `course lab --ranks N` measures. NCCL needs one GPU per rank, so a node with fewer GPUs
than local ranks runs every rank on CPU with gloo (each rank decides the same way from the same node).
Rank 0 gathers every rank's measurements and writes the same report file; the other ranks write nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import torch.distributed as dist

from course.errors import CourseError
from course.lab.launch import choose_backend, join_group
from course.lab.rank_worker import rank_worker
from course.lab.report_file import write_report
from course.lab.run_lab import DEFAULT_STEPS, DEFAULT_WARMUP, build_report, check_options, lab_payload

# Set by torchrun for every process it starts.
TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def torchrun_env(environ=os.environ) -> dict[str, str]:
    """torchrun's variables for this process, or an error saying how the lab is meant to be started."""
    missing = [name for name in TORCHRUN_ENV if name not in environ]
    if missing:
        raise CourseError(
            f"--torchrun: {', '.join(missing)} not set; start the lab's ranks with "
            "`torchrun --standalone --nproc-per-node=N -m course lab --torchrun`"
        )
    return {name: environ[name] for name in TORCHRUN_ENV}


def run_torchrun_rank(
    *,
    out: Path,
    steps: int = DEFAULT_STEPS,
    warmup: int = DEFAULT_WARMUP,
    seed: int = 0,
    lr: float = 1e-3,
    timeout: float = 120.0,
) -> dict | None:
    """Measure as this rank; on rank 0 gather all ranks, write the report to `out` and return it (None elsewhere)."""
    env = {name: int(value) if name != "MASTER_ADDR" else value for name, value in torchrun_env().items()}
    rank, world = env["RANK"], env["WORLD_SIZE"]
    check_options((world,), steps, warmup)
    started = time.perf_counter()
    backend = choose_backend(env["LOCAL_WORLD_SIZE"])
    device = join_group(
        backend, init_method="env://", rank=rank, world=world, local_rank=env["LOCAL_RANK"], pg_timeout=timeout
    )
    try:
        measured = rank_worker(device=device, **lab_payload(steps=steps, warmup=warmup, seed=seed, lr=lr))
        per_rank = [None] * world if rank == 0 else None
        dist.gather_object(measured, per_rank, dst=0)
        dist.barrier()  # no rank tears gloo down while rank 0 still receives (a rank aborting at exit: seen once)
    finally:
        dist.destroy_process_group()
    if rank != 0:
        return None
    report = build_report(
        {world: per_rank}, backend=backend, launcher="torchrun", steps=steps, warmup=warmup, started=started
    )
    write_report(Path(out), report)
    return report
