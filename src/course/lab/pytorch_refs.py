"""PyTorch's own sharded trainers on the lab's MLP, measured exactly like the hand-written stages.

FSDP2 (`fully_shard`, one unit per Linear plus the root, BF16 `MixedPrecisionPolicy`) with
reshard_after_forward True and False, and DDP + `ZeroRedundancyOptimizer` (FP32 model: PyTorch has no
separate master weights there, the FP32 parameters are the master copy). Each reference also states the
per-rank model the lesson uses to explain it; the lab checks the measurement against that model.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh

try:  # public names since torch 2.6
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.tensor import DTensor
except ImportError:  # torch 2.4 and 2.5 keep FSDP2 and DTensor under private names
    from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed._tensor import DTensor
from torch.nn.parallel import DistributedDataParallel

with warnings.catch_warnings():
    # torch.distributed.optim scripts its functional optimizers with torch.jit, deprecated in torch 2.13.
    warnings.filterwarnings("ignore", r"`torch\.jit\.(script|interface)` is deprecated", DeprecationWarning)
    from torch.distributed.optim import ZeroRedundancyOptimizer

from course.lab.measure_memory import optimizer_state_groups
from course.lab.mlp import MlpSpec, rank_batch, torch_mlp

# name -> (ZeRO stage the reference is compared with, reshard_after_forward for FSDP2 or None)
REFERENCES = {
    "fsdp2_reshard": (3, True),
    "fsdp2_no_reshard": (3, False),
    "zero_redundancy_optimizer": (1, None),
}


class _TorchTrainer:
    """Forward/backward shared by the references: the MLP's MSE loss on this rank's batch."""

    def __init__(self, spec: MlpSpec, model: torch.nn.Module, *, seed: int, device: torch.device):
        self.spec = spec
        self.model = model
        self.seed = seed
        self.device = device
        self.rank = dist.get_rank()

    def forward(self, step: int) -> None:
        """Compute the loss for this rank's batch at `step`."""
        x, target = (t.to(self.device) for t in rank_batch(self.spec, self.seed, self.rank, step))
        self._loss = F.mse_loss(self.model(x).float(), target)

    def backward(self) -> None:
        """Autograd backward; the wrappers' hooks issue the gradient collectives."""
        self._loss.backward()
        self._loss = None


class Fsdp2Trainer(_TorchTrainer):
    """FSDP2 over the MLP: FP32 sharded parameters, BF16 compute and BF16 collectives."""

    def __init__(self, spec: MlpSpec, *, reshard_after_forward: bool, seed: int, lr: float, device: torch.device):
        mesh = init_device_mesh(device.type, (dist.get_world_size(),))
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16)
        model = torch_mlp(spec, seed).to(device)
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer, mesh=mesh, reshard_after_forward=reshard_after_forward, mp_policy=policy)
        fully_shard(model, mesh=mesh, reshard_after_forward=reshard_after_forward, mp_policy=policy)
        super().__init__(spec, model, seed=seed, device=device)
        self.sharded = list(model.parameters())
        self.optimizer = torch.optim.Adam(self.sharded, lr=lr)

    def optimizer_step(self) -> None:
        """Adam on the FP32 shards, then drop the gradients as FSDP2 training loops do."""
        self.optimizer.step()
        self.optimizer.zero_grad()

    def resident(self) -> dict[str, list[torch.Tensor]]:
        """FP32 parameter shards, their (FP32, sharded) gradients, and Adam's state."""
        return {
            "parameters": self.sharded,
            "gradients": [p.grad for p in self.sharded],
            **optimizer_state_groups(self.optimizer.state),
        }

    def held(self) -> list[torch.Tensor]:
        """Unsharded BF16 parameters the module currently exposes instead of its DTensor shards."""
        return [p for p in self.model.parameters() if not isinstance(p, DTensor)]


