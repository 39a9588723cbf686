"""Commit the built student and answer sites to the git branches `student` and `answer`."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root
from course.workflows.publish import publish_variants


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course publish`."""
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)
    parser.add_argument("--message", help="commit message (default: names the source commit)")


def run(args: argparse.Namespace) -> int:
    """Publish and say what each branch now points at."""
    args.root = course_root(args.root, "publish")
    for result in publish_variants(args.root, message=args.message):
        state = "updated" if result.changed else "unchanged"
        print(f"  {result.branch}: {result.commit[:10]} ({state})")
    return 0
