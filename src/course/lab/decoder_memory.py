"""Lesson 5's memory arithmetic on one real GPU: static bytes per state against 2Ψ + 2Ψ + 12Ψ, and activations.

A decoder of Ψ ≈ 1.3·10⁹ parameters trains a few steps the way the lesson describes mixed precision:
BF16 parameters and gradients, an FP32 master copy and FP32 Adam m and v (k = 12). Each state is
measured twice: counted from its tensors (numel × element size) and, on a GPU, read from the CUDA
caching allocator as it grows while that state is created. Activations are measured separately at each
sequence length: the peak the allocator reaches during forward + backward minus the static part, and
(on any device) the bytes autograd saves for backward, parameters excluded.

    python -m course.lab.decoder_memory --preset 1.3b --device cuda --out lessons/lesson05/gpu_memory.json

needs torch alone (course.lab.gpu_memory_file writes and reads the file; `--check FILE` validates a
copied-back file on the development machine). The result carries its provenance.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from course.errors import CourseError
from course.lab.decoder import PRESETS, Decoder, DecoderSpec
from course.lab.gpu_memory_file import SCHEMA_ID, read_record, write_record
from course.lab.zero_stages import adam_update

FORMULA_BYTES = {"parameters": 2, "gradients": 2, "optimizer": 12}  # per parameter, as in the lesson


class Allocator:
    """Bytes in use on the device: the CUDA caching allocator's count on a GPU, nothing to read on CPU."""

    def __init__(self, device: torch.device):
        self.device = device
        self.cuda = device.type == "cuda"

    def allocated(self) -> int | None:
        """Bytes the allocator has handed out right now (each block rounded up to 512 B)."""
        if not self.cuda:
            return None
        torch.cuda.synchronize(self.device)
        return torch.cuda.memory_allocated(self.device)

    def reset_peak(self) -> None:
        """Start a new peak window."""
        if self.cuda:
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)

    def peak(self) -> int | None:
        """Highest allocation since reset_peak."""
        if not self.cuda:
            return None
        torch.cuda.synchronize(self.device)
        return torch.cuda.max_memory_allocated(self.device)


def _delta(after: int | None, before: int | None) -> int | None:
    """Growth between two allocator readings (None on CPU)."""
    return None if after is None or before is None else after - before


def _nbytes(tensors) -> int:
    """numel × element size summed over tensors."""
    return sum(t.numel() * t.element_size() for t in tensors)


class MixedPrecisionState:
    """BF16 model and gradients plus FP32 master weights and Adam moments, each created under the allocator's eye."""

    def __init__(self, spec: DecoderSpec, device: torch.device, allocator: Allocator, seed: int):
        torch.manual_seed(seed)
        mark = allocator.allocated()
        self.model = Decoder(spec, device=device)
        self.params = list(self.model.parameters())
        after_params = allocator.allocated()
        for p in self.params:
            p.grad = torch.zeros_like(p)  # kept across steps: backward accumulates into them in place
        after_grads = allocator.allocated()
        self.master = [p.detach().float() for p in self.params]
        self.exp_avg = [torch.zeros_like(m) for m in self.master]
        self.exp_avg_sq = [torch.zeros_like(m) for m in self.master]
        after_optimizer = allocator.allocated()
        self.counted = {
            "parameters": _nbytes(self.params),
            "gradients": _nbytes(p.grad for p in self.params),
            "optimizer": _nbytes([*self.master, *self.exp_avg, *self.exp_avg_sq]),
        }
        self.allocated = {
            "parameters": _delta(after_params, mark),
            "gradients": _delta(after_grads, after_params),
            "optimizer": _delta(after_optimizer, after_grads),
        }
        self.steps_taken = 0

    def optimizer_step(self, lr: float) -> None:
        """Adam on the FP32 master from the BF16 gradient, one parameter at a time; BF16 copy back; zero the
        gradient."""
        self.steps_taken += 1
        with torch.no_grad():
            for p, master, m, v in zip(self.params, self.master, self.exp_avg, self.exp_avg_sq):
                adam_update(master, m, v, p.grad.float(), self.steps_taken, lr)
                p.copy_(master)
                p.grad.zero_()


