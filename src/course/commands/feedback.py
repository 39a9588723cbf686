"""Make and release every student's feedback (nbgrader generate_feedback, release_feedback) and say who got it."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course feedback`."""
    parser.add_argument("assignment", help="the lesson, e.g. lesson05")
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)


def run(args: argparse.Namespace) -> int:
    """Release the feedback; print who got it and who did not; exit 1 when anyone got none."""
    from course.config import load_config
    from course.workflows.give_feedback import give_feedback

    root = course_root(args.root, "feedback")
    done = give_feedback(root / load_config(root).autograder_dir, args.assignment)
    for line in done.lines:
        print(f"course {line}")
    return 0 if done.complete else 1
