"""The lab's exact per-rank formulas agree with lesson 5 and its reference solution."""

from __future__ import annotations

from fractions import Fraction

import pytest

from course.lab import formulas
from solutions.lesson05 import zero_communication_volume, zero_memory_per_gpu

CASES = [(psi, n) for psi in (98_880, 94_813, 7_000_000_000) for n in (1, 2, 4, 8, 64)]


@pytest.mark.parametrize(("psi", "world"), CASES)
@pytest.mark.parametrize("stage", formulas.STAGES)
def test_memory_matches_reference_solution(psi, world, stage):
    assert formulas.memory_bytes(psi, world, stage) == pytest.approx(zero_memory_per_gpu(psi, world, stage), rel=1e-12)


@pytest.mark.parametrize(("psi", "world"), [c for c in CASES if c[1] > 1])
@pytest.mark.parametrize("stage", formulas.STAGES)
def test_comm_is_reference_volume_times_ring_factor(psi, world, stage):
    exact = formulas.comm_elements(psi, world, stage)
    assert exact == Fraction(world - 1, world) * zero_communication_volume(psi, stage)


def test_lesson_numbers_for_7b_on_8_gpus():
    psi = 7_000_000_000
    gb = [float(formulas.memory_bytes(psi, 8, s)) / 1e9 for s in formulas.STAGES]
    assert gb == [112.0, 38.5, 26.25, 14.0]


@pytest.mark.parametrize("stage", formulas.STAGES)
def test_breakdown_sums_to_total_and_shards_the_right_state(stage):
    parts = formulas.memory_breakdown(1000, 4, stage)
    assert sum(parts.values()) == formulas.memory_bytes(1000, 4, stage)
    sharded = formulas.SHARDED[stage]
    full = {"parameters": 2000, "gradients": 2000, "optimizer": 12000}
    for (name, value), is_sharded in zip(parts.items(), sharded):
        assert value == (Fraction(full[name], 4) if is_sharded else full[name])


def test_comm_breakdown_names_the_collectives_of_section_3():
    ring = Fraction(3, 4) * 100
    assert formulas.comm_breakdown(100, 4, 0) == {"all_reduce": 2 * ring}
    assert formulas.comm_breakdown(100, 4, 2) == {"reduce_scatter": ring, "all_gather": ring}
    assert formulas.comm_breakdown(100, 4, 3) == {"all_gather": 2 * ring, "reduce_scatter": ring}


def test_traffic_rules():
    assert formulas.traffic_elements("all_reduce", 400, 4) == 600
    assert formulas.traffic_elements("all_gather", 400, 4) == 300
    assert formulas.traffic_elements("reduce_scatter", 400, 4) == 300
    with pytest.raises(ValueError, match="unknown collective 'gather'"):
        formulas.traffic_elements("gather", 400, 4)
    with pytest.raises(ValueError, match="unknown collective 'broadcast'"):
        formulas.traffic_elements("broadcast", 400, 4)  # not the same on every rank: broadcast_received
    assert [formulas.broadcast_received(400, rank, root=1) for rank in range(4)] == [400, 0, 400, 400]


@pytest.mark.parametrize("layers", [[16_575, 65_024, 16_065], [7], [16_250, 62_750, 15_813]])
@pytest.mark.parametrize("world", [2, 3, 4, 8])
def test_padding_stays_within_stated_bound(layers, world):
    total = formulas.padded_total(layers, world)
    assert total % world == 0
    assert all(formulas.padded_numel(n, world) - n < world for n in layers)
    assert 0 <= formulas.padding_excess(layers, world) <= formulas.padding_bound(layers, world)


def test_no_padding_when_every_layer_divides():
    assert formulas.padding_excess([16_640, 65_792, 16_448], 4) == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: formulas.memory_bytes(10, 2, 4), "ZeRO stage must be one of"),
        (lambda: formulas.memory_bytes(10, 0, 1), "number of ranks N must be a positive integer"),
    ],
)
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
