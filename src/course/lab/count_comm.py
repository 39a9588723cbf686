"""Count the elements each rank communicates, at the c10d op level where hand-written ZeRO, DDP and FSDP2 all meet.

Every collective torch.distributed issues (from Python, from DDP's C++ reducer or from FSDP2) is dispatched
as a `c10d::*` operator, so one TorchDispatchMode sees them all without patching any library.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from fractions import Fraction

import torch
import torch.distributed as dist
from torch.utils._python_dispatch import TorchDispatchMode

from course.lab.formulas import broadcast_received, json_number, traffic_elements

# c10d op name -> (collective kind, the argument that holds the full, un-sharded tensor(s)).
COLLECTIVES = {
    "allreduce_": ("all_reduce", "tensors"),
    "allreduce_coalesced_": ("all_reduce", "tensors"),
    "_allgather_base_": ("all_gather", "output_tensor"),
    "allgather_": ("all_gather", "output_tensors"),
    "allgather_coalesced_": ("all_gather", "output_lists"),
    "allgather_into_tensor_coalesced_": ("all_gather", "outputs"),
    "_reduce_scatter_base_": ("reduce_scatter", "input_tensor"),
    "reduce_scatter_": ("reduce_scatter", "input_tensors"),
    "reduce_scatter_tensor_coalesced_": ("reduce_scatter", "inputs"),
    "broadcast_": ("broadcast", "tensors"),
}
# c10d ops that move no model data.
IGNORED = {"barrier", "monitored_barrier_", "check_for_nan"}


class UncountedCollective(RuntimeError):
    """A c10d op the lab has no traffic rule for ran inside a measured step."""


def _numel(value) -> int:
    """Total elements in a tensor or an arbitrarily nested list of tensors."""
    if isinstance(value, torch.Tensor):
        return value.numel()
    return sum(_numel(v) for v in value)


def _bound_arguments(func, args, kwargs) -> dict:
    """Map an op's schema argument names to the values it was called with."""
    names = [a.name for a in func._schema.arguments]
    return {**dict(zip(names, args)), **kwargs}


class CommCounter(TorchDispatchMode):
    """Records, per step, the calls, full element counts and per-rank traffic of every collective.

    Traffic is computed, not measured: the tensor sizes each collective was called with, priced by the ring
    formulas of course.lab.formulas (a broadcast: what this rank receives). Nothing here times the network.
    """

    def __init__(self):
        super().__init__()
        self.steps: list[dict[str, dict]] = []
        self._current: dict[str, dict] | None = None

    @contextmanager
    def step(self):
        """Count the collectives issued inside this block as one training step."""
        self._current = defaultdict(lambda: {"calls": 0, "numel": 0, "traffic": Fraction(0)})
        try:
            with self:
                yield
        finally:
            self.steps.append(dict(self._current))
            self._current = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace == "c10d" and self._current is not None:
            self._record(func, _bound_arguments(func, args, kwargs))
        return func(*args, **kwargs)

    def _record(self, func, bound: dict) -> None:
        """Add one collective to the current step, or refuse an op with no traffic rule."""
        name = func._schema.name.split("::", 1)[1]
        if name in IGNORED:
            return
        if name not in COLLECTIVES:
            raise UncountedCollective(f"c10d::{name} ran inside a measured step; the lab has no traffic rule for it")
        kind, full_arg = COLLECTIVES[name]
        group = dist.ProcessGroup.unbox(bound["process_group"])
        numel = _numel(bound[full_arg])
        entry = self._current[kind]
        entry["calls"] += 1
        entry["numel"] += numel
        if kind == "broadcast":
            entry["traffic"] += broadcast_received(numel, group.rank(), bound["root_rank"])
        else:
            entry["traffic"] += traffic_elements(kind, numel, group.size())


def preload() -> None:
    """Pay the one-off imports of a dispatch mode's first op (~1 s) in the parent, so forked ranks inherit them."""
    with CommCounter():
        torch.empty(0).add_(0)


def per_step_summary(step: dict[str, dict]) -> dict[str, dict]:
    """A JSON-ready copy of one step's counts, kinds sorted."""
    return {
        kind: {"calls": e["calls"], "numel": e["numel"], "traffic": json_number(e["traffic"])}
        for kind, e in sorted(step.items())
    }


def total_traffic(step: dict[str, dict]) -> Fraction:
    """All per-rank elements one step moved, over every collective kind."""
    return sum((e["traffic"] for e in step.values()), Fraction(0))
