"""Turn what the ranks measured into report rows: measured vs the lesson's formulas, ratios, and checks.

Hand-written stages must match the formulas exactly when every layer's size is a multiple of N. With
padding, each stage matches the same formula evaluated at Ψ_pad exactly, and its ratio to the lesson's
formula (at Ψ) is Ψ_pad/Ψ, within the stated tolerance L(N−1)/Ψ. PyTorch's references are checked
against the per-rank model the lesson uses to explain them (pytorch_refs.expected_model).
"""

from __future__ import annotations

from fractions import Fraction

from course.lab.count_comm import per_step_summary, total_traffic
from course.lab.formulas import (
    comm_breakdown,
    comm_elements,
    json_number,
    memory_breakdown,
    memory_bytes,
    padded_total,
    padding_bound,
)
from course.lab.measure_memory import allocator_problems
from course.lab.mlp import MlpSpec
from course.lab.pytorch_refs import REFERENCES, expected_model

STATE = ("parameters", "gradients", "optimizer")
REFERENCE_LABELS = {
    "fsdp2_reshard": "FSDP2 reshard_after_forward=True",
    "fsdp2_no_reshard": "FSDP2 reshard_after_forward=False",
    "zero_redundancy_optimizer": "DDP + ZeroRedundancyOptimizer",
}


def state_bytes(snapshot: dict[str, int]) -> int:
    """Parameters + gradients + optimizer states: the quantity the lesson's memory formulas describe."""
    return sum(snapshot[c] for c in STATE)


def _steady(per_step: list, what: str, rank: int, problems: list[str]):
    """The value every measured step agrees on (first step's value, plus a problem if they differ)."""
    if any(v != per_step[0] for v in per_step[1:]):
        problems.append(f"rank {rank}: {what} differs between measured steps (raise --warmup?)")
    return per_step[0]


def _per_rank(runs: list[dict], problems: list[str]) -> dict[str, list]:
    """Each rank's steady after-forward / after-backward memory and per-collective traffic."""
    return {
        "after_forward": [_steady(r["after_forward"], "memory after forward", i, problems) for i, r in enumerate(runs)],
        "after_backward": [
            _steady(r["after_backward"], "memory after backward", i, problems) for i, r in enumerate(runs)
        ],
        "between_steps": [_steady(r["between_steps"], "memory between steps", i, problems) for i, r in enumerate(runs)],
        "comm": [_steady(r["comm"], "communication", i, problems) for i, r in enumerate(runs)],
    }


def _exact_ratios(spec: MlpSpec, world: int, stage: int, seen: dict[str, list]) -> dict[str, Fraction]:
    """Fullest rank's measured value over the lesson's formula at Ψ, exactly, for memory and communication."""
    memory = max(state_bytes(s) for s in seen["after_backward"])
    traffic = max(total_traffic(c) for c in seen["comm"])
    return {
        "memory_bytes": memory / memory_bytes(spec.psi, world, stage),
        "comm_elements": traffic / comm_elements(spec.psi, world, stage),
    }


