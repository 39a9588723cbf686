"""What one rank of the lab does: train every hand-written stage and every PyTorch reference, measuring each."""

from __future__ import annotations

import hashlib

import torch
import torch.distributed as dist

from course.lab.formulas import STAGES
from course.lab.measure_memory import allocator_reader
from course.lab.measure_steps import measure_training
from course.lab.mlp import MlpSpec
from course.lab.pytorch_refs import make_reference
from course.lab.zero_stages import ZeroTrainer


def tensor_bytes(t: torch.Tensor) -> bytes:
    """The raw bytes of a CPU tensor (BF16 included), for bitwise comparison in the parent."""
    return t.contiguous().view(torch.uint8).numpy().tobytes()


def final_record(trainer: ZeroTrainer) -> dict[str, bytes | str]:
    """Final FP32 master weights and BF16 parameters as bytes, plus a short digest for the report."""
    final = trainer.final_parameters()
    raw = {name: tensor_bytes(t) for name, t in final.items()}
    digest = hashlib.sha256(raw["master"] + raw["params"]).hexdigest()[:16]
    return {**raw, "sha256": digest}


def warm_up(device: torch.device) -> None:
    """On a GPU, run one BF16 and one FP32 matmul so cuBLAS's workspace exists before any allocator baseline."""
    if device.type == "cuda":
        for dtype in (torch.bfloat16, torch.float32):
            torch.ones(8, 8, dtype=dtype, device=device) @ torch.ones(8, 8, dtype=dtype, device=device)
        torch.cuda.synchronize(device)


def rank_worker(
    *,
    device: torch.device,
    specs: list[MlpSpec],
    references: list[str],
    steps: int,
    warmup: int,
    seed: int,
    lr: float,
) -> dict[str, list[dict]]:
    """Measure ZeRO-0..3 on every spec, then each PyTorch reference on the first spec; return plain data."""
    rank = dist.get_rank()
    warm_up(device)
    manual = []
    for spec in specs:
        for stage in STAGES:
            allocated = allocator_reader(device)
            trainer = ZeroTrainer(spec, stage, seed=seed, lr=lr, device=device)
            measured = measure_training(trainer, steps=steps, warmup=warmup, allocated=allocated)
            final = final_record(trainer)  # every rank joins the gathers; rank 0 alone reports the result
            manual.append({"model": spec.name, "stage": stage, **measured, "final": final if rank == 0 else None})
            del trainer  # before the next baseline
    refs = []
    for name in references:
        allocated = allocator_reader(device)
        trainer = make_reference(name, specs[0], seed=seed, lr=lr, device=device)
        refs.append(
            {
                "model": specs[0].name,
                "reference": name,
                **measure_training(trainer, steps=steps, warmup=warmup, allocated=allocated),
            }
        )
        del trainer
    return {"manual": manual, "references": refs}
