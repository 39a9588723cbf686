"""Grade an assignment: sandboxed, parallel, resumable nbgrader autograde, then an out-of-process re-check."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course grade`."""
    parser.add_argument("assignment", help="assignment id, e.g. lesson05 (grades autograder/submitted/*/lesson05)")
    parser.add_argument("--autograder", type=Path, default=Path("autograder"),
                        help="the nbgrader course root (default: ./autograder)")
    parser.add_argument("--jobs", type=int, default=None, help="submissions graded at once (default: CPU cores)")
    # Each option overrides one GradingSandbox setting of the course's nbgrader_config.py for this run.
    parser.add_argument("--memory", type=int, default=None,
                        help="memory limit per submission in MiB (default: c.GradingSandbox.memory_bytes, 2048 MiB)")
    parser.add_argument("--cell-timeout", type=int, default=None,
                        help="seconds one cell may run (default: c.GradingSandbox.cell_timeout_s, 30)")
    parser.add_argument("--timeout", type=int, default=None,
                        help="seconds one submission may run (default: c.GradingSandbox.submission_timeout_s, 120)")
    parser.add_argument("--engine", choices=["auto", "shell", "kernel"], default=None,
                        help="how cells run (default: c.GradingSandbox.engine, auto)")
    parser.add_argument("--unsafe", action="store_true",
                        help="run students' code without the bubblewrap sandbox (only where none can be had, "
                             "and only for code you trust); the same as c.GradingSandbox.unsafe = True")


def run(args: argparse.Namespace) -> int:
    """Grade, then print the per-student summary."""
    from course.assignment.grade_run import grade_assignment

    given = {"memory_bytes": args.memory and args.memory * 2**20, "cell_timeout_s": args.cell_timeout,
             "submission_timeout_s": args.timeout, "engine": args.engine, "unsafe": args.unsafe or None}
    settings = {name: value for name, value in given.items() if value is not None}
    result = grade_assignment(args.autograder, args.assignment, jobs=args.jobs, settings=settings)
    print(summary(result))
    return 0


def summary(result) -> str:
    """A table of per-item points (kernel→re-check where they differ), then each flagged student's reasons."""
    items = list(result.code_points)
    width = max(len(s.student) for s in result.students)
    lines = [f"{'student':<{width}}  " + "  ".join(items) + "  code  flag"]
    notes = []
    for s in result.students:
        corrected = [c for c in s.changes if c.kernel_score is not None]
        kernel = {c.item: c.kernel_score for c in corrected}
        points = {item: result.code_points[item] if s.verdicts[item].passed else 0 for item in items}
        cells = [f"{kernel[i]:g}→{points[i]:g}" if i in kernel else f"{points[i]:g}" for i in items]
        lines.append(f"{s.student:<{width}}  " + "  ".join(f"{c:>{len(i)}}" for c, i in zip(cells, items))
                     + f"  {sum(points.values()):g}/{sum(result.code_points.values()):g}" + ("  FLAG" if s.flagged else ""))
        notes += [f"  {s.student}: {p}" for p in s.problems]
        notes += [f"  {s.student}: {n}" for n in s.notes]
        notes += [f"  {s.student}: {c.item}: kernel {c.kernel_score:g}, re-check {c.recheck_score:g} ({c.reason})"
                  for c in corrected]
    flagged = sum(s.flagged for s in result.students)
    lines += ["", f"{flagged} of {len(result.students)} submission(s) flagged for review:" if flagged else
              "no submission flagged", *notes, f"report: {result.report}"]
    limits = sorted({s.memory_limit for s in result.students if s.memory_limit})
    lines += [f"memory limit: {limit}" for limit in limits]
    stats = result.stats
    if stats:
        lines.append(f"graded {stats['students']} ({stats['skipped']} already graded, skipped) with {stats['jobs']} "
                     f"worker(s) in {stats['wall_s']:.1f} s wall; time spent: sandboxed runs {stats['sandbox_s']:.1f} s "
                     f"(on workers), nbgrader steps {stats['nbgrader_s']:.1f} s, gradebook writes {stats['gradebook_s']:.1f} s")
    return "\n".join(lines)
