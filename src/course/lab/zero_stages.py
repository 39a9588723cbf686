"""ZeRO-0/1/2/3 written out by hand, so every buffer and every collective of lesson 5 is visible.

Each layer's weight and bias live in one flat buffer padded to a multiple of N; rank r owns the slice
[r·S, (r+1)·S) with S = padded/N. Parameters and gradients are BF16; the FP32 master weight and Adam's
m and v are the optimizer state (k = 12 bytes per parameter). What each stage keeps:

    stage  parameters (BF16)  gradients (BF16)  master, m, v (FP32)  collectives per step
    0      full               full              full                 all-reduce(grads)
    1      full               full              shard                reduce-scatter(grads) + all-gather(params)
    2      full               shard             shard                reduce-scatter(grads) + all-gather(params)
    3      shard              shard             shard                all-gather(fwd) + all-gather(bwd) + reduce-scatter

Forward and backward are written by hand (no autograd) so the second all-gather of ZeRO-3 sits in plain
sight before each layer's backward. All stages run the same arithmetic on the same values, so they end
with bit-identical parameters: the stages change memory and traffic, not the math.
"""

from __future__ import annotations

import time
import warnings
import weakref
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as F

from course.lab.formulas import SHARDED, check_stage, padded_numel
from course.lab.mlp import MlpSpec, initial_layers, rank_batch

# torch 2.4, the oldest torch the lab supports, has only all_gather_into_tensor and reduce_scatter_tensor; newer
# torch deprecates both names (a FutureWarning at every call, in favour of *_single, which 2.4 lacks). The lab keeps
# the names every supported torch has and silences that one notice, nothing else.
PORTABLE_NAMES_NOTICE = r"`torch\.distributed\.(all_gather_into_tensor|reduce_scatter_tensor)` is deprecated"

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
RELEASE_GRACE_SECONDS = 0.2


