"""The c10d-level counter sees every collective a rank issues, with the lesson's per-rank traffic."""

from __future__ import annotations

from fractions import Fraction

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

from course.errors import CourseError  # noqa: E402
from course.lab.count_comm import CommCounter, per_step_summary, preload, total_traffic  # noqa: E402
from course.lab.launch import run_ranks  # noqa: E402

pytestmark = pytest.mark.torch


def _known_collectives(*, device):
    """Issue one of each collective the lab uses (plus an uncounted one outside the step)."""
    world = dist.get_world_size()
    counter = CommCounter()
    dist.all_reduce(torch.ones(1000))  # before the step: must not be counted
    with counter.step():
        dist.all_reduce(torch.ones(10, dtype=torch.bfloat16))
        full = torch.empty(8 * world)
        dist.all_gather_into_tensor(full, torch.ones(8))
        dist.reduce_scatter_tensor(torch.empty(6), torch.ones(6 * world))
        dist.broadcast(torch.ones(5), src=0)
        dist.barrier()
    return counter.steps


def _unsupported_collective(*, device):
    """dist.reduce has no traffic rule in the lab."""
    counter = CommCounter()
    with counter.step():
        dist.reduce(torch.ones(4), dst=0)


def test_counts_each_collective_once_with_ring_traffic():
    preload()
    steps = run_ranks(_known_collectives, world=4, payload={}, timeout=60)
    for rank, rank_steps in enumerate(steps):
        assert len(rank_steps) == 1
        step = rank_steps[0]
        received = 0 if rank == 0 else 5  # a broadcast from rank 0: every other rank receives all 5 elements
        assert per_step_summary(step) == {
            "all_gather": {"calls": 1, "numel": 32, "traffic": 24.0},
            "all_reduce": {"calls": 1, "numel": 10, "traffic": 15.0},
            "broadcast": {"calls": 1, "numel": 5, "traffic": received},
            "reduce_scatter": {"calls": 1, "numel": 24, "traffic": 18.0},
        }
        assert total_traffic(step) == Fraction(24 + 15 + 18) + received


def test_collective_without_traffic_rule_fails_the_run():
    with pytest.raises(CourseError, match=r"c10d::reduce_ ran inside a measured step"):
        run_ranks(_unsupported_collective, world=2, payload={}, timeout=60)
