"""Drive any lab trainer for a few steps and record, for each step after warm-up, its memory and traffic.

A trainer offers forward(step), backward(), optimizer_step(), resident() (state kept between steps, by
category) and held() (full-size copies alive right now). Memory is counted three times per step (SAMPLE_POINTS):
after the forward (what a stage holds between forward and backward), after the backward, before the optimizer
step (every gradient exists, so the static parameters + gradients + optimizer states of the lesson's formulas
are all live), and after the optimizer step (what a rank keeps from one step to the next: a trainer that
drops its gradients there, as FSDP2 training loops do with zero_grad(), keeps less). Each snapshot also
counts the gradient tensors that exist, so the report says whether gradients were dropped rather than
inferring it from byte counts.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Protocol

import torch

from course.lab.count_comm import CommCounter
from course.lab.measure_memory import inventory


class Trainer(Protocol):
    """What measure_training needs from a hand-written stage or a PyTorch reference."""

    def forward(self, step: int) -> None: ...
    def backward(self) -> None: ...
    def optimizer_step(self) -> None: ...
    def resident(self) -> dict[str, list[torch.Tensor]]: ...
    def held(self) -> list[torch.Tensor]: ...


# Where in a training step each list of snapshots is taken (the report states them; the lesson's prose reads them).
SAMPLE_POINTS = {
    "after_forward": "forward done, backward not started",
    "after_backward": "backward done, optimizer step not started",
    "between_steps": "optimizer step (and the trainer's zero_grad) done, next forward not started",
}


def snapshot(trainer: Trainer, allocated: Callable[[], int] | None = None) -> dict[str, int]:
    """Bytes per category of everything the trainer keeps plus what it holds at this moment (and the allocator's view),
    and how many gradient tensors exist (a gradient set to None is not one)."""
    resident = trainer.resident()
    counted = inventory({**resident, "held": trainer.held()})
    counted["gradient_tensors"] = sum(g is not None for g in resident.get("gradients", ()))
    return counted if allocated is None else {**counted, "allocator": allocated()}


def measure_training(
    trainer: Trainer, *, steps: int, warmup: int, allocated: Callable[[], int] | None = None
) -> dict[str, list]:
    """Train `steps` steps; for each one after the first `warmup`, count collectives and take a snapshot at each
    of the SAMPLE_POINTS.

    `allocated`, on GPU ranks, reads the bytes the device allocator handed out since before the trainer was built.
    """
    if not 0 <= warmup < steps:
        raise ValueError(f"need 0 <= warmup < steps, got warmup={warmup}, steps={steps}")
    counter = CommCounter()
    after_forward, after_backward, between_steps = [], [], []
    for step in range(steps):
        measured = step >= warmup
        with counter.step() if measured else nullcontext():
            trainer.forward(step)
            if measured:
                after_forward.append(snapshot(trainer, allocated))
            trainer.backward()
            if measured:
                after_backward.append(snapshot(trainer, allocated))
            trainer.optimizer_step()
            if measured:
                between_steps.append(snapshot(trainer, allocated))
    return {
        "after_forward": after_forward,
        "after_backward": after_backward,
        "between_steps": between_steps,
        "comm": counter.steps,
    }
