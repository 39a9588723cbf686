"""Run the whole nbgrader cycle on a lesson's demo class, in the demo course (demo/): release → submissions →
grade → feedback → export → report; or move demo students that an older `make` graded out of the real course."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root
from course.errors import CourseError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course demo`."""
    parser.add_argument(
        "assignment", nargs="?", help="the lesson whose demo class (demo/classes/<lesson>/) to run, e.g. lesson05"
    )
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)
    parser.add_argument("--unsafe", action="store_true", help="re-check without the bubblewrap sandbox")
    parser.add_argument(
        "--move-out",
        action="store_true",
        help="instead: take the demo students (those of demo/classes/*/students.yml) out of the "
        "real course's gradebook, veto records and folders, leaving everything else as it was",
    )


def run(args: argparse.Namespace) -> int:
    """Run the cycle (each step prints the command an instructor would type), or move the demo students out."""
    args.root = course_root(args.root, "demo")
    if args.move_out:
        from course.config import load_config
        from course.workflows.demo_move_out import move_out

        config = load_config(args.root)
        for line in move_out(args.root).lines(config.autograder_dir, config.demo_dir):
            print(f"course demo: {line}")
        return 0
    if args.assignment is None:
        raise CourseError("which lesson's demo class? e.g. `course demo lesson05` (or `course demo --move-out`)")
    from course.workflows.demo_cycle import run_cycle

    run_cycle(args.root, args.assignment, unsafe=args.unsafe)
    return 0
