"""Bytes of live state tensors per rank, by category, counted from the buffers themselves.

Process RSS mixes in the allocator, the interpreter and torch's own libraries, so the lab counts
numel × element size of every distinct storage behind the tensors a trainer holds. A view (a weight
inside a layer's flat buffer, a gradient inside a DDP bucket) is counted once, through its storage.
On GPU ranks the CUDA caching allocator is read as well (torch.cuda.memory_allocated, relative to a
baseline taken before the trainer exists): what the device really handed out, each block rounded up
to 512 bytes, for comparison with the count.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable

import torch

CATEGORIES = ("parameters", "gradients", "optimizer", "optimizer_scalars", "held")


def local_tensor(t: torch.Tensor) -> torch.Tensor:
    """The rank-local tensor behind a DTensor (FSDP2 shards), or the tensor itself."""
    to_local = getattr(t, "to_local", None)
    return to_local() if callable(to_local) else t


def storage_key(t: torch.Tensor) -> tuple[str, int]:
    """Identity of the buffer a tensor lives in (device and address of its storage)."""
    storage = t.untyped_storage()
    return (str(t.device), storage.data_ptr())


def inventory(groups: dict[str, Iterable[torch.Tensor | None]]) -> dict[str, int]:
    """Bytes per category; a storage already counted in an earlier category is not counted again."""
    unknown = set(groups) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown memory categories {sorted(unknown)}; expected some of {CATEGORIES}")
    seen: set[tuple[str, int]] = set()
    totals = {}
    for category in CATEGORIES:
        total = 0
        for tensor in groups.get(category, ()):
            if tensor is None:
                continue
            local = local_tensor(tensor)
            key = storage_key(local)
            if key in seen or local.untyped_storage().nbytes() == 0:
                continue
            seen.add(key)
            total += local.untyped_storage().nbytes()
        totals[category] = total
    return totals


def optimizer_state_groups(state: dict) -> dict[str, list[torch.Tensor]]:
    """Split a torch.optim state dict into per-element buffers (m, v) and 0-dim bookkeeping (Adam's step)."""
    tensors = [v for per_param in state.values() for v in per_param.values() if isinstance(v, torch.Tensor)]
    return {
        "optimizer": [t for t in tensors if t.dim() > 0],
        "optimizer_scalars": [t for t in tensors if t.dim() == 0],
    }


# The CUDA caching allocator rounds every block up to a multiple of this many bytes.
ALLOCATOR_BLOCK = 512


def allocator_reader(device: torch.device) -> Callable[[], int] | None:
    """On a GPU rank, a function returning the bytes allocated on it since now; None on CPU (no such allocator)."""
    if device.type != "cuda":
        return None
    gc.collect()
    torch.cuda.synchronize(device)
    baseline = torch.cuda.memory_allocated(device)
    return lambda: torch.cuda.memory_allocated(device) - baseline


def allocator_problems(counted: list[int], allocated: list[int], storages: int) -> list[str]:
    """Ranks whose allocator reading is below the counted bytes or above them plus each storage's rounding."""
    slack = (ALLOCATOR_BLOCK - 1) * storages
    return [
        f"rank {rank}: CUDA allocator holds {got} B for {want} B of state (allowed up to {want + slack} B)"
        for rank, (want, got) in enumerate(zip(counted, allocated))
        if not want <= got <= want + slack
    ]
