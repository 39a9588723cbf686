"""Rows flag any departure from the formulas: wrong bytes, wrong traffic, leaks, unsteady steps, differing finals."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

pytest.importorskip("torch")

from course.lab.formulas import comm_breakdown, memory_breakdown, padded_total  # noqa: E402
from course.lab.mlp import MlpSpec  # noqa: E402
from course.lab.report import final_parameters, manual_row  # noqa: E402

pytestmark = pytest.mark.torch
EVEN = MlpSpec("even", (4, 8))  # Ψ = 40
ODD = MlpSpec("odd", (4, 7))  # Ψ = 35, padded to 36 on 4 ranks


def _run(spec: MlpSpec, world: int, stage: int, steps: int = 2) -> dict:
    """What a correct rank of a hand-written stage reports: the formulas at Ψ_pad."""
    psi_pad = padded_total(spec.layer_numels, world)
    memory = {k: int(v) for k, v in memory_breakdown(psi_pad, world, stage).items()}
    snapshot = {**memory, "optimizer_scalars": 0, "held": 0, "gradient_tensors": len(spec.layers)}
    traffic = comm_breakdown(psi_pad, world, stage)
    comm = {k: {"calls": 1, "numel": int(v * world / (world - 1)), "traffic": v} for k, v in traffic.items()}
    return {
        "after_forward": [dict(snapshot)] * steps,
        "after_backward": [dict(snapshot)] * steps,
        "between_steps": [dict(snapshot)] * steps,
        "comm": [comm] * steps,
    }


def test_exact_measurements_give_ratio_one():
    row = manual_row(EVEN, 4, 2, [_run(EVEN, 4, 2) for _ in range(4)])
    assert row["ok"], row["problems"]
    assert (row["memory_bytes"]["ratio"], row["comm_elements"]["ratio"], row["tolerance"]) == (1.0, 1.0, 0.0)


def test_padded_case_passes_with_ratio_psi_pad_over_psi():
    row = manual_row(ODD, 4, 3, [_run(ODD, 4, 3) for _ in range(4)])
    assert row["ok"], row["problems"]
    assert row["memory_bytes"]["ratio"] == pytest.approx(36 / 35)
    assert row["tolerance"] == pytest.approx(3 / 35)


def test_extra_state_bytes_fail():
    runs = [_run(EVEN, 2, 1) for _ in range(2)]
    runs[1]["after_backward"] = [dict(s, gradients=s["gradients"] + 2) for s in runs[1]["after_backward"]]
    row = manual_row(EVEN, 2, 1, runs)
    assert not row["ok"]
    assert any(p.startswith("rank 1: state bytes") for p in row["problems"])
    assert any("memory_bytes ratio" in p for p in row["problems"])


def test_a_hand_written_stage_that_drops_state_between_steps_fails():
    """The formulas describe what a stage keeps from step to step: the lab checks that, not only the peak."""
    runs = [_run(EVEN, 2, 2) for _ in range(2)]
    runs[0]["between_steps"] = [dict(s, gradients=0, gradient_tensors=0) for s in runs[0]["between_steps"]]
    row = manual_row(EVEN, 2, 2, runs)
    assert not row["ok"] and any(p.startswith("rank 0: state kept between steps") for p in row["problems"])
    assert row["memory_bytes"]["between_steps"]["gradient_tensors"] == [0, len(EVEN.layers)]


def test_all_reduce_in_zero_1_fails():
    runs = [_run(EVEN, 2, 1) for _ in range(2)]
    for run in runs:
        run["comm"] = [{**c, "reduce_scatter": {"calls": 1, "numel": 40, "traffic": Fraction(40)}} for c in run["comm"]]
    row = manual_row(EVEN, 2, 1, runs)
    assert not row["ok"] and any("traffic" in p for p in row["problems"])


def test_leaked_gathered_parameters_fail():
    runs = [_run(EVEN, 2, 3) for _ in range(2)]
    runs[0]["after_forward"] = [dict(s, held=80) for s in runs[0]["after_forward"]]
    row = manual_row(EVEN, 2, 3, runs)
    assert any("transient buffers still alive (after forward 80 B" in p for p in row["problems"])


def test_unsteady_steps_are_reported():
    runs = [_run(EVEN, 2, 0) for _ in range(2)]
    runs[0]["comm"] = [runs[0]["comm"][0], {"all_reduce": {"calls": 2, "numel": 41, "traffic": Fraction(41)}}]
    row = manual_row(EVEN, 2, 0, runs)
    assert "rank 0: communication differs between measured steps (raise --warmup?)" in row["problems"]


def test_final_parameters_must_match_bit_for_bit():
    same = {"master": b"\x00\x01", "params": b"\x02", "sha256": "aa"}
    assert final_parameters(EVEN, 2, {s: copy.deepcopy(same) for s in range(4)})["identical"]
    differ = {s: copy.deepcopy(same) for s in range(4)}
    differ[3]["master"] = b"\x00\x02"
    assert not final_parameters(EVEN, 2, differ)["identical"]


def _on_gpu(run: dict, extra: int) -> dict:
    """The same rank as a GPU rank whose caching allocator shows `extra` bytes beyond the counted state."""
    for key in ("after_forward", "after_backward"):
        run[key] = [dict(s, allocator=s["parameters"] + s["gradients"] + s["optimizer"] + extra) for s in run[key]]
    return run


@pytest.mark.parametrize(("extra", "ok"), [(0, True), (511 * 5, True), (511 * 5 + 1, False), (-2, False)])
def test_gpu_allocator_reading_is_compared_with_the_counted_state(extra, ok):
    row = manual_row(EVEN, 2, 0, [_on_gpu(_run(EVEN, 2, 0), extra) for _ in range(2)])
    assert row["ok"] is ok, row["problems"]
    assert row["memory_bytes"]["allocator"]["ratio"] == pytest.approx((16 * 40 + extra) / (16 * 40))
    if not ok:
        assert "CUDA allocator holds" in row["problems"][0]


def test_cpu_rows_have_no_allocator_reading():
    assert "allocator" not in manual_row(EVEN, 2, 0, [_run(EVEN, 2, 0) for _ in range(2)])["memory_bytes"]
