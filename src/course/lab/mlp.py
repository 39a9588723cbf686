"""The small MLP every lab trainer uses: its shape, its initial weights and each rank's batches.

All trainers (the four hand-written ZeRO stages and the PyTorch references) start from the same weights
and see the same per-rank batches, so their final parameters can be compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

BATCH = 16


@dataclass(frozen=True)
class MlpSpec:
    """Layer widths d0 → d1 → … → dL of a ReLU MLP with biases; one Linear per consecutive pair."""

    name: str
    dims: tuple[int, ...]

    def __post_init__(self):
        if len(self.dims) < 2 or any(not isinstance(d, int) or d < 1 for d in self.dims):
            raise ValueError(f"MLP {self.name!r}: dims must be at least two positive integers, got {self.dims!r}")

    @property
    def layers(self) -> list[tuple[int, int]]:
        """(fan_in, fan_out) of each Linear layer."""
        return list(zip(self.dims[:-1], self.dims[1:]))

    @property
    def layer_numels(self) -> list[int]:
        """Parameters per layer: weight fan_out×fan_in plus bias fan_out."""
        return [(fan_in + 1) * fan_out for fan_in, fan_out in self.layers]

    @property
    def psi(self) -> int:
        """Ψ, the model's parameter count."""
        return sum(self.layer_numels)


def initial_layers(spec: MlpSpec, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """FP32 (weight, bias) per layer, uniform in ±1/√fan_in like nn.Linear, identical on every rank."""
    gen = torch.Generator().manual_seed(seed)
    layers = []
    for fan_in, fan_out in spec.layers:
        bound = 1.0 / math.sqrt(fan_in)
        weight = (torch.rand(fan_out, fan_in, generator=gen) * 2 - 1) * bound
        bias = (torch.rand(fan_out, generator=gen) * 2 - 1) * bound
        layers.append((weight, bias))
    return layers


def rank_batch(spec: MlpSpec, seed: int, rank: int, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """FP32 (input, target) for one rank at one step; different ranks see different data, as in DP."""
    gen = torch.Generator().manual_seed((seed * 1_000_003 + rank) * 1_000_003 + step)
    x = torch.randn(BATCH, spec.dims[0], generator=gen)
    target = torch.randn(BATCH, spec.dims[-1], generator=gen)
    return x, target


def torch_mlp(spec: MlpSpec, seed: int) -> torch.nn.Sequential:
    """The same MLP as nn.Linear/ReLU modules with the lab's initial weights, for FSDP2 and DDP."""
    modules: list[torch.nn.Module] = []
    for i, (weight, bias) in enumerate(initial_layers(spec, seed)):
        linear = torch.nn.Linear(weight.shape[1], weight.shape[0])
        with torch.no_grad():
            linear.weight.copy_(weight)
            linear.bias.copy_(bias)
        modules.append(linear)
        if i < len(spec.layers) - 1:
            modules.append(torch.nn.ReLU())
    return torch.nn.Sequential(*modules)