def _row_base(spec: MlpSpec, world: int, label: str, stage: int, seen: dict[str, list], problems: list[str]) -> dict:
    """Measured numbers, lesson formulas (at Ψ) and ratios shared by every kind of row."""
    psi = spec.psi
    memory = [state_bytes(s) for s in seen["after_backward"]]
    traffic = [total_traffic(c) for c in seen["comm"]]
    ratios = _exact_ratios(spec, world, stage, seen)
    row = {
        "ranks": world,
        "model": spec.name,
        "label": label,
        "stage": stage,
        "psi": psi,
        "psi_padded": padded_total(spec.layer_numels, world),
        "memory_bytes": {
            "per_rank": seen["after_backward"],
            "held_after_forward": [s["held"] for s in seen["after_forward"]],
            "between_steps": {
                "per_rank": [state_bytes(s) for s in seen["between_steps"]],
                "measured": max(state_bytes(s) for s in seen["between_steps"]),
                "gradient_tensors": [s["gradient_tensors"] for s in seen["between_steps"]],
            },
            "measured": max(memory),
            "min_rank": min(memory),
            "formula": json_number(memory_bytes(psi, world, stage)),
            "ratio": float(ratios["memory_bytes"]),
        },
        "comm_elements": {
            "per_rank": [json_number(t) for t in traffic],
            "by_collective": per_step_summary(seen["comm"][0]),
            "measured": json_number(max(traffic)),
            "formula": json_number(comm_elements(psi, world, stage)),
            "ratio": float(ratios["comm_elements"]),
        },
        "problems": problems,
    }
    if "allocator" in seen["after_backward"][0]:
        allocated = [s["allocator"] for s in seen["after_backward"]]
        formula = memory_bytes(psi, world, stage)
        row["memory_bytes"]["allocator"] = {
            "per_rank": allocated,
            "measured": max(allocated),
            "formula": json_number(formula),
            "ratio": float(max(allocated) / formula),
        }
    return row


def manual_row(spec: MlpSpec, world: int, stage: int, runs: list[dict]) -> dict:
    """A hand-written stage: exact match with the formulas at Ψ_pad, ratio to the lesson's within tolerance."""
    problems: list[str] = []
    seen = _per_rank(runs, problems)
    psi_pad = padded_total(spec.layer_numels, world)
    expect_mem = {k: json_number(v) for k, v in memory_breakdown(psi_pad, world, stage).items()}
    expect_comm = comm_breakdown(psi_pad, world, stage)
    for rank, (fwd, bwd, comm) in enumerate(zip(seen["after_forward"], seen["after_backward"], seen["comm"])):
        got_mem = {k: bwd[k] for k in STATE}
        if got_mem != expect_mem:
            problems.append(f"rank {rank}: state bytes {got_mem} != formula at Ψ_pad {expect_mem}")
        kept = {k: seen["between_steps"][rank][k] for k in STATE}
        if kept != got_mem:
            problems.append(f"rank {rank}: state kept between steps {kept} != state after backward {got_mem}")
        if fwd["held"] or bwd["held"]:
            problems.append(
                f"rank {rank}: transient buffers still alive (after "
                f"forward {fwd['held']} B, after backward {bwd['held']} B)"
            )
        got_comm = {k: e["traffic"] for k, e in comm.items()}
        if got_comm != expect_comm:
            shown = ({k: json_number(v) for k, v in d.items()} for d in (got_comm, expect_comm))
            problems.append("rank {}: traffic {} != formula at Ψ_pad {}".format(rank, *shown))
    if "allocator" in seen["after_backward"][0]:  # GPU ranks: each layer keeps 5 buffers (params, grads, master, m, v)
        counted = [state_bytes(s) for s in seen["after_backward"]]
        allocated = [s["allocator"] for s in seen["after_backward"]]
        problems += allocator_problems(counted, allocated, storages=5 * len(spec.layers))
    row = _row_base(spec, world, f"ZeRO-{stage}", stage, seen, problems)
    tolerance = padding_bound(spec.layer_numels, world) if psi_pad != spec.psi else Fraction(0)
    for what, ratio in _exact_ratios(spec, world, stage, seen).items():
        if not 1 <= ratio <= 1 + tolerance:
            problems.append(f"{what} ratio {float(ratio):.6f} outside [1, 1 + {float(tolerance):.6f}]")
    row.update(
        implementation="manual",
        expected={"memory_bytes": sum(expect_mem.values()), "comm_elements": json_number(sum(expect_comm.values()))},
        tolerance=float(tolerance),
        ok=not problems,
    )
    return row


def _explained(problems: list[str], what: str, measured, expected) -> None:
    """Note a measurement that departs from the explanation the lesson gives for a reference."""
    if measured != expected:
        problems.append(f"{what}: measured {json_number(measured)}, explanation says {json_number(expected)}")


