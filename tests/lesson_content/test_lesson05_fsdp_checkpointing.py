"""Lesson 5 (§5, 激活检查点与 FSDP 一起用) says recomputing a checkpointed block under FSDP2 issues no second
all-gather: with each block checkpointed and then fully_shard-ed, a step's collectives are the same as without."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from course.lab.count_comm import CommCounter, per_step_summary  # noqa: E402
from course.lab.launch import run_ranks  # noqa: E402

pytestmark = pytest.mark.torch
BLOCKS = 4


class _Block(torch.nn.Module):
    """A two-layer block whose forward may run under torch.utils.checkpoint (recomputed in backward)."""

    def __init__(self, checkpointed: bool):
        super().__init__()
        self.up, self.down, self.checkpointed = torch.nn.Linear(16, 64), torch.nn.Linear(64, 16), checkpointed
        self.runs = 0

    def _inner(self, x):
        self.runs += 1
        return self.down(torch.relu(self.up(x)))

    def forward(self, x):
        if self.checkpointed:
            return torch.utils.checkpoint.checkpoint(self._inner, x, use_reentrant=False)
        return self._inner(x)


def _step_collectives(*, device, checkpointed):
    """Blocks checkpointed (or not), each fully_shard-ed, then the root; count the second step's collectives."""
    from torch.distributed.device_mesh import init_device_mesh

    from course.lab.pytorch_refs import fully_shard

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[_Block(checkpointed) for _ in range(BLOCKS)]).to(device)
    mesh = init_device_mesh(device.type, (torch.distributed.get_world_size(),))
    for block in model:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    x = torch.randn(8, 16, device=device)
    counter = CommCounter()
    for _ in range(2):  # the first step is a warm-up, as in the lab
        with counter.step():
            model(x).sum().backward()
    return per_step_summary(counter.steps[-1]), sum(block.runs for block in model) // 2


def test_checkpointed_blocks_cost_no_extra_collective_under_fsdp2():
    (plain, plain_runs), (checkpointed, recomputed_runs) = (
        run_ranks(_step_collectives, world=2, payload={"checkpointed": c}, timeout=120)[0] for c in (False, True)
    )
    assert (plain_runs, recomputed_runs) == (BLOCKS, 2 * BLOCKS)  # each checkpointed block ran forward twice a step
    assert plain["all_gather"]["calls"] == 2 * BLOCKS  # resharded after forward: gathered again for backward
    assert plain["reduce_scatter"]["calls"] == BLOCKS
    assert checkpointed == plain
