"""Lesson 5's exercise checks: per-GPU memory of ZeRO-0..3 and per-step communication volume.

Expected values come from the lesson's formulas (course.lab.formulas), not from the reference solution, so
the build's "reference scores 4/4" also checks the solution against the lesson. Visible checks use the
lesson's own numbers (the 7B model, N_d = 1/8/64); hidden ones use Ψ not divisible by dp and other k.
"""

from __future__ import annotations

from fractions import Fraction

from course.assignment.spec import AssignmentSpec, Call, Check
from course.lab.formulas import GRAD_BYTES, PARAM_BYTES, SHARDED, comm_elements

MEMORY = "zero_memory_per_gpu"
COMM = "zero_communication_volume"
SEED_PSI = 7_000_000_000
DEFAULT_K = 12
ACCUM_BYTES = 4  # an FP32 gradient accumulation buffer
SHARDING = (1, 2, 3)
HIDDEN_CASES = ((1_000_003, 3, 12), (1_000_003, 7, 16), (999_983, 12, 8))  # (Ψ, dp, k)
HIDDEN_COMM_PSI = (1_000_003, 999_983, 123_457)


def memory(psi: int, dp: int, stage: int, k: int = DEFAULT_K, accum: bool = False) -> Fraction:
    """Bytes per GPU: parameters, gradients, k bytes of optimizer state, plus the FP32 buffer (sharded like gradients)."""
    shard_params, shard_grads, shard_opt = SHARDED[stage]

    def part(nbytes: int, sharded: bool) -> Fraction:
        return Fraction(nbytes * psi, dp if sharded else 1)

    total = part(PARAM_BYTES, shard_params) + part(GRAD_BYTES, shard_grads) + part(k, shard_opt)
    return total + (part(ACCUM_BYTES, shard_grads) if accum else 0)


def communication(psi: int, stage: int) -> Fraction:
    """Values per GPU per step as the exercise counts them: the lab's ring volume without its (N−1)/N factor."""
    world = 2
    return comm_elements(psi, world, stage) / Fraction(world - 1, world)


def memory_call(psi: int, dp: int, stage: int, k: int = DEFAULT_K, accum: bool = False) -> Call:
    """zero_memory_per_gpu(Ψ, dp, stage[, k=…][, fp32_grad_accum=True])."""
    kwargs = (("k", k),) if k != DEFAULT_K else ()
    return Call(MEMORY, (psi, dp, stage), kwargs + ((("fp32_grad_accum", True),) if accum else ()))


def formulas(hidden: bool) -> list[Check]:
    """Stages 1–3 without FP32 accumulation equal their formulas."""
    cases = HIDDEN_CASES if hidden else [(SEED_PSI, dp, DEFAULT_K) for dp in (8, 64)]
    return [Check("equals", (memory_call(psi, dp, s, k),), memory(psi, dp, s, k), hidden)
            for psi, dp, k in cases for s in SHARDING]


def fp32_accum(hidden: bool) -> list[Check]:
    """With accumulation minus without is 4Ψ (stages 0–1) or 4Ψ/dp (stages 2–3), whatever the base formula."""
    cases = HIDDEN_CASES if hidden else [(SEED_PSI, 8, DEFAULT_K)]
    return [Check("difference", (memory_call(psi, dp, s, k, accum=True), memory_call(psi, dp, s, k)),
                  memory(psi, dp, s, k, accum=True) - memory(psi, dp, s, k), hidden)
            for psi, dp, k in cases for s in (0, *SHARDING)]


def comm_volume(hidden: bool) -> list[Check]:
    """2Ψ for stages 1–2, 3Ψ for stage 3 (stage 0 is given)."""
    sizes = HIDDEN_COMM_PSI if hidden else (SEED_PSI,)
    return [Check("equals", (Call(COMM, (psi, s)),), communication(psi, s), hidden) for psi in sizes for s in SHARDING]


def dp1_cross_check(hidden: bool) -> list[Check]:
    """At dp = 1 stages 1–3 equal ZeRO-0's (4 + k)Ψ; with accumulation they equal each other."""
    equal_cases = [(psi, k) for psi, _, k in HIDDEN_CASES[1:]] if hidden else [(SEED_PSI, DEFAULT_K)]
    agree_cases = equal_cases if hidden else [(1_000_000, DEFAULT_K)]  # the lesson's own dp=1 assert uses Ψ = 10⁶
    equal = [Check("equals", (memory_call(psi, 1, s, k),), memory(psi, 1, 0, k), hidden)
             for psi, k in equal_cases for s in SHARDING]
    agree = [Check("same", tuple(memory_call(psi, 1, s, k, accum=True) for s in SHARDING), None, hidden)
             for psi, k in agree_cases]
    return equal + agree


def _item(make) -> tuple[Check, ...]:
    """Visible checks first, then hidden ones."""
    return tuple(make(False) + make(True))


SPEC = AssignmentSpec(
    lesson="lesson05",
    exercise="ex-zero-memory",
    items={
        "formulas": _item(formulas),
        "fp32-accum": _item(fp32_accum),
        "comm-volume": _item(comm_volume),
        "dp1-cross-check": _item(dp1_cross_check),
    },
)