def reference_row(spec: MlpSpec, world: int, name: str, runs: list[dict]) -> dict:
    """A PyTorch reference: ratios to its textbook stage, checked against the lesson's explanation of it."""
    problems: list[str] = []
    seen = _per_rank(runs, problems)
    stage = REFERENCES[name][0]
    model = expected_model(name, spec.psi, world)
    sharded_optimizer = "optimizer_sum_over_ranks" in model
    for rank, (fwd, bwd, kept) in enumerate(zip(seen["after_forward"], seen["after_backward"], seen["between_steps"])):
        for category in STATE:
            if category in model:
                _explained(problems, f"rank {rank} {category} bytes", bwd[category], model[category])
        _explained(problems, f"rank {rank} bytes held after forward", fwd["held"], model["held_after_forward"])
        expect_kept = (
            bwd["optimizer"] + model["kept_between_steps"] if sharded_optimizer else model["kept_between_steps"]
        )
        _explained(problems, f"rank {rank} state bytes kept between steps", state_bytes(kept), expect_kept)
        _explained(
            problems,
            f"rank {rank} gradient tensors kept between steps",
            kept["gradient_tensors"],
            bwd["gradient_tensors"] if model["gradients_kept"] else 0,
        )
    if sharded_optimizer:
        total = sum(b["optimizer"] for b in seen["after_backward"])
        _explained(problems, "optimizer bytes summed over ranks", total, model["optimizer_sum_over_ranks"])
        for rank, (bwd, comm) in enumerate(zip(seen["after_backward"], seen["comm"])):
            # Adam keeps m and v (FP32, 8 bytes) for the elements this rank owns; it receives every other one.
            owned = Fraction(bwd["optimizer"], 8)
            _explained(
                problems,
                f"rank {rank} elements per step",
                total_traffic(comm),
                model["comm_all_reduce"] + spec.psi - owned,
            )
        total = sum(total_traffic(c) for c in seen["comm"])
        _explained(problems, "elements per step summed over ranks", total, model["comm_sum_over_ranks"])
    else:
        for rank, comm in enumerate(seen["comm"]):
            _explained(problems, f"rank {rank} elements per step", total_traffic(comm), model["comm"])
    row = _row_base(spec, world, REFERENCE_LABELS[name], stage, seen, problems)
    row.update(
        implementation=name,
        expected={k: v if isinstance(v, bool) else json_number(v) for k, v in model.items()},
        tolerance=None,
        ok=not problems,
    )
    return row


def final_parameters(spec: MlpSpec, world: int, finals: dict[int, dict]) -> dict:
    """Whether all four stages ended with bit-identical FP32 master weights and BF16 parameters."""
    reference = finals[0]
    identical = all(f["master"] == reference["master"] and f["params"] == reference["params"] for f in finals.values())
    return {
        "ranks": world,
        "model": spec.name,
        "identical": identical,
        "sha256": {f"ZeRO-{stage}": f["sha256"] for stage, f in sorted(finals.items())},
    }


def evaluate(specs: list[MlpSpec], world: int, per_rank: list[dict]) -> tuple[list[dict], list[dict]]:
    """Rows (hand-written stages, then references) and final-parameter comparisons for one N."""
    by_name = {s.name: s for s in specs}
    rows, finals = [], []
    for index, entry in enumerate(per_rank[0]["manual"]):
        spec = by_name[entry["model"]]
        rows.append(manual_row(spec, world, entry["stage"], [r["manual"][index] for r in per_rank]))
    for spec in specs:
        stage_finals = {e["stage"]: e["final"] for e in per_rank[0]["manual"] if e["model"] == spec.name}
        finals.append(final_parameters(spec, world, stage_finals))
    for index, entry in enumerate(per_rank[0]["references"]):
        spec = by_name[entry["model"]]
        rows.append(reference_row(spec, world, entry["reference"], [r["references"][index] for r in per_rank]))
    return rows, finals
