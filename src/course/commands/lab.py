"""Measure ZeRO-0/1/2/3 memory and communication on torch.distributed ranks and write the lesson's 实测 data."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from course.errors import CourseError, ToolMissing

DEFAULT_OUT = Path("assets/lab/zero_measured.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course lab`."""
    parser.add_argument(
        "--ranks",
        type=int,
        nargs="+",
        metavar="N",
        help="data-parallel sizes to run (default: 2 4; 8 and 16 need the cores)",
    )
    parser.add_argument(
        "--torchrun",
        action="store_true",
        help="be one rank started by `torchrun --standalone --nproc-per-node=N -m course lab --torchrun` "
        "(N from torchrun; NCCL with a GPU per rank, else gloo; rank 0 writes --out)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"report file (default: {DEFAULT_OUT} of the course the current folder is in)",
    )
    parser.add_argument("--steps", type=int, default=4, help="training steps per run, warm-up included (default: 4)")
    parser.add_argument("--warmup", type=int, default=2, help="first steps left out of the measurement (default: 2)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one N's ranks (default: 120)")


def run(args: argparse.Namespace) -> int:
    """Run the lab; exit 0 only if every ratio and every final-parameter comparison checks out."""
    try:
        from course.lab.run_lab import DEFAULT_RANKS, run_lab
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        raise ToolMissing(
            "the lab needs torch: pip install '.[lab]' (torch>=2.4; `make` pins torch==2.13.0, the CPU wheel)"
        ) from exc
    if args.out is None:
        from course.config import find_course

        args.out = (find_course(Path.cwd()) or Path.cwd()) / DEFAULT_OUT
    options = {"out": args.out, "steps": args.steps, "warmup": args.warmup, "timeout": args.timeout}
    if args.torchrun:
        if args.ranks:
            raise CourseError("--ranks: under torchrun the number of ranks is torchrun's --nproc-per-node (WORLD_SIZE)")
        from course.lab.torchrun_rank import run_torchrun_rank

        report = run_torchrun_rank(**options)
        # Not rank 0: rank 0 reports for everyone.
        _exit_as_a_rank(0 if report is None else _print_report(report, args.out))
    return _print_report(run_lab(ranks=tuple(args.ranks or DEFAULT_RANKS), **options), args.out)


def _print_report(report: dict, out: Path) -> int:
    """Print the summary and the verdict; 0 only if every check passed."""
    from course.lab.run_lab import summary_lines

    for line in summary_lines(report):
        print(line)
    failed = [c for c in report["checks"] if not c["ok"]]
    verdict = "all checks passed" if not failed else f"{len(failed)} check(s) FAILED"
    print(
        f"wrote {out} ({report['backend']}, {report['launcher']}, torch "
        f"{report['torch']}, {report['wall_seconds']} s): {verdict}"
    )
    return 0 if not failed else 1


def _exit_as_a_rank(code: int) -> None:
    """Leave as the lab's own ranks do (multiprocessing ends them with os._exit): gloo's threads, torn down by the
    interpreter's exit, can abort a rank whose work is done and its group destroyed (SIGABRT, seen under load)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
