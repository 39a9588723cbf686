"""Rank pairs of one lesson's submissions by evidence of copying (shared rare wrong answers, wording, own code)."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import AUTOGRADER_HELP, ROOT_HELP, course_root, nbgrader_course


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course similarity`."""
    parser.add_argument("assignment", help="lesson / nbgrader assignment, e.g. lesson05")
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)
    parser.add_argument("--autograder", type=Path, default=None, help=AUTOGRADER_HELP)
    parser.add_argument("--top", type=int, default=20, help="how many pairs to print (all are written)")


def run(args: argparse.Namespace) -> int:
    """Write the similarity CSV and HTML and print the strongest pairs with their reasons."""
    args.root = course_root(args.root, "similarity")
    from course.workflows.similarity_report import write_similarity

    result = write_similarity(args.root, args.assignment, autograder=nbgrader_course(args.autograder, "similarity"))
    for i, pair in enumerate(result.pairs[: args.top], 1):
        print(f"  #{i} {pair.a} ↔ {pair.b}  score {pair.score:.2f}: {pair.reasons}")
    for path in (result.csv, result.html):
        print(f"  wrote {path}")
    print(
        f"course similarity: {len(result.pairs)} pairs among {result.students} submissions "
        "(evidence for a grader to look at, not a decision)"
    )
    return 0
