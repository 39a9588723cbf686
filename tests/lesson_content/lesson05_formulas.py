"""Lesson 5's formulas as its exercise states them, built on course.lab.formulas (the lab measures these).

Tests use them to recompute every expected value in lessons/lesson05/checks.yml, so the checks come from the
lesson's formulas and not from the reference solution.
"""

from __future__ import annotations

from fractions import Fraction

from course.lab.formulas import GRAD_BYTES, PARAM_BYTES, SHARDED, comm_elements

DEFAULT_K = 12
ACCUM_BYTES = 4  # an FP32 gradient accumulation buffer


def memory_parts(
    psi: int, dp: int, stage: int, k: Fraction | int = DEFAULT_K, fp32_grad_accum: bool = False
) -> dict[str, Fraction]:
    """Bytes per GPU of parameters, gradients (with the FP32 accumulation buffer, sharded like them) and k bytes of
    optimizer state per parameter."""
    shard_params, shard_grads, shard_opt = SHARDED[stage]

    def part(nbytes, sharded: bool) -> Fraction:
        return Fraction(nbytes) * psi / (dp if sharded else 1)

    grads = part(GRAD_BYTES, shard_grads) + (part(ACCUM_BYTES, shard_grads) if fp32_grad_accum else 0)
    return {"params": part(PARAM_BYTES, shard_params), "grads": grads, "optimizer": part(k, shard_opt)}


def memory(psi: int, dp: int, stage: int, k: int = DEFAULT_K, fp32_grad_accum: bool = False) -> Fraction:
    """Bytes per GPU: parameters, gradients, k bytes of optimizer state, plus the FP32 buffer (sharded like
    gradients)."""
    return sum(memory_parts(psi, dp, stage, k, fp32_grad_accum).values(), Fraction(0))


def communication(psi: int, stage: int) -> Fraction:
    """Values per GPU per step as the exercise counts them: the lab's ring volume without its (N−1)/N factor."""
    world = 2
    return comm_elements(psi, world, stage) / Fraction(world - 1, world)


FUNCTIONS = {"zero_memory_per_gpu": memory, "zero_communication_volume": communication}


def expected(call) -> Fraction:
    """What the lesson's formulas say a call of the exercise's function returns."""
    return FUNCTIONS[call.func](*call.args, **dict(call.kwargs))
