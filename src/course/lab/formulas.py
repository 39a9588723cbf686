"""Lesson 5's per-rank ZeRO formulas, exact (fractions) and with the flat-buffer padding the lab uses.

Memory is in bytes with BF16 parameters and gradients and k = 12 bytes of FP32 optimizer state
(master weight + Adam m + Adam v) per parameter:

    ZeRO-0  2Ψ + 2Ψ + 12Ψ          = 16Ψ
    ZeRO-1  2Ψ + 2Ψ + 12Ψ/N        = 4Ψ + 12Ψ/N
    ZeRO-2  2Ψ + (2Ψ + 12Ψ)/N      = 2Ψ + 14Ψ/N
    ZeRO-3  (2Ψ + 2Ψ + 12Ψ)/N      = 16Ψ/N

Communication is in elements received per rank per step (a ring collective sends as many as it receives),
with the bandwidth-optimal ring costs all-reduce 2(N−1)/N·n and all-gather / reduce-scatter (N−1)/N·n
(n = the full, un-sharded size); a broadcast delivers n to every rank but its source. These are costs the
lab computes from the collectives it records, not bytes it measures on a wire:

    ZeRO-0/1/2  2(N−1)/N·Ψ        ZeRO-3  3(N−1)/N·Ψ
"""

from __future__ import annotations

from fractions import Fraction

STAGES = (0, 1, 2, 3)
PARAM_BYTES = 2  # BF16 parameter
GRAD_BYTES = 2  # BF16 gradient
OPTIMIZER_BYTES = 12  # k: FP32 master + FP32 Adam m + FP32 Adam v

# Which of (parameters, gradients, optimizer states) each stage shards across the N ranks.
SHARDED = {
    0: (False, False, False),
    1: (False, False, True),
    2: (False, True, True),
    3: (True, True, True),
}

# Per-rank traffic of one ring collective on a full size n, as a multiple of (N−1)/N·n (the same on every rank).
TRAFFIC_MULTIPLE = {"all_reduce": 2, "all_gather": 1, "reduce_scatter": 1}


def check_stage(stage: int) -> int:
    """Reject a stage the lesson does not define, so a typo cannot silently pick a formula."""
    if stage not in STAGES:
        raise ValueError(f"ZeRO stage must be one of {STAGES}, got {stage!r}")
    return stage


def check_world(world: int) -> int:
    """Reject a data-parallel size below 1."""
    if not isinstance(world, int) or world < 1:
        raise ValueError(f"number of ranks N must be a positive integer, got {world!r}")
    return world


def padded_numel(numel: int, world: int) -> int:
    """A layer's flat buffer length: numel rounded up to a multiple of N so every rank owns an equal shard."""
    check_world(world)
    return -(-numel // world) * world


def padded_total(layer_numels: list[int], world: int) -> int:
    """Ψ_pad: the sum of the padded per-layer buffers (padding is per layer, not per model)."""
    return sum(padded_numel(n, world) for n in layer_numels)


def memory_breakdown(psi: int, world: int, stage: int) -> dict[str, Fraction]:
    """Bytes per rank of parameters, gradients and optimizer states for one stage (lesson §2)."""
    check_stage(stage)
    check_world(world)
    shard_params, shard_grads, shard_opt = SHARDED[stage]
    per_rank = Fraction(psi, world)
    return {
        "parameters": PARAM_BYTES * (per_rank if shard_params else psi),
        "gradients": GRAD_BYTES * (per_rank if shard_grads else psi),
        "optimizer": OPTIMIZER_BYTES * (per_rank if shard_opt else psi),
    }


def memory_bytes(psi: int, world: int, stage: int) -> Fraction:
    """Total static bytes per rank: 16Ψ, 4Ψ+12Ψ/N, 2Ψ+14Ψ/N or 16Ψ/N."""
    return sum(memory_breakdown(psi, world, stage).values(), Fraction(0))


def traffic_elements(kind: str, numel: int, world: int) -> Fraction:
    """Per-rank elements moved by one collective of full size numel on N ranks."""
    if kind not in TRAFFIC_MULTIPLE:
        raise ValueError(f"unknown collective {kind!r}; expected one of {sorted(TRAFFIC_MULTIPLE)}")
    check_world(world)
    return TRAFFIC_MULTIPLE[kind] * Fraction(world - 1, world) * numel


def broadcast_received(numel: int, rank: int, root: int) -> int:
    """Elements one rank receives from a broadcast of numel elements: all of them, unless it is the source.

    Not averaged over ranks: ZeroRedundancyOptimizer's owners hold unequal shares, so ranks receive unequal
    amounts (each gets every parameter it does not own).
    """
    return 0 if rank == root else numel


def comm_breakdown(psi: int, world: int, stage: int) -> dict[str, Fraction]:
    """Per-rank elements per step by collective (lesson §3): which collectives each stage issues over Ψ."""
    check_stage(stage)
    one_pass = Fraction(world - 1, world) * psi
    if stage == 0:
        return {"all_reduce": 2 * one_pass}
    if stage in (1, 2):
        return {"reduce_scatter": one_pass, "all_gather": one_pass}
    return {"all_gather": 2 * one_pass, "reduce_scatter": one_pass}


def comm_elements(psi: int, world: int, stage: int) -> Fraction:
    """Per-rank elements per step: 2(N−1)/N·Ψ for ZeRO-0/1/2, 3(N−1)/N·Ψ for ZeRO-3 (lesson §3)."""
    return sum(comm_breakdown(psi, world, stage).values(), Fraction(0))


def padding_excess(layer_numels: list[int], world: int) -> Fraction:
    """(Ψ_pad − Ψ)/Ψ: how far padded buffers sit above the lesson's formulas; at most L(N−1)/Ψ."""
    psi = sum(layer_numels)
    return Fraction(padded_total(layer_numels, world) - psi, psi)


def padding_bound(layer_numels: list[int], world: int) -> Fraction:
    """The stated tolerance L(N−1)/Ψ: each of L layers pads by at most N−1 elements."""
    return Fraction(len(layer_numels) * (world - 1), sum(layer_numels))


def json_number(x: Fraction | int) -> int | float:
    """An exact count as a JSON number: an integer when whole, else the nearest float."""
    x = Fraction(x)
    return int(x) if x.denominator == 1 else float(x)
