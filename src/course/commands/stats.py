"""Item analysis of a graded lesson: per item facility, discrimination and alpha, the flags, and the misconceptions
to reteach first (reports/lessonNN-items.csv and -items.json)."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course stats`."""
    parser.add_argument("assignment", help="lesson / nbgrader assignment, e.g. lesson05")
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)


def run(args: argparse.Namespace) -> int:
    """Write the item reports and print the test's figures and what to look at first."""
    root = course_root(args.root, "stats")
    from course.grading.item_render import write_item_reports

    result = write_item_reports(root, args.assignment)
    for path in (result.csv, result.json):
        print(f"  wrote {path}")
    a = result.analysis
    alpha = "—" if a.test.alpha is None else f"{a.test.alpha:.3f}"
    print(
        f"course stats: {a.test.n} graded submissions, alpha {alpha}"
        + (" (fewer than 10 students: unreliable)" if a.unreliable else "")
    )
    for row in a.rows:
        flags = [f for f in row.flags if f.code != "unreliable"]
        if flags and row.kind in ("code", "question"):
            print(f"  {row.kind} {row.item}: " + "; ".join(f.rule for f in flags))
    for m in a.misconceptions[:3]:
        print(f"  reteach: {m.name} ({m.students} students)")
    return 0