class ZeroRedundancyTrainer(_TorchTrainer):
    """DDP (gradients as views into its FP32 buckets) with ZeroRedundancyOptimizer wrapping Adam."""

    def __init__(self, spec: MlpSpec, *, seed: int, lr: float, device: torch.device):
        model = torch_mlp(spec, seed).to(device)
        device_ids = [device.index] if device.type == "cuda" else None
        ddp = DistributedDataParallel(model, device_ids=device_ids, gradient_as_bucket_view=True)
        super().__init__(spec, ddp, seed=seed, device=device)
        self.params = list(model.parameters())
        self.optimizer = ZeroRedundancyOptimizer(self.params, optimizer_class=torch.optim.Adam, lr=lr)

    def optimizer_step(self) -> None:
        """Adam on the parameters this rank owns, then ZeroRedundancyOptimizer broadcasts every rank's update."""
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=False)

    def resident(self) -> dict[str, list[torch.Tensor]]:
        """Full FP32 parameters, DDP's gradient buckets, and the Adam state of the owned parameters."""
        return {
            "parameters": self.params,
            "gradients": [p.grad for p in self.params],
            **optimizer_state_groups(self.optimizer.optim.state),
        }

    def held(self) -> list[torch.Tensor]:
        """Nothing is gathered on demand: every rank keeps the full parameters."""
        return []


def make_reference(name: str, spec: MlpSpec, *, seed: int, lr: float, device: torch.device) -> _TorchTrainer:
    """Build the named reference trainer on the default process group."""
    if name not in REFERENCES:
        raise ValueError(f"unknown PyTorch reference {name!r}; expected one of {sorted(REFERENCES)}")
    _, reshard = REFERENCES[name]
    if reshard is None:
        return ZeroRedundancyTrainer(spec, seed=seed, lr=lr, device=device)
    return Fsdp2Trainer(spec, reshard_after_forward=reshard, seed=seed, lr=lr, device=device)


def expected_model(name: str, psi: int, world: int) -> dict[str, Fraction | bool]:
    """Per-rank bytes and elements the lesson's explanation predicts for a reference (before measuring it).

    FSDP2: after backward, FP32 parameter shard 4Ψ/N + FP32 gradient shard 4Ψ/N + Adam m, v 8Ψ/N = 16Ψ/N
    either way; between steps 12Ψ/N, because Fsdp2Trainer.optimizer_step calls zero_grad() (gradients set to
    None); reshard_after_forward=False keeps the 2Ψ BF16 parameters from forward to backward and skips the
    backward all-gather. ZeroRedundancyOptimizer: full FP32 parameters 4Ψ and DDP buckets 4Ψ on every
    rank, kept between steps (zero_grad(set_to_none=False)), Adam's 8Ψ split by whole parameters (so only
    the sum over ranks is fixed); DDP all-reduces the gradients (2(N−1)/N·Ψ per rank) and every owner
    broadcasts its updated parameters, so each rank receives the Ψ − Ψ_r elements it does not own
    ((N−1)Ψ summed over ranks).
    """
    if name not in REFERENCES:
        raise ValueError(f"unknown PyTorch reference {name!r}; expected one of {sorted(REFERENCES)}")
    per_rank = Fraction(psi, world)
    ring = Fraction(world - 1, world)
    if name == "zero_redundancy_optimizer":
        return {
            "parameters": Fraction(4 * psi),
            "gradients": Fraction(4 * psi),
            "optimizer_sum_over_ranks": Fraction(8 * psi),
            "held_after_forward": Fraction(0),
            "kept_between_steps": Fraction(8 * psi),  # plus this rank's share of Adam's state
            "gradients_kept": True,
            "comm_all_reduce": 2 * ring * psi,
            "comm_sum_over_ranks": Fraction(3 * (world - 1) * psi),
        }
    reshard = REFERENCES[name][1]
    return {
        "parameters": 4 * per_rank,
        "gradients": 4 * per_rank,
        "optimizer": 8 * per_rank,
        "held_after_forward": Fraction(0) if reshard else Fraction(2 * psi),
        "kept_between_steps": 12 * per_rank,
        "gradients_kept": False,
        "comm": (3 if reshard else 2) * ring * psi,
    }
