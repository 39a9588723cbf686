"""Run the whole nbgrader cycle on a lesson's demo class: release → submissions → grade → feedback → export."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course demo`."""
    parser.add_argument("assignment", help="the lesson whose demo class (autograder/demo/<lesson>/) to run, "
                                           "e.g. lesson05")
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)
    parser.add_argument("--unsafe", action="store_true", help="re-check without the bubblewrap sandbox")


def run(args: argparse.Namespace) -> int:
    """Run the cycle; each step prints the command an instructor would type."""
    args.root = course_root(args.root, "demo")
    from course.workflows.demo_cycle import run_cycle

    run_cycle(args.root, args.assignment, unsafe=args.unsafe)
    return 0
