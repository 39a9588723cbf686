"""The lab end to end: for each N, run the ranks, compare with the formulas, write zero_measured.json."""

from __future__ import annotations

import time
from pathlib import Path

from course.errors import CourseError
from course.lab.count_comm import preload
from course.lab.launch import Backend, choose_backend, run_ranks
from course.lab.measure_steps import SAMPLE_POINTS
from course.lab.mlp import MlpSpec
from course.lab.pytorch_refs import REFERENCES
from course.lab.rank_worker import rank_worker
from course.lab.report import evaluate
from course.lab.report_file import SCHEMA_ID, write_report

# Every layer of MAIN has a multiple of 16 parameters (fan_out is 64 or 256): no padding for N | 16.
MAIN = MlpSpec("main", (64, 256, 256, 64))
# Ψ = 94 813 is odd and no layer is a multiple of 4, so every N pads (N = 2: 1 element, N = 4: 7).
PADDED = MlpSpec("padded", (64, 250, 250, 63))
SPECS = [MAIN, PADDED]
ALLOWED_RANKS = (2, 4, 8, 16)
DEFAULT_RANKS = (2, 4)
# DDP rebuilds its buckets (two extra broadcasts) at the start of the second step: measure from the third.
DEFAULT_STEPS, DEFAULT_WARMUP = 4, 2


def check_options(ranks: tuple[int, ...], steps: int, warmup: int) -> None:
    """Refuse options the lab cannot measure meaningfully, naming the option and what it accepts."""
    if not ranks or len(set(ranks)) != len(ranks):
        raise CourseError(f"--ranks: give one or more distinct values, got {list(ranks)}")
    for world in ranks:
        if world not in ALLOWED_RANKS:
            raise CourseError(
                f"--ranks {world}: N must be one of {ALLOWED_RANKS} (N ≥ 2, and N must divide the main MLP's "
                f"widths {MAIN.dims} so that case needs no padding)"
            )
    if warmup < 0 or steps <= warmup:
        raise CourseError(
            f"--steps {steps} --warmup {warmup}: need steps > warmup ≥ 0 so at least one step is measured"
        )


def checks_from(rows: list[dict], finals: list[dict]) -> list[dict]:
    """One pass/fail line per row and per final-parameter comparison."""
    checks = [
        {
            "name": f"N={r['ranks']} {r['model']} {r['label']}",
            "ok": r["ok"],
            "detail": "; ".join(r["problems"])
            or f"memory ratio {r['memory_bytes']['ratio']:.6f}, communication ratio {r['comm_elements']['ratio']:.6f}",
        }
        for r in rows
    ]
    checks += [
        {
            "name": f"N={f['ranks']} {f['model']} final parameters of ZeRO-0..3",
            "ok": f["identical"],
            "detail": "bit-identical" if f["identical"] else f"differ: {f['sha256']}",
        }
        for f in finals
    ]
    return checks


def lab_payload(*, steps: int, warmup: int, seed: int, lr: float) -> dict:
    """What every rank measures: the hand-written stages on both MLPs, then PyTorch's references."""
    return {"specs": SPECS, "references": list(REFERENCES), "steps": steps, "warmup": warmup, "seed": seed, "lr": lr}


def build_report(
    per_world: dict[int, list[dict]], *, backend: Backend, launcher: str, steps: int, warmup: int, started: float
) -> dict:
    """Rows, final-parameter comparisons and checks for every N from the ranks' raw measurements."""
    rows, finals = [], []
    for world, per_rank in per_world.items():
        world_rows, world_finals = evaluate(SPECS, world, per_rank)
        rows += world_rows
        finals += world_finals
    checks = checks_from(rows, finals)
    return {
        "schema": SCHEMA_ID,
        "torch": _torch_version(),
        "backend": backend.name,
        "launcher": launcher,
        "steps": steps,
        "warmup": warmup,
        "sample_points": SAMPLE_POINTS,
        "models": {s.name: {"dims": list(s.dims), "layer_numels": s.layer_numels, "psi": s.psi} for s in SPECS},
        "rows": rows,
        "final_parameters": finals,
        "checks": checks,
        "ok": all(c["ok"] for c in checks),
        "wall_seconds": round(time.perf_counter() - started, 2),
    }


def run_lab(
    *,
    out: Path,
    ranks: tuple[int, ...] = DEFAULT_RANKS,
    steps: int = DEFAULT_STEPS,
    warmup: int = DEFAULT_WARMUP,
    seed: int = 0,
    lr: float = 1e-3,
    timeout: float = 120.0,
) -> dict:
    """Measure ZeRO-0..3 and the PyTorch references for every N on ranks started here, write the report to `out`."""
    ranks = tuple(ranks)
    check_options(ranks, steps, warmup)
    started = time.perf_counter()
    backend = choose_backend(max(ranks))
    if backend.start_method == "fork":
        preload()
    payload = lab_payload(steps=steps, warmup=warmup, seed=seed, lr=lr)
    per_world = {
        world: run_ranks(rank_worker, world=world, backend=backend, timeout=timeout, payload=payload) for world in ranks
    }
    report = build_report(per_world, backend=backend, launcher="course", steps=steps, warmup=warmup, started=started)
    write_report(Path(out), report)
    return report


def summary_lines(report: dict) -> list[str]:
    """One line per row: measured / formula for memory and communication, and whether its checks passed."""
    lines = []
    for r in report["rows"]:
        mem, comm = r["memory_bytes"], r["comm_elements"]
        padding = (
            f"   (padded to Ψ_pad={r['psi_padded']}: ratio = Ψ_pad/Ψ, tolerance +{r['tolerance']:.6f})"
            if r["tolerance"]
            else ""
        )
        lines.append(
            f"N={r['ranks']} {r['model']:<6} {r['label']:<34} vs ZeRO-{r['stage']}  "
            f"memory {mem['measured']:>9} / {mem['formula']:>12.1f} B = {mem['ratio']:.3f}   "
            f"comm {comm['measured']:>9} / {comm['formula']:>10.1f} el = {comm['ratio']:.3f}   "
            f"{'ok' if r['ok'] else 'FAIL'}" + padding
        )
    lines += [f"{c['name']}: {c['detail']}" for c in report["checks"] if "final parameters" in c["name"] or not c["ok"]]
    return lines


def _torch_version() -> str:
    """The torch version the measurements were taken with."""
    import torch

    return torch.__version__
