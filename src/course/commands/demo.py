"""Run the whole nbgrader cycle on the demo class: release → submissions → grade → feedback → export."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course demo`."""
    parser.add_argument("assignment", nargs="?", default="lesson05", choices=["lesson05"],
                        help="the assignment whose demo class (autograder/demo/) to run")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="project root (default: current folder)")
    parser.add_argument("--unsafe", action="store_true", help="re-check without the bubblewrap sandbox")


def run(args: argparse.Namespace) -> int:
    """Run the cycle; each step prints the command an instructor would type."""
    from course.assignment.demo_cycle import run_cycle

    run_cycle(args.root, unsafe=args.unsafe)
    return 0