@dataclass(frozen=True)
class FlatLayout:
    """Where one Linear layer's weight and bias sit in its padded flat buffer."""

    fan_in: int
    fan_out: int
    world: int

    @property
    def numel(self) -> int:
        """Real parameters: weight plus bias."""
        return (self.fan_in + 1) * self.fan_out

    @property
    def padded(self) -> int:
        """Buffer length, a multiple of N."""
        return padded_numel(self.numel, self.world)

    @property
    def shard(self) -> int:
        """Elements each rank owns."""
        return self.padded // self.world

    def split(self, flat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Weight and bias as views into a full flat buffer (the padding tail is left out)."""
        n_weight = self.fan_out * self.fan_in
        return flat[:n_weight].view(self.fan_out, self.fan_in), flat[n_weight : self.numel]

    def flatten(self, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        """A new zero-padded flat buffer holding weight then bias."""
        flat = torch.zeros(self.padded, dtype=weight.dtype, device=weight.device)
        w, b = self.split(flat)
        w.copy_(weight)
        b.copy_(bias)
        return flat

    def owned(self, flat: torch.Tensor, rank: int) -> torch.Tensor:
        """This rank's slice of a full flat buffer."""
        return flat[rank * self.shard : (rank + 1) * self.shard]


def adam_update(master, exp_avg, exp_avg_sq, grad, step: int, lr: float) -> None:
    """Adam on FP32 tensors, one elementwise op at a time so a shard and the full buffer round identically."""
    beta1, beta2 = ADAM_BETAS
    exp_avg.mul_(beta1).add_(grad * (1 - beta1))
    exp_avg_sq.mul_(beta2).add_(grad * grad * (1 - beta2))
    m_hat = exp_avg / (1 - beta1**step)
    v_hat = exp_avg_sq / (1 - beta2**step)
    master.sub_(m_hat / (v_hat.sqrt() + ADAM_EPS) * lr)


class ZeroTrainer:
    """One rank of a hand-written ZeRO stage over the lab's MLP, on the default process group."""

    def __init__(self, spec: MlpSpec, stage: int, *, seed: int, lr: float, device: torch.device):
        warnings.filterwarnings("ignore", message=PORTABLE_NAMES_NOTICE, category=FutureWarning)
        self.spec = spec
        self.stage = check_stage(stage)
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self.seed = seed
        self.lr = lr
        self.device = device
        self.layouts = [FlatLayout(fan_in, fan_out, self.world) for fan_in, fan_out in spec.layers]
        self.shard_params, self.shard_grads, self.shard_optimizer = SHARDED[stage]
        full_master = [
            layout.flatten(w.to(device), b.to(device))
            for layout, (w, b) in zip(self.layouts, initial_layers(spec, seed))
        ]
        self.params = [
            self._keep(layout, m, self.shard_params).to(torch.bfloat16) for layout, m in zip(self.layouts, full_master)
        ]
        self.grads = [
            torch.zeros(layout.shard if self.shard_grads else layout.padded, dtype=torch.bfloat16, device=device)
            for layout in self.layouts
        ]
        self.master = [self._keep(layout, m, self.shard_optimizer) for layout, m in zip(self.layouts, full_master)]
        self.exp_avg = [torch.zeros_like(m) for m in self.master]
        self.exp_avg_sq = [torch.zeros_like(m) for m in self.master]
        self.steps_taken = 0
        self._transient: list[weakref.ref] = []
        self._saved: list[tuple[torch.Tensor, torch.Tensor]] = []

    def _keep(self, layout: FlatLayout, full: torch.Tensor, sharded: bool) -> torch.Tensor:
        """The part of a full buffer this rank stores: a copy of its own slice, or the whole buffer."""
        return layout.owned(full, self.rank).clone() if sharded else full

    def _track(self, tensor: torch.Tensor) -> torch.Tensor:
        """Remember a transient full-size buffer weakly, so the memory count sees it if it outlives its use."""
        self._transient.append(weakref.ref(tensor))
        return tensor

    def _full_params(self, i: int) -> torch.Tensor:
        """Layer i's full BF16 flat parameters: all-gathered into a temporary (ZeRO-3) or the resident copy."""
        if not self.shard_params:
            return self.params[i]
        gathered = self._track(torch.empty(self.layouts[i].padded, dtype=torch.bfloat16, device=self.device))
        dist.all_gather_into_tensor(gathered, self.params[i])
        return gathered

    def forward(self, step: int) -> None:
        """Run this rank's batch for `step` through the MLP, keeping inputs and pre-activations for backward."""
        x, self._target = (t.to(self.device) for t in rank_batch(self.spec, self.seed, self.rank, step))
        h = x.to(torch.bfloat16)
        self._saved = []
        last = len(self.layouts) - 1
        for i, layout in enumerate(self.layouts):
            weight, bias = layout.split(self._full_params(i))
            pre = F.linear(h, weight, bias)
            del weight, bias  # ZeRO-3: the gathered buffer dies here, before the next layer gathers
            self._saved.append((h, pre))
            h = pre if i == last else torch.relu(pre)
        self._output = h

    def backward(self) -> None:
        """Backpropagate the mean-squared error layer by layer, handing each layer's gradient to the stage."""
        out = self._output.float()
        grad = (2.0 / out.numel() * (out - self._target)).to(torch.bfloat16)
        self._output = self._target = None  # after backward only the state is left (what a GPU's allocator shows)
        last = len(self.layouts) - 1
        for i in reversed(range(len(self.layouts))):
            h_in, pre = self._saved[i]
            weight, _ = self.layouts[i].split(self._full_params(i))
            if i != last:
                grad = grad * (pre > 0)
            layer_grad = self._gradient_buffer(i)
            grad_w, grad_b = self.layouts[i].split(layer_grad)
            torch.matmul(grad.t(), h_in, out=grad_w)
            torch.sum(grad, dim=0, out=grad_b)
            grad = grad @ weight if i > 0 else None
            del weight
            self._reduce_gradient(i, layer_grad)
        self._saved = []

    def _gradient_buffer(self, i: int) -> torch.Tensor:
        """Where layer i's local gradient is written: the resident full buffer, or a temporary one to scatter."""
        if not self.shard_grads:
            return self.grads[i]
        return self._track(torch.zeros(self.layouts[i].padded, dtype=torch.bfloat16, device=self.device))

    def _reduce_gradient(self, i: int, layer_grad: torch.Tensor) -> None:
        """ZeRO-0 all-reduces the layer now; ZeRO-2/3 reduce-scatter it into the owned shard; ZeRO-1 waits for the
        step."""
        if self.stage == 0:
            dist.all_reduce(layer_grad)
            layer_grad.div_(self.world)
        elif self.shard_grads:
            dist.reduce_scatter_tensor(self.grads[i], layer_grad)
            self.grads[i].div_(self.world)

    def _owned_gradient(self, i: int) -> torch.Tensor:
        """The averaged gradient matching this rank's optimizer state (ZeRO-1 reduce-scatters it here)."""
        if self.stage == 1:
            shard = torch.empty(self.layouts[i].shard, dtype=torch.bfloat16, device=self.device)
            dist.reduce_scatter_tensor(shard, self.grads[i])
            return shard.div_(self.world)
        return self.grads[i]

    def optimizer_step(self) -> None:
        """Adam on the owned FP32 state, then publish the new BF16 parameters where the stage keeps them."""
        self.steps_taken += 1
        for i in range(len(self.layouts)):
            grad = self._owned_gradient(i).float()
            adam_update(self.master[i], self.exp_avg[i], self.exp_avg_sq[i], grad, self.steps_taken, self.lr)
            updated = self.master[i].to(torch.bfloat16)
            if self.shard_optimizer and not self.shard_params:
                dist.all_gather_into_tensor(self.params[i], updated)
            else:
                self.params[i].copy_(updated)

    def resident(self) -> dict[str, list[torch.Tensor]]:
        """The state this rank keeps between steps, by category."""
        return {
            "parameters": list(self.params),
            "gradients": list(self.grads),
            "optimizer": [*self.master, *self.exp_avg, *self.exp_avg_sq],
        }

    def held(self) -> list[torch.Tensor]:
        """Transient full-size buffers (gathered parameters, unscattered gradients) still alive right now.

        A finished collective's work object can keep its tensors for a moment on the backend's worker thread,
        so buffers only that thread still references get a short grace period; one this code keeps never dies.
        """
        deadline = time.monotonic() + RELEASE_GRACE_SECONDS
        while True:
            self._transient = [ref for ref in self._transient if ref() is not None]
            if not self._transient or time.monotonic() > deadline:
                return [t for t in (ref() for ref in self._transient) if t is not None]
            time.sleep(0.001)

    def final_parameters(self) -> dict[str, torch.Tensor]:
        """Full FP32 master weights and BF16 parameters without padding (gathers shards; call outside measurement)."""
        layers = range(len(self.layouts))
        return {
            "master": torch.cat([self._unpadded(i, self.master[i], self.shard_optimizer) for i in layers]),
            "params": torch.cat([self._unpadded(i, self.params[i], self.shard_params) for i in layers]),
        }

    def _unpadded(self, i: int, buffer: torch.Tensor, sharded: bool) -> torch.Tensor:
        """Layer i's buffer as a full tensor without the padding tail."""
        layout = self.layouts[i]
        if sharded:
            full = torch.empty(layout.padded, dtype=buffer.dtype, device=buffer.device)
            dist.all_gather_into_tensor(full, buffer)
            buffer = full
        return buffer[: layout.numel].cpu()
