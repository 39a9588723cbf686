"""Drive any lab trainer for a few steps and record, for each step after warm-up, its memory and traffic.

A trainer offers forward(step), backward(), optimizer_step(), resident() (state kept between steps, by
category) and held() (full-size copies alive right now). Memory is counted twice per step: after the
forward (what a stage holds between forward and backward) and after the backward (every gradient
exists, so the static parameters + gradients + optimizer states of the lesson's formulas are all live).
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


def snapshot(trainer: Trainer, allocated: Callable[[], int] | None = None) -> dict[str, int]:
    """Bytes per category of everything the trainer keeps plus what it holds at this moment (and the allocator's view)."""
    counted = inventory({**trainer.resident(), "held": trainer.held()})
    return counted if allocated is None else {**counted, "allocator": allocated()}


def measure_training(
    trainer: Trainer, *, steps: int, warmup: int, allocated: Callable[[], int] | None = None
) -> dict[str, list]:
    """Train `steps` steps; for each one after the first `warmup`, count collectives and take two snapshots.

    `allocated`, on GPU ranks, reads the bytes the device allocator handed out since before the trainer was built.
    """
    if not 0 <= warmup < steps:
        raise ValueError(f"need 0 <= warmup < steps, got warmup={warmup}, steps={steps}")
    counter = CommCounter()
    after_forward, after_backward = [], []
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
    return {"after_forward": after_forward, "after_backward": after_backward, "comm": counter.steps}