def saved_activation_bytes(state: MixedPrecisionState, tokens: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Forward with the loss; return it and the bytes autograd saved for backward (distinct storages, no parameters)."""
    own = {p.untyped_storage().data_ptr() for p in state.params}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in own:
            saved[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        logits = state.model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten())
    return loss, sum(saved.values())


def measure_sequence(
    state: MixedPrecisionState, allocator: Allocator, *, seq_len: int, batch: int, steps: int, lr: float, seed: int
) -> dict:
    """Train `steps` steps at one sequence length; the last step's activation memory and every step's loss."""
    spec_vocab = state.model.embed.num_embeddings
    gen = torch.Generator().manual_seed(seed + seq_len)
    losses, record = [], {}
    for _ in range(steps):
        tokens = torch.randint(spec_vocab, (batch, seq_len + 1), generator=gen).to(state.params[0].device)
        static = allocator.allocated()
        allocator.reset_peak()
        started = time.perf_counter()
        loss, saved = saved_activation_bytes(state, tokens)
        after_forward = allocator.allocated()
        loss.backward()
        peak = allocator.peak()
        state.optimizer_step(lr)
        if allocator.cuda:
            torch.cuda.synchronize(allocator.device)
        losses.append(float(loss.detach()))
        record = {
            "seq_len": seq_len,
            "batch": batch,
            "tokens": batch * seq_len,
            "saved_for_backward_bytes": saved,
            "held_after_forward_bytes": _delta(after_forward, static),
            "peak_allocated_bytes": peak,
            "activation_bytes": _delta(peak, static),
            "step_seconds": round(time.perf_counter() - started, 4),
        }
        del loss
    layers = len(state.model.blocks)
    per_token_layer = (
        None if record["activation_bytes"] is None else record["activation_bytes"] / (record["tokens"] * layers)
    )
    return {**record, "activation_bytes_per_token_per_layer": per_token_layer, "losses": losses}


def _driver_version() -> str | None:
    """The NVIDIA driver version as nvidia-smi reports it (None where there is no nvidia-smi)."""
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else None


def provenance(device: torch.device, argv: list[str]) -> dict:
    """Where and how the numbers were taken: GPU, driver, torch, CUDA, Python, date, the command."""
    return {
        "device": device.type,
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "gpu_memory_bytes": torch.cuda.get_device_properties(device).total_memory if device.type == "cuda" else None,
        "driver": _driver_version() if device.type == "cuda" else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": shlex.join(["python", "-m", "course.lab.decoder_memory", *argv]),
    }


def _state_rows(state: MixedPrecisionState, psi: int) -> dict:
    """Counted and allocator bytes of each state and of their sum, against the lesson's 2Ψ, 2Ψ, 12Ψ and 16Ψ."""
    rows = {}
    for name, per_param in {**FORMULA_BYTES, "total": sum(FORMULA_BYTES.values())}.items():
        names = list(FORMULA_BYTES) if name == "total" else [name]
        counted = sum(state.counted[n] for n in names)
        allocated = None if state.allocated[names[0]] is None else sum(state.allocated[n] for n in names)
        formula = per_param * psi
        rows[name] = {
            "formula": f"{per_param}Ψ",
            "formula_bytes": formula,
            "counted_bytes": counted,
            "counted_ratio": counted / formula,
            "allocator_bytes": allocated,
            "allocator_ratio": None if allocated is None else allocated / formula,
        }
    return rows


def measure(
    spec: DecoderSpec,
    device: torch.device,
    *,
    seq_lens: list[int],
    batch: int,
    steps: int,
    lr: float,
    seed: int,
    argv: list[str],
) -> dict:
    """The whole measurement as one JSON-ready record."""
    allocator = Allocator(device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        (
            torch.ones(8, 8, device=device, dtype=torch.bfloat16)
            @ torch.ones(8, 8, device=device, dtype=torch.bfloat16)
        ).sum().item()
    started = time.perf_counter()
    state = MixedPrecisionState(spec, device, allocator, seed)
    sequences = [
        measure_sequence(state, allocator, seq_len=s, batch=batch, steps=steps, lr=lr, seed=seed) for s in seq_lens
    ]
    return {
        "schema": SCHEMA_ID,
        "provenance": provenance(device, argv),
        "model": {
            **{k: getattr(spec, k) for k in ("name", "vocab", "d_model", "layers", "heads", "ffn")},
            "psi": spec.psi,
        },
        "precision": {
            "parameters": "bfloat16",
            "gradients": "bfloat16",
            "master": "float32",
            "adam_m": "float32",
            "adam_v": "float32",
        },
        "steps_per_sequence_length": steps,
        "static": _state_rows(state, spec.psi),
        "activations": sequences,
        "wall_seconds": round(time.perf_counter() - started, 2),
    }


def _parser() -> argparse.ArgumentParser:
    """Options of the measurement."""
    parser = argparse.ArgumentParser(prog="python -m course.lab.decoder_memory", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="measurement file to write (e.g. lessons/lesson05/gpu_memory.json)")
    parser.add_argument("--check", type=Path, metavar="FILE", help="only validate an existing measurement file")
    parser.add_argument(
        "--preset", choices=sorted(PRESETS), default="1.3b", help="model size (default: 1.3b, Ψ ≈ 1.34·10⁹)"
    )
    parser.add_argument(
        "--device", default="cuda", help="torch device (default: cuda; cpu runs the tiny preset in tests)"
    )
    parser.add_argument(
        "--seq-lens",
        type=int,
        nargs=2,
        default=[1024, 2048],
        metavar="S",
        help="two sequence lengths (default: 1024 2048)",
    )
    parser.add_argument("--batch", type=int, default=4, help="sequences per step (default: 4)")
    parser.add_argument("--steps", type=int, default=3, help="training steps per sequence length (default: 3)")
    parser.add_argument("--lr", type=float, default=1e-4, help="Adam learning rate (default: 1e-4)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Measure and write the file (or validate one); errors are one located line and exit 2."""
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    try:
        if args.check:
            read_record(args.check)
            print(f"{args.check}: valid {SCHEMA_ID}")
            return 0
        if args.out is None:
            raise CourseError("--out FILE is required (or --check FILE)")
        if min(args.seq_lens) < 2 or args.batch < 1 or args.steps < 2:
            raise CourseError("--seq-lens ≥ 2, --batch ≥ 1 and --steps ≥ 2 (the first step warms the allocator up)")
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise CourseError("--device cuda: no GPU visible to torch here; run this on the GPU machine")
        record = measure(
            PRESETS[args.preset],
            device,
            seq_lens=args.seq_lens,
            batch=args.batch,
            steps=args.steps,
            lr=args.lr,
            seed=args.seed,
            argv=argv,
        )
        validated = write_record(record, args.out)
    except CourseError as exc:
        print(f"decoder_memory: {exc}", file=sys.stderr)
        return 2
    for name, row in record["static"].items():
        alloc = (
            ""
            if row["allocator_bytes"] is None
            else f", allocator {row['allocator_bytes']} B = {row['allocator_ratio']:.4f}"
        )
        print(f"{name:<10} {row['formula']:>4}: counted {row['counted_bytes']} B = {row['counted_ratio']:.4f}{alloc}")
    for seq in record["activations"]:
        print(
            f"s={seq['seq_len']:<5} b={seq['batch']} saved for backward {seq['saved_for_backward_bytes']} B, "
            f"activations (peak − static) {seq['activation_bytes']} B, losses {[round(x, 3) for x in seq['losses']]}"
        )
    print(f"wrote {args.out}" + ("" if validated else " (not validated here: jsonschema missing; run --check on it)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
