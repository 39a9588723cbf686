"""Take in a submission handed to the instructors as files, recording when it was received (nbgrader's
timestamp.txt)."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course hand-in`."""
    parser.add_argument("assignment", help="the lesson, e.g. lesson05")
    parser.add_argument("student", help="the student's id (their folder under submitted/)")
    parser.add_argument("files", nargs="+", type=Path, help="what they handed in, e.g. lesson05.ipynb")
    parser.add_argument(
        "--received",
        default=None,
        help="when it was received, with its UTC offset, e.g. 2026-12-01T17:59+08:00 (default: now)",
    )
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)


def run(args: argparse.Namespace) -> int:
    """Copy the files into submitted/STUDENT/ASSIGNMENT/ with timestamp.txt, and say so."""
    from course.config import load_config
    from course.workflows.hand_in import hand_in, received_at

    root = course_root(args.root, "hand-in")
    autograder = root / load_config(root).autograder_dir
    done = hand_in(autograder, args.assignment, args.student, args.files, received_at(args.received))
    print(
        f"course hand-in: {', '.join(done.files)} → {done.folder.relative_to(root)}/, received "
        f"{done.received:%Y-%m-%d %H:%M:%S} UTC (timestamp.txt: what late rules and feedback read)"
    )
    return 0
